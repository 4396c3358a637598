// The partitioner under mpiexec: the Hilbert curve over every rank's elements (a parallel sort).
#include "partition/distributed_util.hpp"

#include <limits>

#include "core/sorted_index.hpp"
#include "partition/partitioner.hpp"

namespace anabranch::pio {

using namespace dist;

std::vector<std::int32_t> partition_sfc_distributed(MPI_Comm comm, const serafin::Reader& mesh, MeshSlice& s,
                                                    int nparts, const std::vector<std::int32_t>& weights) {
  const int size = comm_size(comm), rank = comm_rank(comm);
  const std::int64_t n = s.count();
  if (nparts <= 1 || s.nelem == 0) return std::vector<std::int32_t>(static_cast<std::size_t>(n), 0);
  // Each element's key on the curve (its number in the low bits), with its weight if any.
  struct Weighted {
    std::uint64_t key;
    std::uint64_t weight;
  };
  // The bounding box of every node (all planes), each rank its share of the X and Y records,
  // read a chunk at a time.
  const auto& h = mesh.header();
  double box[4];  // -xmin, xmax, -ymin, ymax
  box[0] = box[1] = box[2] = box[3] = -std::numeric_limits<double>::infinity();
  collective(comm, [&] {
    const Slices nodes{h.npoin, size};
    constexpr std::int64_t kChunk = std::int64_t{1} << 18;
    std::vector<std::int32_t> chunk;
    for (std::int64_t at = nodes.first(rank); at < nodes.first(rank + 1); at += kChunk) {
      chunk.clear();
      for (std::int64_t i = at; i < std::min(at + kChunk, nodes.first(rank + 1)); ++i) chunk.push_back(static_cast<std::int32_t>(i));
      for (int c = 0; c < 2; ++c)
        for (double d : read_reals_of(mesh, (c ? mesh.y_offset() : mesh.x_offset()) + 4, chunk))
          box[2 * c] = std::max(box[2 * c], -d), box[2 * c + 1] = std::max(box[2 * c + 1], d);
    }
  });
  check_mpi(MPI_Allreduce(MPI_IN_PLACE, box, 4, MPI_DOUBLE, MPI_MAX, comm), "MPI_Allreduce");
  // The slice's IKLE a chunk of elements at a time.
  constexpr std::int64_t kElements = std::int64_t{1} << 16;
  const std::int64_t rounds = (n + kElements - 1) / kElements;
  const std::int32_t* rows = nullptr;
  std::size_t m = 0;  // the chunk's entries
  auto chunk_rows = [&](std::int64_t r) {  // round r's rows (rows, m); returns its first element
    const std::int64_t b = std::min(n, r * kElements), e = std::min(n, b + kElements);
    rows = s.ikle.data() + b * s.ndp;
    m = static_cast<std::size_t>((e - b) * s.ndp);
    return b;
  };
  // The slice's nodes (0-based), once each, increasing: the nodes of the rounds gathered,
  // sorted and merged in whenever they reach a quarter of those merged (so that merging
  // costs a few passes over them in all).
  std::vector<std::int32_t> used;
  {
    std::vector<std::uint32_t> pending;  // 1-based node numbers
    std::vector<std::int32_t> merged;
    for (std::int64_t r = 0; r < rounds; ++r) {
      chunk_rows(r);
      pending.insert(pending.end(), rows, rows + m);
      if (r + 1 < rounds && pending.size() < std::max<std::size_t>(std::size_t{1} << 20, used.size() / 4)) continue;
      radix_sort(pending, [](std::uint32_t v) { return std::uint64_t{v}; });
      pending.erase(std::unique(pending.begin(), pending.end()), pending.end());
      merged.resize(used.size() + pending.size());
      auto end = std::set_union(used.begin(), used.end(), pending.begin(), pending.end(), merged.begin(),
                                [](std::int64_t x, std::int64_t y) { return x < y; });
      merged.resize(static_cast<std::size_t>(end - merged.begin()));
      used.swap(merged);
      pending.clear();
    }
    for (auto& v : used) --v;
    used.shrink_to_fit();
  }
  std::vector<std::uint64_t> keys;
  std::vector<Weighted> weighted;
  (weights.empty() ? keys.resize(static_cast<std::size_t>(n)) : weighted.resize(static_cast<std::size_t>(n)));
  {
    // Their coordinates, each read once by one rank.
    const SharedRecord coords(comm, h.npoin, used);
      const Coordinates x = coords.coordinates(mesh, mesh.x_offset() + 4), y = coords.coordinates(mesh, mesh.y_offset() + 4);
    const SfcCurve curve(-box[0], box[1], -box[2], box[3], s.nelem);
    // Each element's centroid, its vertices summed in their order (the serial sum, to the
    // bit), each vertex's coordinates found by its place in `used`.
      const SortedIndex used_index(used);
    for (std::int64_t r = 0; r < rounds; ++r) {
      const std::int64_t b = chunk_rows(r);
      for (std::size_t j = 0; j < m; j += static_cast<std::size_t>(s.ndp)) {
        double cx = 0, cy = 0;
        for (int k = 0; k < s.ndp; ++k) {
          const auto a = static_cast<std::size_t>(used_index.find(rows[j + static_cast<std::size_t>(k)] - 1));
          cx += x[a];
          cy += y[a];
        }
        const std::int64_t i = b + static_cast<std::int64_t>(j / static_cast<std::size_t>(s.ndp));
        const std::uint64_t key = curve.key(cx / s.ndp, cy / s.ndp, s.first + i);
        if (weights.empty())
          keys[static_cast<std::size_t>(i)] = key;
        else
          weighted[static_cast<std::size_t>(i)] = {key, static_cast<std::uint64_t>(weights[static_cast<std::size_t>(i)])};
      }
    }
  }
  std::vector<std::int32_t>().swap(used);
  // The slice's IKLE is let go before the sort: the parts are written from the file's
  // (write_parts_distributed reads it again, a chunk at a time). Kept for the writer, it
  // saved 2% of the time at 2 ranks but made the writer's first step the peak from 8 ranks
  // on (6.66M elements, 16 ranks: 42 MiB a rank against 39, 409 MiB together against 369).
  std::vector<std::int32_t>().swap(s.ikle);
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
  // (element, part) back to the element's rank, in the keys' place (over the keys themselves
  // when unweighted).
  const std::uint64_t mask = SfcCurve(0, 0, 0, 0, s.nelem).element_mask();
  std::vector<std::uint64_t> answers;
  if (weights.empty()) {
    for (std::size_t i = 0; i < held; ++i)
      keys[i] = pair_word(static_cast<std::int64_t>(keys[i] & mask), sfc_part(before[0] + static_cast<std::int64_t>(i), s.nelem, nparts));
    answers.swap(keys);
  } else {
    answers.resize(held);
    double w = static_cast<double>(before[1]);
    for (std::size_t i = 0; i < held; ++i) {
      const std::int32_t p = sfc_weighted_part(w, static_cast<std::int32_t>(weighted[i].weight), static_cast<double>(total), nparts);
      w += static_cast<double>(weighted[i].weight);
      answers[i] = pair_word(static_cast<std::int64_t>(weighted[i].key & mask), p);
    }
    std::vector<Weighted>().swap(weighted);
  }
  if (size > 1) {
    const Slices slices{s.nelem, size};
    std::vector<int> counts;
    answers = by_destination(std::move(answers), size, [&](std::uint64_t a) { return slices.owner(id_of(a)); }, counts);
    answers = exchange(comm, answers, counts);
  }
  std::vector<std::int32_t> parts(static_cast<std::size_t>(n));
  for (auto a : answers) parts[static_cast<std::size_t>(id_of(a) - s.first)] = part_of(a);
  return parts;
}

}  // namespace anabranch::pio
