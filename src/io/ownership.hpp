// Which rank writes which node. Ranks list the global nodes they hold; a node listed by
// several ranks (an interface node) is written by the LOWEST rank that lists it (or, on
// request, the highest: gretel's rule, where the last part read wins), so every node of a
// frame is written exactly once. Resolved collectively through a directory
// distributed by node blocks: memory O(own nodes + NPOIN / ranks) per rank.
#pragma once
#include <mpi.h>

#include <cstdint>
#include <vector>

namespace anabranch::pio {

struct Owned {
  std::vector<std::int64_t> gid;    // global nodes (0-based) this rank writes, increasing
  std::vector<std::int64_t> local;  // their positions in the rank's local arrays
  // Where runs of consecutive local positions start (indices into gid/local, increasing,
  // then gid.size()): owned indices [runs[k], runs[k + 1]) sit at local positions
  // local[runs[k]] + 0, 1, ... The writers encode a run in one pass.
  std::vector<std::int64_t> runs;
};

// Collective. gids: this rank's nodes (0-based), in local order; every node of 0..npoin-1
// must be held by at least one rank. Throws (on every rank) on ids out of range, a node
// listed twice by one rank, or a node no rank holds.
Owned resolve_ownership(MPI_Comm comm, const std::int64_t* gids, std::int64_t n, std::int64_t npoin, bool highest = false);

// Owned::runs of these local positions.
std::vector<std::int64_t> runs_of(const std::vector<std::int64_t>& local);

// Owned values [first, first + count) of the caller's array `in` (its local order) as R,
// bytes reversed when swap, to out (count * sizeof(R) bytes, any alignment): a run of
// consecutive local positions in one vectorised pass (encode_words), short runs value by
// value. For T, R in {float, double}.
template <class R, class T>
void encode_owned(const T* in, const Owned& owned, std::int64_t first, std::int64_t count, bool swap, unsigned char* out);

}  // namespace anabranch::pio
