// A block file of either format (raw with its JSON sidecar, or HDF5: pio::BlockWriter's
// files), serially: whether a path is one, its description, one block's array, a check of
// every byte. The commands that only read block files (info, convert, diff) take this; the
// parallel reader is pio::BlockReader (layouts/block_io.hpp).
#pragma once
#include <array>
#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include "blockformats/block_file.hpp"

namespace anabranch::pio {

using ::anabranch::BlockFileInfo;

// True when path is a block file: an HDF5 file of this layout, or data with a raw sidecar.
bool is_block_file(const std::string& path);
// Reads the description of a block file (no MPI). FormatError naming the file and the entry.
BlockFileInfo describe_block_file(const std::string& path);
// Serial: one block's array of variable var (-1, -2, -3: the grid's x, y, z) in frame f;
// `in`: the file already open (a caller reading many arrays), or null.
void read_block_array(const BlockFileInfo& info, std::int64_t frame, std::size_t block, int var, std::vector<double>& out,
                      std::istream* in = nullptr);
// A block file anabranch wrote compressed (BlockFileInfo::compression: BlockWriter's
// compress=, CGNS or HDF5): its arrays are HDF5's chunked datasets, read through HDF5, which
// decodes the chunks a read touches. Serial; the file held open.
class ChunkedArrays {
 public:
  explicit ChunkedArrays(const BlockFileInfo& info);
  ~ChunkedArrays();
  ChunkedArrays(const ChunkedArrays&) = delete;
  ChunkedArrays& operator=(const ChunkedArrays&) = delete;
  const BlockFileInfo& info() const { return info_; }
  // Block b's array `var` (-1, -2, -3: the grid's x, y, z) in frame f, the box [box[a][0],
  // box[a][1]) of its index space (i, j, k) into `out`, Fortran order over the box.
  // FormatError naming the file and the dataset.
  void read(std::int64_t frame, std::size_t block, int var, const std::array<std::array<std::int64_t, 2>, 3>& box, double* out) const;
  // The bytes variable `var`'s chunks take in the file in frame f, every block's.
  std::int64_t stored_bytes(std::int64_t frame, int var) const;

 private:
  // The dataset of that array (CGNS: the block's; HDF5: every block's), FormatError naming it
  // when it is not there.
  std::int64_t open(std::int64_t frame, std::size_t block, int var, std::string& path) const;
  BlockFileInfo info_;
  std::vector<std::string> fields_;  // the variables' arrays: CGNS's field names, HDF5's dataset names
  std::int64_t file_ = -1;
  // The datasets last read, kept open with a chunk cache that holds a chunk: the blocks of
  // an HDF5 file share chunks, each decoded once while they are read one after another.
  mutable std::vector<std::pair<std::string, std::int64_t>> open_;
};

// Serial check of every byte the description promises: the file's size, every record
// marker (raw with records), finite values. Returns "" when sound, else one line naming
// the frame, block, variable and byte offset of the first damage.
std::string check_block_file(const BlockFileInfo& info);

}  // namespace anabranch::pio
