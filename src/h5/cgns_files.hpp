// CGNS files (HDF5) as block files the engine reads: rank 0 finds every array's place, and
// each rank then reads only its own zones' bytes (pio::BlockReader, any strategy). A file
// anabranch wrote is described by the index it keeps beside the tree (one read); another
// (CGNS's library, pcgns, a solver) by a walk of its tree: its bases' structured zones, their
// coordinates and vertex solutions. Arrays stored otherwise (chunked, compressed, with rind
// planes, cell-centred, another byte order or precision than the rest) are CGNS's library's
// to read (the helper program, src/cgns): describe() says why. Specification:
// docs/formats/cgns.md.
#pragma once
#include <array>
#include <memory>
#include <string>
#include <vector>

#include "blockformats/block_file.hpp"
#include "h5/results.hpp"

namespace anabranch::pio::cgns_files {

// True when path is an HDF5 file whose root is a CGNS tree's (its " format" and the root
// node's label).
bool is_cgns_hdf5(const std::string& path);
// Serial. True and `out` filled (format "cgns") when the engine reads the file's arrays in
// place; false and `why` (one line naming the node) when CGNS's library must.
bool describe(const std::string& path, BlockFileInfo& out, std::string& why);
// A mesh result anabranch wrote as CGNS (one unstructured zone: the cgns write strategy), as
// a result file: its SERAFIN header, mesh and frames, each array read where it is. Throws
// FormatError for any other CGNS file.
std::unique_ptr<ResultFile> open_mesh(const std::string& path);
// True when path is a mesh result anabranch wrote as CGNS (open_mesh reads it).
bool is_mesh_result(const std::string& path);

// A block file anabranch wrote compressed (BlockFileInfo::compression: BlockWriter's
// compress=): its arrays are HDF5's chunked datasets, read through HDF5, which decodes the
// chunks a read touches. Serial; the file held open.
class ChunkedArrays {
 public:
  explicit ChunkedArrays(const BlockFileInfo& info);
  ~ChunkedArrays();
  // Block b's array `var` (-1, -2, -3: the grid's x, y, z) in frame f, the box [box[a][0],
  // box[a][1]) of its index space (i, j, k) into `out`, Fortran order over the box.
  // FormatError naming the file and the dataset.
  const BlockFileInfo& info() const { return info_; }
  void read(std::int64_t frame, std::size_t block, int var, const std::array<std::array<std::int64_t, 2>, 3>& box, double* out) const;
  // The bytes that array's chunks take in the file.
  std::int64_t stored_bytes(std::int64_t frame, std::size_t block, int var) const;

 private:
  // The array's dataset, FormatError naming it when it is not there.
  std::int64_t open(std::int64_t frame, std::size_t block, int var, std::string& path) const;
  BlockFileInfo info_;
  std::vector<std::string> fields_;
  std::int64_t file_ = -1;
};

// Where the values of arrays another program's CGNS library made sit in the file: for each
// HDF5 dataset path (a node's " data", e.g. "/Base/Zone 1/FlowSolution/Density/ data"), the
// byte of its contiguous storage and its bytes, so that the ranks holding the values write
// them there through the engine. Throws FormatError naming the file and the dataset when one
// is not contiguous and allocated (chunked, compressed, compact, not yet written).
struct Extent {
  std::int64_t offset = 0, bytes = 0;
};
std::vector<Extent> contiguous_extents(const std::string& path, const std::vector<std::string>& datasets);

}  // namespace anabranch::pio::cgns_files
