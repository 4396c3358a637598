// What a multi-block file holds (raw or HDF5, docs/formats/blocks-*.md): its blocks,
// variables, precision, frames, and where each array's values lie. Filled serially by
// pio::describe_block_file (rank 0 reads it and shares it); the byte arithmetic is here.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "grid/block_layout.hpp"

namespace anabranch {

// What a block file holds, read without MPI (rank 0 reads it and shares it).
struct BlockFileInfo {
  std::string path, format;  // "raw", "hdf5" or "cgns"
  std::vector<BlockShape> blocks;
  std::vector<std::string> variables;
  int real_bytes = 8;
  bool records = false;
  bool has_grid = false;
  std::vector<double> times;  // one per complete frame
  std::int64_t file_bytes = 0;
  std::map<std::string, std::string> provenance;
  // hdf5, cgns: byte offset of each dataset's values (every block of one array): frame after
  // frame, nvar each; the grid's x, y, z.
  std::vector<std::int64_t> dataset_offsets, grid_offsets;
  // cgns files written by others: each block's array on its own, anywhere in the file: the
  // offset of block b's array a at [a * blocks + b], a = the grid's x, y, z, then frame after
  // frame every variable. Empty: the arrays above, every block's concatenated.
  std::vector<std::int64_t> block_offsets;
  std::vector<std::string> zones;  // cgns: each block's zone name
  // cgns written with compress=SPEC: the SPEC; the arrays are HDF5's chunked datasets (no
  // offsets above), read through HDF5. Empty: not compressed.
  std::string compression;

  // Every field as JSON text, and back (rank 0's description shared with the others).
  std::string to_json() const;
  static BlockFileInfo from_json(const std::string& text);

  std::int64_t frames() const { return static_cast<std::int64_t>(times.size()); }
  int nvar() const { return static_cast<int>(variables.size()); }
  // Points before block b, in file order (b = blocks.size(): every point).
  std::int64_t first_point(std::size_t b) const;
  // Byte offset of the first value of variable var of block b in frame f (var -1, -2, -3:
  // the grid's x, y, z).
  std::int64_t value_offset(std::int64_t frame, std::size_t block, int var) const;
  // The end of frame f's values (or the grid's).
  std::int64_t frame_end(std::int64_t frame, bool grid = false) const;

 private:
  // Prefix sums over the blocks (points; raw bytes per frame), made on first use.
  mutable std::vector<std::int64_t> first_point_, raw_offset_;
  void index() const;
};

}  // namespace anabranch
