// Uniform refinement: every triangle split into 4 by its edge midpoints (the STBTEL
// operation). Prism meshes are refined through their 2D base, plane by plane.
// Memory: the edge table costs 4 bytes per edge plus 8 per node, on top of the meshes.
#pragma once
#include <cstdint>
#include <vector>

#include "grid/mesh.hpp"

namespace anabranch {

// The edges of a triangle mesh in CSR form: the row of node a (0-based) lists the nodes
// b > a joined to it, sorted. Edge ids follow row order.
struct EdgeTable {
  std::vector<std::int64_t> offset;  // npoin + 1
  std::vector<std::int32_t> other;   // 0-based
  std::vector<std::uint8_t> uses;    // elements sharing each edge (capped at 255)

  std::int64_t size() const { return static_cast<std::int64_t>(other.size()); }
  // Edge id of {a, b} (0-based nodes), or -1.
  std::int64_t find(std::int32_t a, std::int32_t b) const;
  bool is_boundary(std::int32_t a, std::int32_t b) const {
    auto e = find(a, b);
    return e >= 0 && uses[static_cast<std::size_t>(e)] == 1;
  }
};

// Edges of the triangles (1-based IKLE, `stride` ints per element, the first 3 used).
EdgeTable build_edges(const std::int32_t* ikle, std::int64_t nelem, int stride, std::int64_t npoin);

struct Refinement {
  Mesh mesh;       // the refined mesh (IPOBO set from boundary_order)
  EdgeTable edges; // of the 2D base; the midpoint of edge e is node npoin2 + e + 1 of each plane
  std::int64_t npoin2_in = 0, npoin2_out = 0;
  // Boundary contour of the refined 2D mesh: for each entry the new node (1-based), the
  // input boundary entry it follows (from) and, for a midpoint, the entry that ends its
  // segment (next).
  struct Entry {
    std::int32_t node;
    std::int64_t from;
    std::int64_t next;  // -1 for an input node
  };
  std::vector<Entry> boundary;
};

// Refines `in` (triangles, or prisms stored layer after layer). boundary_order lists the
// 2D boundary nodes (1-based) in contour order, as in the .cli file; it may be empty.
Refinement refine(const Mesh& in, const std::vector<std::int32_t>& boundary_order);

// Interpolates one variable: out (refined NPOIN) from in (input NPOIN); midpoints get the
// mean of the edge ends, plane by plane.
template <class T>
void refine_values(const Refinement& r, int nplan, const T* in, T* out);

// Boundary order from IPOBO: nodes with IPOBO > 0 sorted by IPOBO, first plane only.
std::vector<std::int32_t> boundary_order_from_ipobo(const Mesh& mesh);

}  // namespace anabranch
