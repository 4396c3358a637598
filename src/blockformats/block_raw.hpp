// The raw multi-block restart: the blocks' values one after another, each block's
// variables one after another, each variable one array in Fortran order; frame after
// frame. Optionally each array is framed as a Fortran sequential unformatted record
// (4-byte length markers), so that a serial Fortran program reads it with plain READ
// statements. The data file holds nothing else; its description (blocks, variables,
// precision, frames, times, provenance) is a JSON sidecar "<file>.json".
// Specification: docs/formats/blocks-raw.md.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "grid/block_layout.hpp"

namespace anabranch::block_raw {

constexpr const char* kFormat = "anabranch-blocks-raw";

struct Description {
  std::vector<BlockShape> blocks;
  std::vector<std::string> variables;
  int real_bytes = 8;      // 4 or 8
  bool records = false;    // Fortran sequential records around each array
  std::vector<double> times;  // one per complete frame
  std::map<std::string, std::string> provenance;

  int nvar() const { return static_cast<int>(variables.size()); }
  // Bytes of one variable of block b, markers included.
  std::int64_t array_bytes(std::size_t b) const { return blocks[b].points() * real_bytes + (records ? 8 : 0); }
  // Offsets of the blocks in a frame (blocks.size() + 1 entries; the last: the frame's size).
  std::vector<std::int64_t> block_offsets() const;
  std::int64_t frame_bytes() const { return block_offsets().back(); }
};

std::string sidecar_path(const std::string& data_path);
// Writes the sidecar under a temporary name, then renames it.
void write_sidecar(const std::string& data_path, const Description& d);
// Reads and checks the sidecar of data_path; FormatError naming the sidecar and the entry.
Description read_sidecar(const std::string& data_path);
// True when path has a sidecar naming this format.
bool is_raw_blocks(const std::string& path);

}  // namespace anabranch::block_raw
