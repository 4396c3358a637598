// A rank's part of a mesh straight from the global geometry and an element -> part file
// (formats/epart.hpp), for solvers that partition at start-up: no per-rank files. Every
// rank reads a share of each (its lines of the partition file, their rows of IKLE, a share
// of X and Y) and receives its own elements, nodes and coordinates: O(N/P) per rank.
#pragma once
#include <mpi.h>

#include <string>

#include "grid/mesh.hpp"

namespace anabranch::pio {

// Collective over comm (failures agreed): part `rank` of `partition` (parts 0..size-1; an
// empty part is allowed). 2D: one line per element; 3D (prisms): one line per element of
// the base triangles, as `anabranch partition` writes it, each column of prisms following
// its triangle. Returns the local mesh: IKLE in local numbering (1-based), IPOBO holding
// KNOLG (the local nodes' global numbers, 1-based, increasing), X, Y.
Mesh read_part_global(MPI_Comm comm, const std::string& geometry, const std::string& partition);

}  // namespace anabranch::pio
