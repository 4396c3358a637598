// Block files for `anabranch balance`: JSON or plain text. Specification:
// docs/formats/blocks.md.
#pragma once
#include <string>
#include <vector>

#include "grid/block.hpp"
#include "grid/block_layout.hpp"

namespace anabranch::blocks {

struct File {
  std::vector<Block> blocks;
  std::vector<Face> faces;
};

// JSON ({"blocks": [...], "faces": [...]}) or text (one "id ni nj nk" or "id weight" per
// line, # comments). Throws FormatError naming the file and the entry or line.
File read(const std::string& path);
File parse(const std::string& text, const std::string& name);

// Who holds what: the grid (block ids and index dimensions, in file order) and every piece
// with its process. Read from `anabranch balance --json`'s report (its "grid" and
// "assignment"), or from a block file with dimensions (every block whole, on process 0).
struct Assignment {
  std::vector<BlockShape> grid;
  std::vector<BlockPiece> pieces;
  std::vector<int> process;  // per piece
  int processes = 1;
};
Assignment read_assignment(const std::string& path);
Assignment parse_assignment(const std::string& text, const std::string& name);
// The layout of one rank: the whole grid, the pieces assigned to `rank`, the halo width.
BlockLayout layout_for_rank(const Assignment& a, int rank, const std::array<std::int64_t, 3>& halo);

}  // namespace anabranch::blocks
