// Where the values of a multi-block structured grid live: the blocks of the grid (their
// index dimensions, in file order) and the pieces one rank holds (whole blocks, or index
// ranges of split blocks as `balance` deals them), each in the caller's memory as a Fortran
// order array with halo layers around the interior. The interior is what files hold.
//
// One index space per block: `balance`'s cells (ni, nj, nk) are the array's dimensions,
// and the grid coordinates, when written, have the same dimensions as the variables.
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace anabranch {

struct BlockShape {
  std::int64_t id = 0;
  std::array<std::int64_t, 3> dims{1, 1, 1};  // ni, nj, nk (fastest first)
  std::int64_t points() const { return dims[0] * dims[1] * dims[2]; }
};

struct BlockPiece {
  std::int64_t block = 0;  // index into BlockLayout::blocks (not the id)
  std::array<std::array<std::int64_t, 2>, 3> range{};  // [begin, end) per direction
  std::array<std::int64_t, 3> extent() const {
    return {range[0][1] - range[0][0], range[1][1] - range[1][0], range[2][1] - range[2][0]};
  }
  std::int64_t points() const {
    const auto e = extent();
    return e[0] * e[1] * e[2];
  }
};

// A stretch of one piece's interior that is contiguous both in the block's array and in the
// caller's: `count` values from position `block_index` of the block (0-based, Fortran order
// over the whole block) and from `memory_index` of the caller's array (halos included). A
// line in i at least; whole planes when the piece spans the block in i and has no halo in i.
struct BlockRun {
  std::int64_t block_index = 0;
  std::int64_t memory_index = 0;
  std::int64_t count = 0;
};

struct BlockLayout {
  std::vector<BlockShape> blocks;  // the whole grid, in file order
  std::vector<BlockPiece> pieces;  // this rank's
  std::array<std::int64_t, 3> halo{0, 0, 0};  // layers on each side of every piece, per direction

  std::int64_t total_points() const;
  // First point of each block in the blocks' concatenation (blocks.size() + 1 entries).
  std::vector<std::int64_t> point_offsets() const;
  // The caller's array of piece p: interior plus halos.
  std::array<std::int64_t, 3> memory_dims(std::size_t p) const;
  std::int64_t memory_points(std::size_t p) const;
  // Piece p's interior as runs, in increasing block_index order: fn(const BlockRun&).
  template <class F>
  void for_each_run(std::size_t p, F&& fn) const;
  std::vector<BlockRun> runs(std::size_t p) const;
  // Throws UsageError naming the block when a piece lies outside its block, is empty, or
  // names no block; when blocks have non-positive dimensions or repeated ids.
  void check() const;
  // Index of the block with this id; throws UsageError when there is none.
  std::size_t block_index(std::int64_t id) const;
};

template <class F>
void BlockLayout::for_each_run(std::size_t p, F&& fn) const {
  const BlockPiece& piece = pieces[p];
  const auto& d = blocks[static_cast<std::size_t>(piece.block)].dims;
  const auto e = piece.extent();
  const auto m = memory_dims(p);
  BlockRun run{-1, -1, 0};
  for (std::int64_t k = 0; k < e[2]; ++k)
    for (std::int64_t j = 0; j < e[1]; ++j) {
      const std::int64_t file = ((piece.range[2][0] + k) * d[1] + piece.range[1][0] + j) * d[0] + piece.range[0][0];
      const std::int64_t mem = ((k + halo[2]) * m[1] + j + halo[1]) * m[0] + halo[0];
      if (run.count > 0 && run.block_index + run.count == file && run.memory_index + run.count == mem) {
        run.count += e[0];
        continue;
      }
      if (run.count > 0) fn(static_cast<const BlockRun&>(run));
      run = {file, mem, e[0]};
    }
  if (run.count > 0) fn(static_cast<const BlockRun&>(run));
}

// Checks that pieces (every rank's, gathered) cover every point of every block exactly
// once; throws UsageError naming the block and the first point covered twice or not at all.
void check_cover(const std::vector<BlockShape>& blocks, const std::vector<BlockPiece>& all_pieces);

}  // namespace anabranch
