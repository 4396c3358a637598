// Synthetic meshes for tests, benchmarks and the demo: a meandering channel of perturbed
// triangles with a bathymetry, its boundary, optional prism layers, and smooth fields.
// Deterministic from the seed: the same options give the same bytes on every machine.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "grid/mesh.hpp"

namespace anabranch {

struct ChannelOptions {
  std::int64_t elements = 20000;  // wanted number of 2D triangles (the result is close to it)
  int planes = 1;                 // > 1: prisms on that many planes
  std::uint64_t seed = 1;
  double length = 10000.0, width = 2500.0;  // metres
};

// One node on the boundary contour, in order (counter-clockwise), with its kind.
enum class BoundaryKind { Wall, Inflow, Outflow };
struct BoundaryNode {
  std::int32_t node;  // 1-based node number (of the 2D mesh)
  BoundaryKind kind;
};

struct ChannelMesh {
  Mesh mesh;  // 2D triangles, or prisms (IKLE layer after layer, nodes plane after plane)
  std::vector<BoundaryNode> boundary;  // 2D contour
  int nx = 0, ny = 0;
};

ChannelMesh make_channel(const ChannelOptions& options);

// Names and units of the synthetic variables: 2D (U, V, depth, free surface, bottom,
// tracers) or 3D (elevation Z, U, V, W, tracers).
std::vector<Variable> synthetic_variables(int count, bool three_d);

// Values of synthetic variable `var` at time t for every node of mesh (NPOIN values).
// Smooth in space and time; works on any mesh, generated or not.
void synthetic_values(const Mesh& mesh, int var, bool three_d, double t, std::vector<double>& out);

}  // namespace anabranch
