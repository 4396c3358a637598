// PLOT3D grid files: multi-block structured grids, whatever their name. Read: multi-grid or
// single-grid, 3D or 2D, with or without IBLANK; binary (single or double precision, either
// byte order, Fortran sequential records or plain C binary) or formatted (ASCII, Fortran
// list-directed: blanks or commas between values, repeat counts such as 2*-1.); and CFL3D's
// own grid layout (each block's "jdim kdim idim" before its coordinates, no block count),
// binary or formatted. Told apart by the file's first bytes and, binary, its size; the
// formatted layout by the first records and an exact count of the values: a read per block
// first (each block's values start on a line of their own), then one read for every block
// (a single WRITE of the whole grid: a block may start where the one before ended). Written:
// multi-grid 3D "whole" files, Fortran records, double precision, little- or big-endian.
// Specification: docs/formats/plot3d.md.
#pragma once
#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "grid/block_layout.hpp"

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
  bool formatted = false;  // ASCII, Fortran list-directed
  bool native = false;     // CFL3D's layout: each block's dimensions (j k i, j fastest) before its coordinates, no count
  // Formatted, one read for the whole grid (a single WRITE of every block's values): a block
  // may start on the line where the one before ended, or inside a repeat (r*v) that began there.
  bool stream = false;
  // Binary: byte offset of each block's x values. Formatted: of the line its values start on
  // (one read for the grid: of the value, or the repeat, it starts with), the values of that
  // repeat the blocks before took (coords_skip), and (coords_end) the byte after its last value.
  std::vector<std::int64_t> coords_at, coords_end, coords_skip;
};

// True when path is a PLOT3D grid (its first bytes, then its header read as read_header).
bool is_plot3d(const std::string& path);
// Reads the header and checks the file against it (binary: its size; formatted: every
// block's count of values); FormatError naming the file, the block or record, and the byte
// offset and line.
Grid read_header(const std::string& path);
// Block b's x, y and z (z of a 2D grid is 0), Fortran order, as doubles: its bytes (or lines)
// read once.
void read_block(const Grid& g, std::size_t b, std::array<std::vector<double>, 3>& xyz);
// A PLOT3D solution: a q file (per block a record of 4 reals, Mach number, angle of attack,
// Reynolds number and time, then the conserved variables: density, the momentum's 3 (2D: 2)
// components and the stagnation energy per volume) or a function file (per block its count
// of variables, then theirs). Binary (single or double, either byte order, Fortran records or
// C binary) or formatted (Fortran list-directed, as the grids); multi- or single-grid, 3D or
// 2D; told by its bytes.
struct Solution {
  std::string path;
  std::vector<BlockShape> blocks;
  bool function = false;
  int nvar = 0;
  int real_bytes = 8;
  bool big_endian = false;
  bool records = true;
  bool multi = true;
  int dimensions = 3;
  bool formatted = false;  // ASCII, Fortran list-directed
  double mach = 0, alpha = 0, reynolds = 0, time = 0;  // q files: the first block's
  // Per block: the byte of its first value (formatted: of the line it starts on) and, formatted,
  // the byte after its last.
  std::vector<std::int64_t> values_at, values_end;
  // The variables' names: SIDS's for q files (Density, MomentumX, ...), "function N" otherwise.
  std::vector<std::string> names() const;
};
// Reads a solution's header and checks the file's size against it (formatted: every block's
// count of values, the whole text read once); FormatError when no reading of it gives the
// file's bytes.
Solution read_solution(const std::string& path);
// The values of block b, one array per variable, Fortran order, as doubles.
void read_solution_block(const Solution& s, std::size_t b, std::vector<std::vector<double>>& vars);

// Writes a multi-grid 3D whole file (double precision, Fortran records) under a temporary
// name, renamed when complete. xyz(b, c, out) fills coordinate c of block b.
void write(const std::string& path, const std::vector<BlockShape>& blocks, bool big_endian,
           const std::function<void(std::size_t b, int c, std::vector<double>& out)>& xyz);

}  // namespace anabranch::plot3d
