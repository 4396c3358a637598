#include "parallel/rounding.hpp"

#include <limits>

#include "parallel/mpi_util.hpp"

namespace anabranch {

void round_frame(MPI_Comm comm, const Compression& c, unsigned char* values, std::int64_t n, int size) {
  double span[2] = {std::numeric_limits<double>::infinity(), std::numeric_limits<double>::infinity()};  // min, -max
  if (c.mode == Compression::Mode::Relative) {
    if (size == 8)
      widen_span(reinterpret_cast<const double*>(values), n, span);
    else
      widen_span(reinterpret_cast<const float*>(values), n, span);
    pio::allreduce(comm, span, 2, MPI_DOUBLE, MPI_MIN);
  }
  const double bound = c.bound(span[0], -span[1]);
  if (size == 8)
    round_within(reinterpret_cast<double*>(values), n, bound);
  else
    round_within(reinterpret_cast<float*>(values), n, bound);
}

}  // namespace anabranch
