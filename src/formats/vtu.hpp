// VTK XML UnstructuredGrid (.vtu), one frame per file: what ParaView, VisIt and meshio
// open without plugins. Binary arrays in the appended section (raw, little-endian UInt64
// size headers), so writing costs one pass over the values.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "grid/mesh.hpp"
#include "formats/serafin.hpp"

namespace anabranch::vtu {

// Text for an XML attribute: & < > " as entities, control and non-ASCII bytes as '_'
// (the VTK XML, VTS and XDMF writers).
std::string xml_escape(const std::string& s);

// VTK's cell type for SERAFIN elements of ndp nodes (nplan > 1: a 3D mesh); UsageError for
// kinds VTK cannot show.
std::uint8_t cell_type(int ndp, int nplan);
// Node k of the VTK cell is node order[k] of the SERAFIN element (0-based; its own inverse).
// TELEMAC's prisms have their bottom triangle counter-clockwise seen from above (its normal
// points up, into the prism); VTK's wedge wants the first triangle's normal pointing away
// from the second: the second and third nodes of each triangle trade places.
const int* node_order(int ndp, int nplan);

// Writes mesh and one frame: values(v, out) fills out with the NPOIN values of variable v.
// In 3D the first variable (the elevation) gives the points' Z. The file appears under its
// name only when complete.
void write(const std::string& path, const serafin::Header& header, const Mesh& mesh, double time,
           const std::function<void(int var, std::vector<double>& out)>& values);

}  // namespace anabranch::vtu
