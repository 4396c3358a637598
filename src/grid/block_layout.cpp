#include "grid/block_layout.hpp"

#include <algorithm>
#include <map>

#include "core/error.hpp"

namespace anabranch {

std::int64_t BlockLayout::total_points() const {
  std::int64_t n = 0;
  for (const auto& b : blocks) n += b.points();
  return n;
}

std::vector<std::int64_t> BlockLayout::point_offsets() const {
  std::vector<std::int64_t> off(blocks.size() + 1, 0);
  for (std::size_t b = 0; b < blocks.size(); ++b) off[b + 1] = off[b] + blocks[b].points();
  return off;
}

std::array<std::int64_t, 3> BlockLayout::memory_dims(std::size_t p) const {
  const auto e = pieces[p].extent();
  return {e[0] + 2 * halo[0], e[1] + 2 * halo[1], e[2] + 2 * halo[2]};
}

std::int64_t BlockLayout::memory_points(std::size_t p) const {
  const auto m = memory_dims(p);
  return m[0] * m[1] * m[2];
}

std::vector<BlockRun> BlockLayout::runs(std::size_t p) const {
  std::vector<BlockRun> out;
  for_each_run(p, [&](const BlockRun& r) { out.push_back(r); });
  return out;
}

std::size_t BlockLayout::block_index(std::int64_t id) const {
  for (std::size_t b = 0; b < blocks.size(); ++b)
    if (blocks[b].id == id) return b;
  throw UsageError("no block with id " + std::to_string(id) + " in the block layout");
}

void BlockLayout::check() const {
  std::map<std::int64_t, std::size_t> seen;
  for (std::size_t b = 0; b < blocks.size(); ++b) {
    const auto& s = blocks[b];
    if (!seen.emplace(s.id, b).second) throw UsageError("block id " + std::to_string(s.id) + " appears twice in the block layout");
    for (int a = 0; a < 3; ++a)
      if (s.dims[static_cast<std::size_t>(a)] < 1)
        throw UsageError("block " + std::to_string(s.id) + " has a dimension below 1 (" + std::to_string(s.dims[0]) + " x " +
                         std::to_string(s.dims[1]) + " x " + std::to_string(s.dims[2]) + ")");
  }
  for (int a = 0; a < 3; ++a)
    if (halo[static_cast<std::size_t>(a)] < 0) throw UsageError("negative halo width");
  for (std::size_t p = 0; p < pieces.size(); ++p) {
    const auto& piece = pieces[p];
    if (piece.block < 0 || static_cast<std::size_t>(piece.block) >= blocks.size())
      throw UsageError("piece " + std::to_string(p + 1) + " names block index " + std::to_string(piece.block) + " of " +
                       std::to_string(blocks.size()));
    const auto& s = blocks[static_cast<std::size_t>(piece.block)];
    for (std::size_t a = 0; a < 3; ++a)
      if (piece.range[a][0] < 0 || piece.range[a][1] > s.dims[a] || piece.range[a][0] >= piece.range[a][1])
        throw UsageError("piece " + std::to_string(p + 1) + " of block " + std::to_string(s.id) + ": range [" +
                         std::to_string(piece.range[a][0]) + ", " + std::to_string(piece.range[a][1]) + ") in direction " +
                         "ijk"[a] + " is empty or outside 0.." + std::to_string(s.dims[a]));
  }
}

void check_cover(const std::vector<BlockShape>& blocks, const std::vector<BlockPiece>& all) {
  std::vector<std::vector<const BlockPiece*>> of(blocks.size());
  for (const auto& p : all) of[static_cast<std::size_t>(p.block)].push_back(&p);
  for (std::size_t b = 0; b < blocks.size(); ++b) {
    const auto& list = of[b];
    std::int64_t covered = 0;
    for (std::size_t x = 0; x < list.size(); ++x) {
      covered += list[x]->points();
      for (std::size_t y = 0; y < x; ++y) {
        bool overlap = true;
        for (std::size_t a = 0; a < 3; ++a)
          overlap = overlap && std::max(list[x]->range[a][0], list[y]->range[a][0]) < std::min(list[x]->range[a][1], list[y]->range[a][1]);
        if (overlap) {
          std::array<std::int64_t, 3> at{};
          for (std::size_t a = 0; a < 3; ++a) at[a] = std::max(list[x]->range[a][0], list[y]->range[a][0]);
          throw UsageError("block " + std::to_string(blocks[b].id) + ": point (" + std::to_string(at[0]) + ", " + std::to_string(at[1]) +
                           ", " + std::to_string(at[2]) + ") is held by two pieces (every value must be written once)");
        }
      }
    }
    if (covered != blocks[b].points())
      throw UsageError("block " + std::to_string(blocks[b].id) + ": the pieces hold " + std::to_string(covered) + " of its " +
                       std::to_string(blocks[b].points()) + " points (every value must be written once)");
  }
}

}  // namespace anabranch
