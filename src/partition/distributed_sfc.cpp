// The partitioner under mpiexec: the Hilbert curve over every rank's elements (a parallel sort).
#include "partition/distributed_util.hpp"

#include <limits>

#include "partition/partitioner.hpp"

namespace anabranch::pio {

using namespace dist;

std::vector<std::int32_t> partition_sfc_distributed(MPI_Comm comm, const serafin::Reader& mesh, const MeshSlice& s,
                                                    int nparts, const std::vector<std::int32_t>& weights) {
  const int size = comm_size(comm), rank = comm_rank(comm);
  const std::int64_t n = s.count();
  std::vector<std::int32_t> parts(static_cast<std::size_t>(n), 0);
  if (nparts <= 1 || s.nelem == 0) return parts;
  // Each element's key on the curve (its number in the low bits), with its weight if any.
  struct Weighted {
    std::uint64_t key;
    std::uint64_t weight;
  };
  std::vector<std::uint64_t> keys;
  std::vector<Weighted> weighted;
  (weights.empty() ? keys.resize(static_cast<std::size_t>(n)) : weighted.resize(static_cast<std::size_t>(n)));
  // The bounding box of every node (all planes), each rank its share of the X and Y records.
  const auto& h = mesh.header();
  double box[4];  // -xmin, xmax, -ymin, ymax
  box[0] = box[1] = box[2] = box[3] = -std::numeric_limits<double>::infinity();
  collective(comm, [&] {
    const Slices nodes{h.npoin, size};
    std::vector<std::int32_t> mine;
    for (std::int64_t i = nodes.first(rank); i < nodes.first(rank + 1); ++i) mine.push_back(static_cast<std::int32_t>(i));
    for (int c = 0; c < 2; ++c) {
      const auto v = read_reals_of(mesh, (c ? mesh.y_offset() : mesh.x_offset()) + 4, mine);
      for (double d : v) box[2 * c] = std::max(box[2 * c], -d), box[2 * c + 1] = std::max(box[2 * c + 1], d);
    }
  });
  check_mpi(MPI_Allreduce(MPI_IN_PLACE, box, 4, MPI_DOUBLE, MPI_MAX, comm), "MPI_Allreduce");
  // The coordinates of the slice's nodes, each read once by one rank.
  std::vector<std::int32_t> used(s.ikle.begin(), s.ikle.end());  // the slice's nodes, once each, increasing
  for (auto& v : used) --v;
  std::sort(used.begin(), used.end());
  used.erase(std::unique(used.begin(), used.end()), used.end());
  const SharedRecord coords(comm, h.npoin, used);
  const auto x = coords.read(mesh, mesh.x_offset() + 4), y = coords.read(mesh, mesh.y_offset() + 4);
  const SfcCurve curve(-box[0], box[1], -box[2], box[3], s.nelem);
  for (std::int64_t i = 0; i < n; ++i) {
    double cx = 0, cy = 0;
    for (int k = 0; k < s.ndp; ++k) {
      const auto a = static_cast<std::size_t>(
          std::lower_bound(used.begin(), used.end(), s.ikle[static_cast<std::size_t>(i * s.ndp + k)] - 1) - used.begin());
      cx += x[a];
      cy += y[a];
    }
    const std::uint64_t key = curve.key(cx / s.ndp, cy / s.ndp, s.first + i);
    if (weights.empty())
      keys[static_cast<std::size_t>(i)] = key;
    else
      weighted[static_cast<std::size_t>(i)] = {key, static_cast<std::uint64_t>(weights[static_cast<std::size_t>(i)])};
  }
  if (weights.empty())
    sample_sort(comm, keys, [](std::uint64_t k) { return k; });
  else
    sample_sort(comm, weighted, [](const Weighted& w) { return w.key; });
  const std::size_t held = weights.empty() ? keys.size() : weighted.size();
  // Where this rank's keys start on the curve, in elements and in weight.
  std::int64_t mine[2] = {static_cast<std::int64_t>(held), 0}, before[2] = {0, 0}, total = 0;
  for (const auto& w : weighted) mine[1] += static_cast<std::int64_t>(w.weight);
  MPI_Exscan(mine, before, 2, MPI_INT64_T, MPI_SUM, comm);
  if (rank == 0) before[0] = before[1] = 0;  // MPI_Exscan leaves rank 0's undefined
  MPI_Allreduce(&mine[1], &total, 1, MPI_INT64_T, MPI_SUM, comm);
  // (element, part) back to the element's rank, in the keys' place.
  const std::uint64_t mask = SfcCurve(0, 0, 0, 0, s.nelem).element_mask();
  std::vector<std::uint64_t> answers(held);
  double w = static_cast<double>(before[1]);
  for (std::size_t i = 0; i < held; ++i) {
    std::int32_t p;
    if (weights.empty()) {
      p = sfc_part(before[0] + static_cast<std::int64_t>(i), s.nelem, nparts);
      answers[i] = pair_word(static_cast<std::int64_t>(keys[i] & mask), p);
    } else {
      p = sfc_weighted_part(w, static_cast<std::int32_t>(weighted[i].weight), static_cast<double>(total), nparts);
      w += static_cast<double>(weighted[i].weight);
      answers[i] = pair_word(static_cast<std::int64_t>(weighted[i].key & mask), p);
    }
  }
  std::vector<std::uint64_t>().swap(keys);
  std::vector<Weighted>().swap(weighted);
  if (size > 1) {
    const Slices slices{s.nelem, size};
    std::vector<int> counts;
    answers = by_destination(std::move(answers), size, [&](std::uint64_t a) { return slices.owner(id_of(a)); }, counts);
    answers = exchange(comm, answers, counts);
  }
  for (auto a : answers) parts[static_cast<std::size_t>(id_of(a) - s.first)] = part_of(a);
  return parts;
}

}  // namespace anabranch::pio
