// A lossy compression's rounding of one frame's variable over the ranks writing it: every
// output that compresses within a bound (VTKHDF, CGNS) rounds its values here.
#pragma once
#include <mpi.h>

#include <cstdint>

#include "core/compression.hpp"

namespace anabranch {

// Collective over comm (MPI_COMM_NULL: this process alone): the n reals of `size` bytes (4
// or 8) this rank writes of one frame's variable, rounded within c's bound; for `rel`, the
// bound from the variable's range over every rank's values (one MPI_Allreduce).
void round_frame(MPI_Comm comm, const Compression& c, unsigned char* values, std::int64_t n, int size);

}  // namespace anabranch
