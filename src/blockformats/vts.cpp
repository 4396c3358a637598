#include "blockformats/vts.hpp"

#include <cstdio>

#include "core/error.hpp"
#include "core/io.hpp"
#include "formats/vtu.hpp"

namespace anabranch::vts {
void write_block(const std::string& path, const std::array<std::int64_t, 3>& dims, double time, int real_bytes,
                 const std::vector<std::string>& names, const std::function<void(int c, std::vector<double>& out)>& xyz,
                 const std::function<void(int v, std::vector<double>& out)>& values) {
  const auto n = static_cast<std::uint64_t>(dims[0] * dims[1] * dims[2]);
  const std::uint64_t rs = real_bytes == 4 ? 4 : 8;
  const char* real = rs == 4 ? "Float32" : "Float64";
  std::uint64_t at = 0;
  auto array = [&](const char* type, const std::string& name, int comps, std::uint64_t bytes) {
    std::string s = "        <DataArray type=\"" + std::string(type) + "\" Name=\"" + vtu::xml_escape(name) + "\"" +
                    (comps > 1 ? " NumberOfComponents=\"" + std::to_string(comps) + "\"" : std::string()) +
                    " format=\"appended\" offset=\"" + std::to_string(at) + "\"/>\n";
    at += 8 + bytes;
    return s;
  };
  const std::string extent = "0 " + std::to_string(dims[0] - 1) + " 0 " + std::to_string(dims[1] - 1) + " 0 " + std::to_string(dims[2] - 1);
  std::string xml = "<?xml version=\"1.0\"?>\n"
                    "<VTKFile type=\"StructuredGrid\" version=\"1.0\" byte_order=\"LittleEndian\" header_type=\"UInt64\">\n"
                    "  <StructuredGrid WholeExtent=\"" + extent + "\">\n    <FieldData>\n";
  xml += array("Float64", "TimeValue", 1, 8);
  xml.insert(xml.size() - 3, " NumberOfTuples=\"1\"");
  xml += "    </FieldData>\n    <Piece Extent=\"" + extent + "\">\n      <PointData>\n";
  for (const auto& name : names) xml += array(real, name, 1, n * rs);
  xml += "      </PointData>\n      <Points>\n";
  xml += array(real, "Points", 3, n * 3 * rs);
  xml += "      </Points>\n    </Piece>\n  </StructuredGrid>\n  <AppendedData encoding=\"raw\">\n   _";
  AtomicFileSink sink(path);
  sink.write(xml.data(), xml.size());
  auto size = [&](std::uint64_t bytes) { sink.write(&bytes, 8); };
  size(8);
  sink.write(&time, 8);
  std::vector<double> buf;
  std::vector<float> f;
  auto reals = [&](const std::vector<double>& d) {
    if (rs == 8) return sink.write(d.data(), d.size() * 8);
    f.assign(d.begin(), d.end());
    sink.write(f.data(), f.size() * 4);
  };
  for (std::size_t v = 0; v < names.size(); ++v) {
    values(static_cast<int>(v), buf);
    if (buf.size() != n) throw UsageError("variable " + names[v] + ": " + std::to_string(buf.size()) + " values for " + std::to_string(n) + " points");
    size(n * rs);
    reals(buf);
  }
  std::vector<double> pts(n * 3);
  for (int c = 0; c < 3; ++c) {
    xyz(c, buf);
    for (std::uint64_t i = 0; i < n; ++i) pts[3 * i + static_cast<std::uint64_t>(c)] = buf[i];
  }
  size(n * 3 * rs);
  reals(pts);
  const char tail[] = "\n  </AppendedData>\n</VTKFile>\n";
  sink.write(tail, sizeof tail - 1);
  sink.commit();
}

void write_index(const std::string& path, double time, const std::vector<std::pair<std::string, std::string>>& blocks) {
  std::string xml = "<?xml version=\"1.0\"?>\n<VTKFile type=\"vtkMultiBlockDataSet\" version=\"1.0\" byte_order=\"LittleEndian\">\n"
                    "  <vtkMultiBlockDataSet>\n";
  for (std::size_t b = 0; b < blocks.size(); ++b)
    xml += "    <DataSet index=\"" + std::to_string(b) + "\" name=\"" + vtu::xml_escape(blocks[b].first) + "\" file=\"" + vtu::xml_escape(blocks[b].second) + "\"/>\n";
  xml += "  </vtkMultiBlockDataSet>\n  <FieldData>\n    <DataArray type=\"Float64\" Name=\"TimeValue\" NumberOfTuples=\"1\" format=\"ascii\">" +
         [&] {
           char b[64];
           std::snprintf(b, sizeof b, "%.17g", time);
           return std::string(b);
         }() +
         "</DataArray>\n  </FieldData>\n</VTKFile>\n";
  AtomicFileSink sink(path);
  sink.write(xml.data(), xml.size());
  sink.commit();
}

}  // namespace anabranch::vts
