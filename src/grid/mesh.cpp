#include "grid/mesh.hpp"

#include "core/error.hpp"

namespace anabranch {

std::string trimmed(const std::string& s) {
  static const std::string blank(" \t\r\n\0", 5);
  auto b = s.find_first_not_of(blank);
  if (b == std::string::npos) return {};
  auto e = s.find_last_not_of(blank);
  return s.substr(b, e - b + 1);
}

std::string printable(const std::string& s) {
  static const char* hex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : s) {
    if (c >= 0x20 && c < 0x7F) {
      out += static_cast<char>(c);
    } else {
      out += "\\x";
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  return out;
}

std::string element_type_name(int ndp, int nplan) {
  switch (ndp) {
    case 2: return "segment";
    case 3: return "triangle";
    case 4: return nplan > 1 ? "tetrahedron" : "quadrilateral";
    case 6: return "prism";
    case 8: return "hexahedron";
    default: return std::to_string(ndp) + "-node element";
  }
}

void Mesh::check_sizes() const {
  auto bad = [](const char* what, std::size_t got, std::int64_t want) {
    throw UsageError(std::string("mesh array ") + what + " has " + std::to_string(got) + " entries, expected " +
                     std::to_string(want));
  };
  if (static_cast<std::int64_t>(ikle.size()) != nelem * ndp) bad("IKLE", ikle.size(), nelem * ndp);
  if (static_cast<std::int64_t>(ipobo.size()) != npoin) bad("IPOBO", ipobo.size(), npoin);
  if (static_cast<std::int64_t>(x.size()) != npoin) bad("X", x.size(), npoin);
  if (static_cast<std::int64_t>(y.size()) != npoin) bad("Y", y.size(), npoin);
}

Mesh extrude(const Mesh& m2, int nplan) {
  Mesh m;
  m.ndp = 6;
  m.nplan = nplan;
  m.nelem = m2.nelem * (nplan - 1);
  m.npoin = m2.npoin * nplan;
  const auto np = static_cast<std::int32_t>(m2.npoin);
  m.ikle.reserve(static_cast<std::size_t>(m.nelem * 6));
  for (int l = 0; l + 1 < nplan; ++l)
    for (std::int64_t e = 0; e < m2.nelem; ++e) {
      for (int k = 0; k < 3; ++k) m.ikle.push_back(m2.ikle[static_cast<std::size_t>(e * 3 + k)] + l * np);
      for (int k = 0; k < 3; ++k) m.ikle.push_back(m2.ikle[static_cast<std::size_t>(e * 3 + k)] + (l + 1) * np);
    }
  m.ipobo.assign(static_cast<std::size_t>(m.npoin), 0);
  for (int l = 0; l < nplan; ++l) {
    m.x.insert(m.x.end(), m2.x.begin(), m2.x.end());
    m.y.insert(m.y.end(), m2.y.begin(), m2.y.end());
  }
  return m;
}

}  // namespace anabranch
