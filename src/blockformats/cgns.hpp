// CGNS files as the engine writes them: the SIDS tree of a multi-block structured grid over
// HDF5 (CGNS's HDF5 mapping: every node a group with name, label and type attributes, its
// values in a " data" dataset), made as bytes (formats/hdf5_bytes.hpp) once the values are in
// place. The values of every array (a block's coordinates, a block's variable in a frame) are
// contiguous datasets at addresses the caller chose and wrote, so no rank needs the tree to
// write, and the tree costs one rank O(blocks x frames) bytes of memcpy. Specification:
// docs/formats/cgns.md.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/compression.hpp"
#include "formats/hdf5_bytes.hpp"
#include "grid/block_layout.hpp"

namespace anabranch::cgns {

// anabranch's description of a file it wrote records where the file ends (its tree's end):
// a file changed since (by another tool) is walked instead. The end goes in a fixed-width
// field, so that the description's length does not depend on it: finish_index() puts it in
// the text made with kEndPlaceholder, index_end() reads it back (-1: none).
constexpr const char* kEndPlaceholder = "\"tree_end\":\"00000000000000000000\"";
void finish_index(std::string& index, std::int64_t end);
std::int64_t index_end(const std::string& index);

// The SIDS name (CGNS's standard data-name identifiers) of a solver's variable, where its
// name says which it is (rho, u, p, rhou, nut...); other names stay as they are.
std::string sids_name(const std::string& name);

// A compressed array's chunks (hdf5_bytes::Writer::chunked): a chunk's dimensions (C order,
// the array's rank), and where each chunk's filtered bytes are (C order of the chunks).
struct Stored {
  std::vector<std::uint64_t> chunk;
  std::vector<hdf5_bytes::Chunk> chunks;
};

// The filter of a compression's codec, after HDF5's byte shuffle: deflate (1, optional as
// HDF5 sets it) or zstd (32015), at the codec's level.
std::vector<hdf5_bytes::Filter> codec_filters(const Compression& c);

// What a multi-block file holds and where each array's values are.
struct BlockFile {
  std::vector<BlockShape> blocks;      // in file order; nk = 1: a zone of the 2D base
  std::vector<std::string> variables;  // the writer's names (the file names them as SIDS does, and keeps the writer's)
  std::vector<double> times;           // one per frame
  int real_bytes = 8;
  // The file address of block b's array `var` in frame f (var -1, -2, -3: the grid's x, y, z).
  std::function<std::int64_t(std::int64_t f, std::size_t b, int var)> address;
  // What anabranch reads back at once instead of walking the tree (a hidden child of the root,
  // " anabranch", which CGNS's library does not list): its bytes, at `index_address`.
  std::string index;
  std::int64_t index_address = -1;
  // Compressed: the codec_filters (empty: not compressed), and each array's chunks in place
  // of its address.
  std::vector<hdf5_bytes::Filter> codec;
  std::function<const Stored&(std::int64_t f, std::size_t b, int var)> stored;
};

// The tree, as bytes from file address `first` on, handed to `out(at, bytes)` in pieces of
// a few MiB. Returns the root group's address (for the superblock) and sets `end`.
std::int64_t write_tree(const BlockFile& file, std::int64_t first, const std::function<void(std::int64_t, const std::string&)>& out,
                        std::int64_t& end);

// A mesh result (TELEMAC's triangles, quadrangles or prisms) as one unstructured zone: its
// nodes' coordinates, its elements (one section, 1-based node numbers as SERAFIN's IKLE),
// a vertex FlowSolution per frame; every array at an address the caller chose and wrote, or
// (compressed) in chunks through `filters`.
struct MeshFile {
  std::int64_t npoin = 0, nelem = 0;
  int ndp = 3;
  bool three_d = false;  // prisms: cell dimension 3 and a CoordinateZ
  std::vector<std::string> variables;
  std::vector<double> times;
  int real_bytes = 4;
  std::int64_t x = -1, y = -1, z = -1, connectivity = -1;  // file addresses
  std::function<std::int64_t(std::int64_t f, int var)> address;
  std::string index;  // as BlockFile's; and IPOBO (int32, npoin) hidden beside it
  std::int64_t index_address = -1, ipobo_address = -1;
  // Compressed: the codec's filters after HDF5's byte shuffle (empty: not compressed), and
  // each array's chunks (var -1, -2, -3: x, y, z; kIpobo, kConnectivity), in place of the
  // addresses above.
  std::vector<hdf5_bytes::Filter> codec;
  std::function<const Stored&(std::int64_t f, int var)> stored;
  static constexpr int kIpobo = -4, kConnectivity = -5;
};
std::int64_t write_tree(const MeshFile& file, std::int64_t first, const std::function<void(std::int64_t, const std::string&)>& out,
                        std::int64_t& end);
// The CGNS names of a result's variables: SIDS's where the name says which (VELOCITY U is
// VelocityX), else the name trimmed, '/' as '_', made unique; at most 32 characters.
std::vector<std::string> field_names(const std::vector<std::string>& variables);

}  // namespace anabranch::cgns
