#include "formats/vtu.hpp"

#include <cstdint>
#include <cstdio>

#include "core/error.hpp"
#include "core/io.hpp"

namespace anabranch::vtu {

std::uint8_t cell_type(int ndp, int nplan) {
  switch (ndp) {
    case 2: return 3;                   // VTK_LINE
    case 3: return 5;                   // VTK_TRIANGLE
    case 4: return nplan > 1 ? 10 : 9;  // VTK_TETRA (3D tetrahedra) or VTK_QUAD
    case 6: return 13;                  // VTK_WEDGE (TELEMAC prisms: bottom triangle, then top)
    case 8: return 12;                  // VTK_HEXAHEDRON
    default: throw UsageError("no VTK cell type for elements of " + std::to_string(ndp) + " nodes");
  }
}

const int* node_order(int ndp, int nplan) {
  static const int same[8] = {0, 1, 2, 3, 4, 5, 6, 7};
  static const int wedge[6] = {0, 2, 1, 3, 5, 4};
  return ndp == 6 && nplan > 1 ? wedge : same;
}

namespace {

// Little-endian bytes of the values as they are in memory (x86 and ARM are little-endian;
// big-endian hosts swap).
template <class T>
void put(ByteSink& sink, const T* v, std::size_t n) {
  if (native_byte_order() == ByteOrder::Little) {
    sink.write(v, n * sizeof(T));
    return;
  }
  for (std::size_t i = 0; i < n; ++i) {
    T x = v[i];
    to_order<sizeof(T)>(&x, 1, ByteOrder::Little);
    sink.write(&x, sizeof(T));
  }
}

void put_size(ByteSink& sink, std::uint64_t bytes) { put(sink, &bytes, 1); }

}  // namespace

std::string xml_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '&') out += "&amp;";
    else if (c == '<') out += "&lt;";
    else if (c == '>') out += "&gt;";
    else if (c == '"') out += "&quot;";
    else if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) > 0x7e) out += '_';
    else out += c;
  }
  return out;
}

void write(const std::string& path, const serafin::Header& h, const Mesh& mesh, double time,
           const std::function<void(int var, std::vector<double>& out)>& values) {
  mesh.check_sizes();
  const std::uint8_t type = cell_type(mesh.ndp, mesh.nplan);
  const bool single = h.precision == Precision::Single;
  const char* real = single ? "Float32" : "Float64";
  const std::uint64_t rs = single ? 4 : 8;
  const std::uint64_t npoin = static_cast<std::uint64_t>(mesh.npoin), nelem = static_cast<std::uint64_t>(mesh.nelem);
  const std::uint64_t ndp = static_cast<std::uint64_t>(mesh.ndp);
  // Appended offsets, each array preceded by its UInt64 byte count.
  std::uint64_t at = 0;
  std::string arrays;
  auto array = [&](const std::string& type_name, const std::string& name, int comps, std::uint64_t bytes) {
    char buf[512];
    std::snprintf(buf, sizeof buf, "        <DataArray type=\"%s\" Name=\"%s\"%s format=\"appended\" offset=\"%llu\"/>\n",
                  type_name.c_str(), xml_escape(name).c_str(),
                  comps > 1 ? (" NumberOfComponents=\"" + std::to_string(comps) + "\"").c_str() : "",
                  static_cast<unsigned long long>(at));
    at += 8 + bytes;
    return std::string(buf);
  };
  std::string xml = "<?xml version=\"1.0\"?>\n"
                    "<VTKFile type=\"UnstructuredGrid\" version=\"1.0\" byte_order=\"LittleEndian\" header_type=\"UInt64\">\n"
                    "  <UnstructuredGrid>\n    <FieldData>\n";
  xml += array("Float64", "TimeValue", 1, 8);
  xml.insert(xml.size() - 3, " NumberOfTuples=\"1\"");
  xml += "    </FieldData>\n";
  xml += "    <Piece NumberOfPoints=\"" + std::to_string(npoin) + "\" NumberOfCells=\"" + std::to_string(nelem) + "\">\n";
  xml += "      <PointData>\n";
  for (int v = 0; v < h.nvar(); ++v) xml += array(real, trimmed(h.variables[static_cast<std::size_t>(v)].name), 1, npoin * rs);
  xml += "      </PointData>\n      <Points>\n";
  xml += array(real, "Points", 3, npoin * 3 * rs);
  xml += "      </Points>\n      <Cells>\n";
  xml += array("Int64", "connectivity", 1, nelem * ndp * 8);
  xml += array("Int64", "offsets", 1, nelem * 8);
  xml += array("UInt8", "types", 1, nelem);
  xml += "      </Cells>\n    </Piece>\n  </UnstructuredGrid>\n  <AppendedData encoding=\"raw\">\n   _";

  AtomicFileSink sink(path);
  sink.write(xml.data(), xml.size());
  put_size(sink, 8);
  put(sink, &time, 1);
  std::vector<double> buf, z;
  std::vector<float> f;
  auto reals = [&](const std::vector<double>& d) {
    put_size(sink, d.size() * rs);
    if (!single) return put(sink, d.data(), d.size());
    f.assign(d.begin(), d.end());
    put(sink, f.data(), f.size());
  };
  for (int v = 0; v < h.nvar(); ++v) {
    values(v, buf);
    if (buf.size() != npoin) throw UsageError("variable " + std::to_string(v) + ": " + std::to_string(buf.size()) + " values for NPOIN " + std::to_string(npoin));
    if (v == 0 && mesh.nplan > 1) z = buf;
    reals(buf);
  }
  buf.resize(npoin * 3);
  for (std::uint64_t i = 0; i < npoin; ++i) {
    buf[3 * i] = mesh.x[i];
    buf[3 * i + 1] = mesh.y[i];
    buf[3 * i + 2] = z.empty() ? 0.0 : z[i];
  }
  reals(buf);
  std::vector<std::int64_t> ints;
  put_size(sink, nelem * ndp * 8);
  for (std::uint64_t e0 = 0; e0 < nelem; e0 += 1 << 20) {
    const std::uint64_t ne = std::min<std::uint64_t>(1 << 20, nelem - e0);
    ints.resize(ne * ndp);
    const int* order = node_order(static_cast<int>(ndp), mesh.nplan);
    for (std::uint64_t e = 0; e < ne; ++e)
      for (std::uint64_t k = 0; k < ndp; ++k) ints[e * ndp + k] = mesh.ikle[(e0 + e) * ndp + static_cast<std::uint64_t>(order[k])] - 1;
    put(sink, ints.data(), ints.size());
  }
  put_size(sink, nelem * 8);
  ints.resize(nelem);
  for (std::uint64_t e = 0; e < nelem; ++e) ints[e] = static_cast<std::int64_t>((e + 1) * ndp);
  put(sink, ints.data(), ints.size());
  put_size(sink, nelem);
  std::vector<std::uint8_t> types(nelem, type);
  sink.write(types.data(), types.size());
  const std::string tail = "\n  </AppendedData>\n</VTKFile>\n";
  sink.write(tail.data(), tail.size());
  sink.commit();
}

}  // namespace anabranch::vtu
