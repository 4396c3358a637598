// A CGNS block file's arrays compressed (BlockWriter's compress=SPEC): every block's array in
// chunks that each lie inside one rank's piece, so that no chunk has two writers. Along each
// direction a chunk's extent divides every cut of the block there (the greatest common
// divisor of the cuts; the block's extent where it is not cut), then shrinks by a divisor
// along k, then j, to at most kChunkValues values. Each rank rounds its values within the
// bound (rel: the variable's range over every rank's pieces, one MPI_Allreduce a frame),
// compresses its chunks (HDF5's byte shuffle, then the codec: core/compression.hpp) and
// writes them one after another at the file's end, after the ranks before it. Rank 0 keeps
// where every chunk went, for the tree (O(blocks x frames), as the tree itself).
// The grid's coordinates are compressed losslessly whatever the bound.
#pragma once
#include <mpi.h>

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "blockformats/cgns.hpp"
#include "core/compression.hpp"
#include "grid/block_layout.hpp"

namespace anabranch::pio {

// Collective: the bound of each of the n arrays (arrays[p * n + a], this rank's pieces) under
// c: abs its tolerance, rel the tolerance times the array's range over every rank's pieces
// (one MPI_Allreduce), 0 lossless.
template <class T>
std::vector<double> array_bounds(MPI_Comm comm, const BlockLayout& layout, const Compression& c, int n, const T* const* arrays);

// HDF5 block files (every block's points one after another in a dataset an array): array
// `a` of this rank's pieces as runs of that dataset (first point, count; in increasing order,
// touching runs merged) and their values one after another, of the file's precision
// (real_bytes), rounded within `bound`. `first_point[b]`: block b's first point.
template <class T>
void packed_runs(const BlockLayout& layout, const std::vector<std::int64_t>& first_point, int a, int n, const T* const* arrays,
                 int real_bytes, double bound, std::vector<std::array<std::int64_t, 2>>& runs, std::vector<unsigned char>& values);

class CompressedBlocks {
 public:
  static constexpr std::int64_t kChunkValues = std::int64_t{1} << 21;
  // Each block's chunk extents (i, j, k) for these pieces (every rank's): see above.
  static std::vector<std::array<std::int64_t, 3>> chunk_extents(const std::vector<BlockShape>& blocks,
                                                                const std::vector<BlockPiece>& all_pieces);

  // Collective. `extents`: chunk_extents() of every rank's pieces, alike on every rank;
  // `first`: the file address of the first chunk.
  CompressedBlocks(MPI_Comm comm, const BlockLayout& layout, std::vector<std::array<std::int64_t, 3>> extents, const Compression& c,
                   int real_bytes, int nvar, std::int64_t first);

  // Collective: frame f's arrays (or the grid's x, y, z), arrays[p * n + a] this rank's
  // piece p (halos included), compressed and written to fh (the file `path`).
  template <class T>
  void write(MPI_File fh, const std::string& path, std::int64_t frame, bool grid, const T* const* arrays);

  // Rank 0: where array `var` (-1, -2, -3: the grid's x, y, z) of block b in frame f is.
  const cgns::Stored& stored(std::int64_t frame, std::size_t block, int var) const;
  // The file's end after the chunks written so far (every rank).
  std::int64_t end() const { return next_; }

 private:
  struct Placed {
    std::int64_t array, block, chunk, address, bytes;
  };
  std::int64_t array_index(std::int64_t frame, int var) const { return var < 0 ? -var - 1 : 3 + frame * nvar_ + var; }

  MPI_Comm comm_;
  int rank_ = 0;
  const BlockLayout& layout_;
  std::vector<std::array<std::int64_t, 3>> extents_;
  Compression c_;
  int real_bytes_, nvar_;
  std::int64_t next_;
  std::vector<cgns::Stored> stored_;  // rank 0: [array_index * blocks + b]
};

}  // namespace anabranch::pio
