#include "io/ownership.hpp"

#include <algorithm>
#include <cstring>
#include <type_traits>
#include <numeric>
#include <string>

#include "core/byteorder.hpp"
#include "core/error.hpp"
#include "parallel/mpi_util.hpp"

namespace anabranch::pio {

Owned resolve_ownership(MPI_Comm comm, const std::int64_t* gids, std::int64_t n, std::int64_t npoin, bool highest) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  std::vector<std::int64_t> order(static_cast<std::size_t>(n));
  collective(comm, [&] {
    std::iota(order.begin(), order.end(), 0);
    std::sort(order.begin(), order.end(), [&](std::int64_t a, std::int64_t b) { return gids[a] < gids[b]; });
    for (std::int64_t i = 0; i < n; ++i) {
      const std::int64_t g = gids[order[static_cast<std::size_t>(i)]];
      if (g < 0 || g >= npoin)
        throw UsageError("global node id " + std::to_string(g + 1) + " (local " + std::to_string(order[static_cast<std::size_t>(i)] + 1) +
                         ") is outside 1.." + std::to_string(npoin));
      if (i > 0 && g == gids[order[static_cast<std::size_t>(i - 1)]])
        throw UsageError("global node id " + std::to_string(g + 1) + " is listed twice by one rank");
    }
  });
  const std::int64_t block = (npoin + size - 1) / size;
  auto home = [&](std::int64_t g) { return static_cast<int>(g / block); };

  // Send the sorted ids to their directory ranks.
  std::vector<int> scount(static_cast<std::size_t>(size), 0), rcount;
  for (std::int64_t i = 0; i < n; ++i) ++scount[static_cast<std::size_t>(home(gids[order[static_cast<std::size_t>(i)]]))];
  std::vector<std::int64_t> sorted(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) sorted[static_cast<std::size_t>(i)] = gids[order[static_cast<std::size_t>(i)]];
  const std::vector<std::int64_t> recv = exchange(comm, sorted, scount, &rcount);
  std::int64_t total = 0;
  const std::vector<int> sdisp = displacements(scount, total), rdisp = displacements(rcount, total);

  // Directory: the lowest (or highest) rank holding each node of the block.
  const std::int64_t lo = static_cast<std::int64_t>(rank) * block, hi = std::min(npoin, lo + block);
  const int nobody = highest ? -1 : size;
  std::vector<int> owner(static_cast<std::size_t>(std::max<std::int64_t>(0, hi - lo)), nobody);
  for (int r = 0; r < size; ++r)
    for (int i = rdisp[static_cast<std::size_t>(r)]; i < rdisp[static_cast<std::size_t>(r)] + rcount[static_cast<std::size_t>(r)]; ++i) {
      auto& o = owner[static_cast<std::size_t>(recv[static_cast<std::size_t>(i)] - lo)];
      o = highest ? std::max(o, r) : std::min(o, r);
    }
  collective(comm, [&] {
    for (std::size_t k = 0; k < owner.size(); ++k)
      if (owner[k] == nobody)
        throw UsageError("global node " + std::to_string(lo + static_cast<std::int64_t>(k) + 1) + " is held by no rank: every node of the mesh must be given");
  });
  std::vector<char> flags(recv.size()), mine(static_cast<std::size_t>(n));
  for (int r = 0; r < size; ++r)
    for (int i = rdisp[static_cast<std::size_t>(r)]; i < rdisp[static_cast<std::size_t>(r)] + rcount[static_cast<std::size_t>(r)]; ++i)
      flags[static_cast<std::size_t>(i)] = owner[static_cast<std::size_t>(recv[static_cast<std::size_t>(i)] - lo)] == r;
  MPI_Alltoallv(flags.data(), rcount.data(), rdisp.data(), MPI_CHAR, mine.data(), scount.data(), sdisp.data(), MPI_CHAR, comm);
  Owned out;
  for (std::int64_t i = 0; i < n; ++i)
    if (mine[static_cast<std::size_t>(i)]) {
      out.gid.push_back(sorted[static_cast<std::size_t>(i)]);
      out.local.push_back(order[static_cast<std::size_t>(i)]);
    }
  out.runs = runs_of(out.local);
  return out;
}

std::vector<std::int64_t> runs_of(const std::vector<std::int64_t>& local) {
  std::vector<std::int64_t> runs;
  for (std::size_t i = 0; i < local.size(); ++i)
    if (i == 0 || local[i] != local[i - 1] + 1) runs.push_back(static_cast<std::int64_t>(i));
  runs.push_back(static_cast<std::int64_t>(local.size()));
  return runs;
}

template <class R, class T>
void encode_owned(const T* in, const Owned& owned, std::int64_t first, std::int64_t count, bool swap, unsigned char* out) {
  using Word = std::conditional_t<sizeof(R) == 4, std::uint32_t, std::uint64_t>;
  constexpr std::int64_t kShort = 16;  // below this, a call costs more than the loop
  const std::int64_t* local = owned.local.data();
  const std::int64_t end = first + count;
  auto k = static_cast<std::size_t>(std::upper_bound(owned.runs.begin(), owned.runs.end(), first) - owned.runs.begin()) - 1;
  for (std::int64_t i = first; i < end; ++k) {
    const std::int64_t stop = std::min(end, owned.runs[k + 1]);
    if (stop - i >= kShort) {
      encode_words<R>(in + local[i], static_cast<std::size_t>(stop - i), swap, out);
      out += (stop - i) * static_cast<std::int64_t>(sizeof(R));
      i = stop;
      continue;
    }
    for (; i < stop; ++i, out += sizeof(R)) {
      const R r = static_cast<R>(in[local[i]]);
      Word w;
      std::memcpy(&w, &r, sizeof w);
      if (swap) w = bswap(w);
      std::memcpy(out, &w, sizeof w);
    }
  }
}

template void encode_owned<float, float>(const float*, const Owned&, std::int64_t, std::int64_t, bool, unsigned char*);
template void encode_owned<float, double>(const double*, const Owned&, std::int64_t, std::int64_t, bool, unsigned char*);
template void encode_owned<double, float>(const float*, const Owned&, std::int64_t, std::int64_t, bool, unsigned char*);
template void encode_owned<double, double>(const double*, const Owned&, std::int64_t, std::int64_t, bool, unsigned char*);

}  // namespace anabranch::pio
