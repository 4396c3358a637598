// Internal to the partitioner under mpiexec (partition_distributed.hpp), shared by its
// files: distributed_read.cpp (slices, shared records, the partition file, the quality),
// distributed_sfc.cpp (the Hilbert curve), distributed_ptscotch.cpp (PT-Scotch's graph),
// distributed_cases.cpp (control sections and friction zones on slices) and
// distributed_write.cpp (TELEMAC's per-part files).
#pragma once
#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/radix_sort.hpp"
#include "formats/partel_extras.hpp"
#include "parallel/mpi_util.hpp"
#include "partition/partition_distributed.hpp"

namespace anabranch::pio::dist {

// (element or node, part) in one word: the number in the high half, the part in the low one.
inline std::uint64_t pair_word(std::int64_t id, std::int64_t part) { return (static_cast<std::uint64_t>(id) << 32) | static_cast<std::uint64_t>(part); }
inline std::int64_t id_of(std::uint64_t w) { return static_cast<std::int64_t>(w >> 32); }
inline int part_of(std::uint64_t w) { return static_cast<int>(w & 0xffffffffu); }

inline int comm_rank(MPI_Comm comm) {
  int r = 0;
  MPI_Comm_rank(comm, &r);
  return r;
}
inline int comm_size(MPI_Comm comm) {
  int s = 1;
  MPI_Comm_size(comm, &s);
  return s;
}


// Groups items by destination (a stable counting sort); dest(item) in 0..size-1.
template <class T, class Dest>
std::vector<T> by_destination(std::vector<T>&& items, int size, Dest dest, std::vector<int>& counts) {
  counts.assign(static_cast<std::size_t>(size), 0);
  for (const auto& it : items) ++counts[static_cast<std::size_t>(dest(it))];
  std::vector<std::int64_t> at(static_cast<std::size_t>(size) + 1, 0);
  for (int d = 0; d < size; ++d) at[static_cast<std::size_t>(d) + 1] = at[static_cast<std::size_t>(d)] + counts[static_cast<std::size_t>(d)];
  std::vector<T> out(items.size());
  for (const auto& it : items) out[static_cast<std::size_t>(at[static_cast<std::size_t>(dest(it))]++)] = it;
  std::vector<T>().swap(items);
  return out;
}

// One element edge: its two nodes (the lower in the high half), the element, and (for the
// quality report) the element's part.
struct EdgeRecord {
  std::uint64_t key;
  std::uint64_t elem_part;  // element in the low 32 bits, part in the high ones
  std::int64_t elem() const { return static_cast<std::int64_t>(elem_part & 0xffffffffu); }
  std::int64_t part() const { return static_cast<std::int64_t>(elem_part >> 32); }
};


// Every pair of elements sharing an edge, handed to on_pair once. Inside the slice the
// pairs are found through the elements around each node; an edge no other element of the
// slice holds (the slice's rim, the mesh's boundary) is sent to the rank its key hashes to,
// where the records of an edge meet.
template <class OnPair>
void edge_pairs(MPI_Comm comm, const MeshSlice& s, const std::vector<std::int32_t>& parts, OnPair&& on_pair) {
  using Rec = EdgeRecord;
  const int size = comm_size(comm), ndp = s.ndp;
  const std::int64_t n = s.count();
  auto record = [&](std::int64_t i, int k) {
    auto a = static_cast<std::uint64_t>(s.ikle[static_cast<std::size_t>(i * ndp + k)]);
    auto b = static_cast<std::uint64_t>(s.ikle[static_cast<std::size_t>(i * ndp + (k + 1) % ndp)]);
    if (a > b) std::swap(a, b);
    const std::uint64_t part = parts.empty() ? 0 : static_cast<std::uint64_t>(parts[static_cast<std::size_t>(i)]);
    return Rec{(a << 32) | b, (part << 32) | static_cast<std::uint64_t>(s.first + i)};
  };
  // The slice's nodes numbered locally (one sort of (node, position) words: memory of the
  // slice's size, never of the mesh's), then its elements around each of them, increasing.
  std::vector<std::uint32_t> local(s.ikle.size());
  std::size_t nnodes = 0;
  {
    std::vector<std::uint64_t> keyed(s.ikle.size());
    for (std::size_t j = 0; j < keyed.size(); ++j) keyed[j] = (static_cast<std::uint64_t>(s.ikle[j]) << 32) | j;
    radix_sort(keyed);
    for (std::size_t j = 0; j < keyed.size(); ++j) {
      if (j > 0 && (keyed[j] >> 32) != (keyed[j - 1] >> 32)) ++nnodes;
      local[keyed[j] & 0xffffffffu] = static_cast<std::uint32_t>(nnodes);
    }
    if (!keyed.empty()) ++nnodes;
  }
  std::vector<std::uint32_t> around_at(nnodes + 1, 0), around(s.ikle.size());
  for (auto l : local) ++around_at[static_cast<std::size_t>(l) + 1];
  for (std::size_t c = 1; c < around_at.size(); ++c) around_at[c] += around_at[c - 1];
  {
    std::vector<std::uint32_t> next(around_at.begin(), around_at.end() - 1);
    for (std::size_t j = 0; j < s.ikle.size(); ++j)
      around[next[local[j]]++] = static_cast<std::uint32_t>(j / static_cast<std::size_t>(ndp));
  }
  std::vector<Rec> rim;
  for (std::int64_t i = 0; i < n; ++i)
    for (int k = 0; k < ndp; ++k) {
      const std::int32_t a = s.ikle[static_cast<std::size_t>(i * ndp + k)], b = s.ikle[static_cast<std::size_t>(i * ndp + (k + 1) % ndp)];
      const auto at = static_cast<std::size_t>(local[static_cast<std::size_t>(i * ndp + k)]);
      bool shared = false;
      for (std::uint32_t c = around_at[at]; c < around_at[at + 1]; ++c) {
        const std::int64_t j = around[c];
        if (j == i) continue;
        const std::int32_t* w = s.ikle.data() + j * ndp;
        for (int m = 0; m < ndp; ++m) {
          const std::int32_t x = w[m], y = w[(m + 1) % ndp];
          if ((x == a && y == b) || (x == b && y == a)) {
            shared = true;
            if (j > i) on_pair(record(i, k), record(j, m));
          }
        }
      }
      if (!shared) rim.push_back(record(i, k));
    }
  std::vector<std::uint32_t>().swap(around);
  std::vector<std::uint32_t>().swap(around_at);
  if (size == 1) return;
  std::vector<int> counts;
  auto dest = [size](const Rec& r) { return static_cast<int>((r.key * 0x9E3779B97F4A7C15ull >> 33) % static_cast<std::uint64_t>(size)); };
  rim = by_destination(std::move(rim), size, dest, counts);
  std::vector<Rec> got = exchange(comm, rim, counts);
  std::vector<Rec>().swap(rim);
  radix_sort(got, [](const Rec& r) { return r.key; });
  for (std::size_t i = 0; i < got.size();) {
    std::size_t j = i + 1;
    while (j < got.size() && got[j].key == got[i].key) ++j;
    for (std::size_t x = i; x < j; ++x)
      for (std::size_t y = x + 1; y < j; ++y) on_pair(got[x], got[y]);
    i = j;
  }
}

// Reads the reals of `nodes` (sorted, 0-based) from a NPOIN-real record at `offset` (after
// its marker), to doubles; the record is read in chunks from each wanted node on, up to
// the last (a contiguous range reads that range, no more).
std::vector<double> read_reals_of(const serafin::Reader& r, std::int64_t offset, const std::vector<std::int32_t>& nodes);

// Every rank's words, to every rank, in rank order.
std::vector<std::uint64_t> all_words(MPI_Comm comm, const std::vector<std::uint64_t>& mine);

// Sorts the items of every rank together by key (sample sort): on return each rank holds a
// run of the global order, rank 0 the first. The splitters come from samples spread over
// every rank's items, so the items are sorted once, after the exchange.
template <class T, class KeyOf>
void sample_sort(MPI_Comm comm, std::vector<T>& items, KeyOf key) {
  const int size = comm_size(comm);
  std::vector<T> sent;  // the radix sort's second array: the sent one, about the received one's size
  if (size > 1) {
    constexpr std::size_t kSamples = 64;  // per rank and splitter
    const std::size_t n = items.size(), picks = std::min(n, kSamples * static_cast<std::size_t>(size));
    std::vector<std::uint64_t> samples(picks);
    for (std::size_t k = 0; k < picks; ++k) samples[k] = key(items[k * n / picks]);
    std::vector<std::uint64_t> all = all_words(comm, samples);
    std::sort(all.begin(), all.end());
    std::vector<std::uint64_t> split;
    for (int k = 1; k < size && !all.empty(); ++k) split.push_back(all[all.size() * static_cast<std::size_t>(k) / static_cast<std::size_t>(size)]);
    auto dest = [&](const T& t) { return static_cast<int>(std::upper_bound(split.begin(), split.end(), key(t)) - split.begin()); };
    std::vector<int> counts;
    sent = by_destination(std::move(items), size, dest, counts);
    exchange_into(comm, sent, counts, items);
  }
  radix_sort(items, key, sent);
}


constexpr int kSolid = 2;  // LIHBOR code of a wall

// The IKLE rows [from, from + count) of a slice (its first `ndp` nodes each, 1-based, checked
// against NPOIN), read from the mesh into out: the slice's IKLE again, a part at a time.
void read_ikle_rows(const serafin::Reader& mesh, const MeshSlice& s, std::int64_t from, std::int64_t count, std::int32_t* out);

// distributed_cases.cpp
partel::SectionMesh sliced_mesh(MPI_Comm comm, const serafin::Reader& geo, const MeshSlice& s);
std::optional<std::vector<std::int64_t>> zones_by_shares(MPI_Comm comm, const std::string& path, std::int64_t npoin,
                                                         const std::vector<std::int32_t>& held);

}  // namespace anabranch::pio::dist
