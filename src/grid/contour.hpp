// Boundary contours of a 2D mesh, as TELEMAC's BIEF sees them: for every boundary point,
// the next point along its contour (domain on the left), the element holding the segment
// to it, and the numbering of liquid boundaries (TELEMAC's FRONT2 rules).
#pragma once
#include <cstdint>
#include <vector>

#include "grid/mesh.hpp"

namespace anabranch {

struct Contour {
  // Indexed by boundary point (0-based position in the boundary list, e.g. .cli line):
  std::vector<std::int32_t> next;    // KP1BOR: boundary point following this one on its contour
  std::vector<std::int32_t> prev;    // the boundary point before it
  std::vector<std::int32_t> nelbor;  // NELBOR: element (0-based) holding the segment point -> next
};

// nodes: the boundary points' node numbers (1-based), in any order. ikle: 2D elements
// (1-based, `stride` ints per element, first ndp used). Throws FormatError-like UsageError
// when a listed point has no boundary segment or a mesh boundary node is not listed.
Contour build_contour(const std::vector<std::int32_t>& nodes, const std::int32_t* ikle, std::int64_t nelem, int ndp,
                      int stride, const Coordinates& x, const Coordinates& y);

// Liquid boundary number of every boundary point (0: solid), numbered as TELEMAC's FRONT2
// does: each contour is walked from its south-westernmost point; a segment with a solid
// end (LIHBOR = 2) is solid; consecutive liquid points form one liquid boundary unless
// their LIHBOR or LIUBOR codes change.
std::vector<std::int32_t> number_liquid_boundaries(const Contour& c, const std::vector<std::int32_t>& nodes,
                                                   const std::vector<int>& lihbor, const std::vector<int>& liubor,
                                                   const Coordinates& x, const Coordinates& y);

}  // namespace anabranch
