// The mesh model shared by every format: TELEMAC's names (NELEM, NPOIN, NDP, IKLE, IPOBO,
// NPLAN) with 1-based node numbers, as TELEMAC users know them.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace anabranch {

enum class Precision { Single, Double };

inline int real_size(Precision p) { return p == Precision::Single ? 4 : 8; }
inline const char* to_string(Precision p) { return p == Precision::Single ? "single" : "double"; }

// One result variable: name and unit, each a 16-character field as SERAFIN stores them
// (blank padded). Use trimmed() for display.
struct Variable {
  std::string name;
  std::string unit;
};

std::string trimmed(const std::string& s);
// Printable ASCII kept, every other byte written as \xNN (for titles with binary garbage).
std::string printable(const std::string& s);

// Element type from the number of nodes per element and the number of planes.
std::string element_type_name(int ndp, int nplan);

struct Mesh {
  std::int64_t nelem = 0;  // NELEM: number of elements
  std::int64_t npoin = 0;  // NPOIN: number of nodes (all planes in 3D)
  int ndp = 0;             // NDP: nodes per element
  int nplan = 1;           // NPLAN: planes of a 3D prism mesh (1 in 2D)
  std::vector<std::int32_t> ikle;   // IKLE: nelem*ndp node numbers, 1-based, element after element
  std::vector<std::int32_t> ipobo;  // IPOBO: boundary number per node (0 inside), or KNOLG in a subdomain
  std::vector<double> x, y;         // node coordinates (relative to the IPARAM(3), (4) origin)

  std::int64_t npoin2() const { return nplan > 1 ? npoin / nplan : npoin; }
  std::int64_t nelem2() const { return nplan > 1 ? nelem / (nplan - 1) : nelem; }
  // Throws UsageError if array sizes disagree with the counts.
  void check_sizes() const;
};

}  // namespace anabranch
