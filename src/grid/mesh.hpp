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

// Node coordinates kept in the precision of their file: single-precision files cost half
// the memory of doubles, and the values written back are the same bits.
class Coordinates {
 public:
  Coordinates() = default;
  explicit Coordinates(std::vector<double> v) : d_(std::move(v)) {}
  explicit Coordinates(std::vector<float> v) : f_(std::move(v)) {}
  double operator[](std::size_t i) const { return d_.empty() ? static_cast<double>(f_[i]) : d_[i]; }
  std::size_t size() const { return d_.empty() ? f_.size() : d_.size(); }
  void clear() {
    std::vector<double>().swap(d_);
    std::vector<float>().swap(f_);
  }

 private:
  std::vector<double> d_;
  std::vector<float> f_;
};

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

// A 2D triangle mesh extruded to nplan planes of prisms, as TELEMAC-3D and gretel lay them
// out: layer after layer, each prism a triangle's nodes on plane l then on plane l+1, the
// coordinates repeated on every plane, IPOBO 0.
Mesh extrude(const Mesh& m2, int nplan);

}  // namespace anabranch
