// CGNS files (HDF5) as block files the engine reads: rank 0 finds every array's place, and
// each rank then reads only its own zones' bytes (pio::BlockReader, any strategy). A file
// anabranch wrote is described by the index it keeps beside the tree (one read); another
// (CGNS's library, pcgns, a solver) by a walk of its tree: its bases' structured zones, their
// coordinates and vertex solutions. Arrays stored otherwise (chunked, compressed, with rind
// planes, cell-centred, another byte order or precision than the rest) are CGNS's library's
// to read (the helper program, src/cgns): describe() says why. Specification:
// docs/formats/cgns.md.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "blockformats/block_file.hpp"
#include "h5/results.hpp"

namespace anabranch::pio::cgns_files {

// True when path is an HDF5 file whose root is a CGNS tree's (its " format" and the root
// node's label).
// Throws FormatError naming path when it is an HDF5 file with CGNS's " format" but a root
// node without CGNS's label: a copy by a tool that drops the root's attributes (h5repack),
// which CGNS's library cannot read either.
void check_root(const std::string& path);
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
