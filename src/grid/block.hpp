// Blocks of a multi-block structured grid and the faces they share (the input of load
// balancing).
#pragma once
#include <array>
#include <cstdint>

namespace anabranch {

struct Block {
  std::int64_t id = 0;
  std::array<std::int64_t, 3> cells{0, 0, 0};  // ni, nj, nk (all 0: weight only)
  double weight = 0;                          // work; cells ni*nj*nk when given
  bool has_cells() const { return cells[0] > 0; }
};

struct Face {
  std::int64_t a = 0, b = 0;  // block ids
  double cells = 0;           // shared face size in cells
};

}  // namespace anabranch
