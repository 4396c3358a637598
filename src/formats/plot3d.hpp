// PLOT3D grid files (.xyz, .x, .g, .p3d): multi-block structured grids. Read: multi-grid or
// single-grid, 3D or 2D, with or without IBLANK, single or double precision, either byte
// order, Fortran sequential records or plain C binary (told apart by the file's first
// bytes and its size). Written: multi-grid 3D "whole" files, Fortran records, double
// precision, little- or big-endian. Specification: docs/formats/plot3d.md.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/block_layout.hpp"

namespace anabranch::plot3d {

struct Grid {
  std::string path;
  std::vector<BlockShape> blocks;  // ids 1..N, in file order (2D grids: nk = 1)
  int real_bytes = 8;
  bool big_endian = false;
  bool records = true;   // Fortran sequential records
  bool iblank = false;
  bool multi = true;     // the block count leads the file
  int dimensions = 3;    // 2: x and y only
  std::vector<std::int64_t> coords_at;  // byte offset of each block's x values
};

// True when path's first bytes and size make sense as a PLOT3D grid.
bool is_plot3d(const std::string& path);
// Reads the header and checks the file's size against it; FormatError naming the file,
// the record and the byte offset.
Grid read_header(const std::string& path);
// Coordinate c (0 x, 1 y, 2 z; z of a 2D grid is 0) of block b, Fortran order, as doubles.
void read_coordinate(const Grid& g, std::size_t b, int c, std::vector<double>& out);
// Writes a multi-grid 3D whole file (double precision, Fortran records) under a temporary
// name, renamed when complete. xyz(b, c, out) fills coordinate c of block b.
void write(const std::string& path, const std::vector<BlockShape>& blocks, bool big_endian,
           const std::function<void(std::size_t b, int c, std::vector<double>& out)>& xyz);

}  // namespace anabranch::plot3d
