// VTK XML UnstructuredGrid (.vtu), one frame per file: what ParaView, VisIt and meshio
// open without plugins. Binary arrays in the appended section (raw, little-endian UInt64
// size headers), so writing costs one pass over the values.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "core/mesh.hpp"
#include "formats/serafin.hpp"

namespace anabranch::vtu {

// Writes mesh and one frame: values(v, out) fills out with the NPOIN values of variable v.
// In 3D the first variable (the elevation) gives the points' Z. The file appears under its
// name only when complete.
void write(const std::string& path, const serafin::Header& header, const Mesh& mesh, double time,
           const std::function<void(int var, std::vector<double>& out)>& values);

}  // namespace anabranch::vtu
