// VTK XML StructuredGrid (.vts), one block and one frame per file, and the MultiBlock
// index (.vtm) that lists them: a multi-block frame as ParaView and VisIt open it without
// plugins. Binary arrays in the appended section, as the .vtu writer.
#pragma once
#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace anabranch::vts {

// One block: dims (ni, nj, nk) points; xyz(c, out) fills out with coordinate c of every
// point (Fortran order), values(v, out) variable v. real_bytes: 4 or 8. The file appears
// under its name only when complete.
void write_block(const std::string& path, const std::array<std::int64_t, 3>& dims, double time, int real_bytes,
                 const std::vector<std::string>& names, const std::function<void(int c, std::vector<double>& out)>& xyz,
                 const std::function<void(int v, std::vector<double>& out)>& values);
// The index: one entry per block (its name, its file relative to the index).
void write_index(const std::string& path, double time, const std::vector<std::pair<std::string, std::string>>& blocks);

}  // namespace anabranch::vts
