// A block file of either format (raw with its JSON sidecar, or HDF5: pio::BlockWriter's
// files), serially: whether a path is one, its description, one block's array, a check of
// every byte. The commands that only read block files (info, convert, diff) take this; the
// parallel reader is pio::BlockReader (layouts/block_io.hpp).
#pragma once
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
// Serial check of every byte the description promises: the file's size, every record
// marker (raw with records), finite values. Returns "" when sound, else one line naming
// the frame, block, variable and byte offset of the first damage.
std::string check_block_file(const BlockFileInfo& info);

}  // namespace anabranch::pio
