// Block files for `anabranch balance`: JSON or plain text. Specification:
// docs/formats/blocks.md.
#pragma once
#include <string>
#include <vector>

#include "core/block.hpp"

namespace anabranch::blocks {

struct File {
  std::vector<Block> blocks;
  std::vector<Face> faces;
};

// JSON ({"blocks": [...], "faces": [...]}) or text (one "id ni nj nk" or "id weight" per
// line, # comments). Throws FormatError naming the file and the entry or line.
File read(const std::string& path);
File parse(const std::string& text, const std::string& name);

}  // namespace anabranch::blocks
