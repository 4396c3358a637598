// Compressed outputs' frames from all ranks: each rank's owned values regathered into one
// contiguous block of nodes, so that a chunk of a frame is made whole on one rank and
// compressed there (no chunk shared between writers). Rank r holds nodes
// [r * block, (r + 1) * block) of the mesh (within its npoin). The hdf5 and cgns strategies
// take it.
#pragma once
#include <mpi.h>

#include <cstdint>
#include <vector>

#include "io/strategy.hpp"

namespace anabranch::pio {

class NodeBlocks {
 public:
  // Collective. owned: this rank's nodes, increasing, 0-based. UsageError when the ranks'
  // nodes do not cover the mesh once each.
  NodeBlocks(MPI_Comm comm, const std::vector<std::int64_t>& owned, std::int64_t npoin, std::int64_t block);
  std::int64_t first() const { return first_; }
  std::int64_t count() const { return count_; }
  // Collective: array `array` of the frame's values (value_bytes each, as the encoder makes
  // them), this rank's block of it to out (count() values).
  void gather(const ValueEncoder& values, int array, int value_bytes, unsigned char* out) const;

 private:
  MPI_Comm comm_;
  std::int64_t owned_ = 0, first_ = 0, count_ = 0;
  std::vector<int> send_counts_;       // owned values by destination block
  std::vector<std::int64_t> place_;    // where each received value goes in the block
};

}  // namespace anabranch::pio
