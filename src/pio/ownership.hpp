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
};

// Collective. gids: this rank's nodes (0-based), in local order; every node of 0..npoin-1
// must be held by at least one rank. Throws (on every rank) on ids out of range, a node
// listed twice by one rank, or a node no rank holds.
Owned resolve_ownership(MPI_Comm comm, const std::int64_t* gids, std::int64_t n, std::int64_t npoin, bool highest = false);

}  // namespace anabranch::pio
