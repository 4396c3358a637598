// A Tecplot binary file of finite-element zones as a mesh result: a zone a frame, every zone
// of one mesh (the first zone's X, Y and connectivity), the variables after X and Y. Written
// by the tecplot strategy (io/strategy_tecplot.cpp), whose dataset auxiliary record
// "anabranch.serafin" gives back the SERAFIN header's own facts; other writers' files get a
// header made from the file (names cut or padded to SERAFIN's 16 characters, no units, no
// boundary numbering: IPOBO 0). Specification: docs/formats/tecplot.md.
#include <algorithm>
#include <cstring>

#include "core/byteorder.hpp"
#include "core/error.hpp"
#include "core/io.hpp"
#include "formats/tecplot.hpp"
#include "h5/results.hpp"

namespace anabranch::pio {
namespace {

using tecplot::Format;
using tecplot::ZoneType;

std::string padded(std::string s, std::size_t n) {
  s.resize(n, ' ');
  return s;
}

class TecplotResult final : public ResultFile {
 public:
  explicit TecplotResult(const std::string& path) : src_(path), file_(tecplot::read(src_)) {
    const auto& zones = file_.zones;
    const auto zone = [&](std::size_t k) { return "zone " + std::to_string(k + 1) + " ('" + zones[k].name + "')"; };
    const auto refuse = [&](const std::string& why) { throw FormatError(path + ": not a mesh result: " + why); };
    const tecplot::Zone& z0 = zones.front();
    if (z0.type == ZoneType::Ordered)
      refuse(zone(0) + " is ORDERED: a file of ordered zones is a multi-block grid (anabranch reads it as blocks: convert it to .h5 or .cgns)");
    if (file_.big_endian) refuse("its values are big-endian (anabranch reads little-endian Tecplot files)");
    if (file_.variables.size() < 2) refuse("it has " + std::to_string(file_.variables.size()) + " variables (X and Y at least)");
    for (std::size_t k = 0; k < zones.size(); ++k) {
      const auto& z = zones[k];
      if (z.type != z0.type || z.nodes != z0.nodes || z.elements != z0.elements)
        refuse(zone(k) + " is " + tecplot::zone_type_name(z.type) + " of " + std::to_string(z.nodes) + " nodes and " + std::to_string(z.elements) +
               " elements, " + zone(0) + " " + tecplot::zone_type_name(z0.type) + " of " + std::to_string(z0.nodes) + " and " +
               std::to_string(z0.elements) + ": a mesh result's zones are frames of one mesh");
      for (std::size_t v = 0; v < file_.variables.size(); ++v) {
        if (z.passive[v]) refuse(zone(k) + ": variable '" + file_.variables[v] + "' is passive (it has no values)");
        if (z.formats[v] != Format::Float && z.formats[v] != Format::Double)
          refuse(zone(k) + ": variable '" + file_.variables[v] + "' is not FLOAT or DOUBLE");
      }
    }
    // The header: the writer's own facts where it left them, else made from the file.
    h_.npoin = z0.nodes;
    h_.nelem = z0.elements;
    bool double_precision = false, mixed = false;
    for (const auto& z : zones)
      for (std::size_t v = 2; v < file_.variables.size(); ++v) {
        const bool d = z.formats[v] == Format::Double;
        if (&z != &zones.front() || v != 2) mixed = mixed || d != double_precision;
        double_precision = d;
      }
    if (file_.variables.size() == 2) double_precision = z0.formats[0] == Format::Double;
    h_.precision = double_precision ? Precision::Double : Precision::Single;
    rs_ = double_precision ? 8 : 4;
    in_place_ = !mixed;
    const std::string* facts = nullptr;
    for (const auto& a : file_.aux)
      if (a.first == "anabranch.serafin") facts = &a.second;
    if (facts) {
      try {
        serafin::read_header_facts(*facts, h_);
      } catch (const std::exception& e) {
        throw FormatError(path + ": its auxiliary record anabranch.serafin is damaged: " + e.what());
      }
      if (h_.nvar() != static_cast<int>(file_.variables.size()) - 2)
        throw FormatError(path + ": its auxiliary record anabranch.serafin names " + std::to_string(h_.nvar()) + " variables, the file has " +
                          std::to_string(file_.variables.size() - 2) + " after X and Y");
    } else {
      h_.set_title(file_.title);
      for (std::size_t v = 2; v < file_.variables.size(); ++v) h_.variables.push_back({padded(file_.variables[v], 16), padded("", 16)});
      h_.byte_order = ByteOrder::Big;  // SERAFIN's usual
    }
    const bool three_d = z0.type == ZoneType::FEBrick || z0.type == ZoneType::FETetrahedron;
    if (three_d && h_.nplan() <= 1)
      refuse(zone(0) + " is " + tecplot::zone_type_name(z0.type) + " and the file does not say how its nodes make planes (SERAFIN's 3D meshes are "
             "layers of one 2D mesh; files written by anabranch say it)");
    h_.ndp = z0.type == ZoneType::FEBrick ? 6 : tecplot::nodes_per_element(z0.type);
    for (const auto& z : zones) times_.push_back(z.time);
    if (tecplot::frames_said(file_) == 0) times_.clear();  // the mesh alone: its zone's variables never written
  }

  const char* format() const override { return "tecplot"; }
  const std::string& name() const override { return src_.name(); }
  std::int64_t file_bytes() const override { return src_.size(); }
  const serafin::Header& header() const override { return h_; }
  std::int64_t frame_count() const override { return static_cast<std::int64_t>(times_.size()); }
  std::vector<double> times() const override { return times_; }
  Mesh read_mesh() const override {
    const tecplot::Zone& z = file_.zones.front();
    Mesh m;
    m.nelem = h_.nelem;
    m.npoin = h_.npoin;
    m.ndp = h_.ndp;
    m.nplan = h_.nplan();
    m.x.resize(static_cast<std::size_t>(h_.npoin));
    m.y.resize(m.x.size());
    m.ipobo.assign(m.x.size(), 0);
    values(0, 0, 0, h_.npoin, m.x.data(), 0);
    values(0, 1, 0, h_.npoin, m.y.data(), 0);
    const int npe = tecplot::nodes_per_element(z.type);
    std::vector<std::int32_t> c(static_cast<std::size_t>(z.connectivity_values()));
    src_.read_at(z.connectivity_at, c.data(), c.size() * 4);
    to_order<4>(reinterpret_cast<unsigned char*>(c.data()), c.size(), ByteOrder::Little);
    m.ikle.resize(static_cast<std::size_t>(h_.nelem * h_.ndp));
    for (std::int64_t e = 0; e < h_.nelem; ++e) {
      const std::int32_t* r = c.data() + e * npe;
      std::int32_t* o = m.ikle.data() + e * h_.ndp;
      if (h_.ndp == 6) {  // a prism as a brick: nodes 1 2 3 3 4 5 6 6
        if (r[3] != r[2] || r[7] != r[6])
          throw FormatError(name(), "the connectivity of zone 1", z.connectivity_at + e * npe * 4,
                            "element " + std::to_string(e + 1) + " is a brick, not a prism (nodes 3 and 4, 7 and 8 the same): SERAFIN holds prisms");
        std::int32_t* to = o;
        for (const int k : {0, 1, 2, 4, 5, 6}) *to++ = r[k] + 1;
      } else {
        for (int k = 0; k < h_.ndp; ++k) o[k] = r[k] + 1;
      }
      for (int k = 0; k < h_.ndp; ++k)
        if (o[k] < 1 || o[k] > h_.npoin)
          throw FormatError(name(), "the connectivity of zone 1", z.connectivity_at + e * npe * 4,
                            "element " + std::to_string(e + 1) + " names node " + std::to_string(o[k] - 1) + " of " + std::to_string(h_.npoin) + " (0-based)");
    }
    return m;
  }
  void read_values(std::int64_t frame, int var, std::int64_t first, std::int64_t count, float* out) const override {
    values(frame, var, first, count, out, 2);
  }
  void read_values(std::int64_t frame, int var, std::int64_t first, std::int64_t count, double* out) const override {
    values(frame, var, first, count, out, 2);
  }
  std::vector<std::int64_t> in_place(std::int64_t frame, int var) const override {
    if (!in_place_) return {};
    check(frame, var + 2);
    return {file_.zones[static_cast<std::size_t>(frame)].values_at[static_cast<std::size_t>(var + 2)]};
  }
  std::int64_t in_place_bytes() const override { return in_place_ ? h_.npoin * rs_ : 0; }
  std::map<std::string, std::string> extras() const override {
    std::map<std::string, std::string> e;
    e["tecplot_version"] = std::to_string(file_.version);
    e["zone_type"] = tecplot::zone_type_name(file_.zones.front().type);
    e["title"] = file_.title;
    return e;
  }

 private:
  void check(std::int64_t frame, std::size_t var) const {
    if (frame < 0 || frame >= (var < 2 ? 1 : frame_count()) || var >= file_.variables.size())
      throw UsageError("frame " + std::to_string(frame) + " variable " + std::to_string(static_cast<long long>(var) - 2) + " out of range in " + name());
  }
  // Nodes [first, first + count) of variable `var` (+ `skip`: past X and Y) in frame f.
  template <class T>
  void values(std::int64_t frame, int var, std::int64_t first, std::int64_t count, T* out, int skip) const {
    const auto v = static_cast<std::size_t>(var + skip);
    check(frame, v);
    if (first < 0 || count < 0 || first + count > h_.npoin) throw UsageError("nodes out of range in " + name());
    const tecplot::Zone& z = file_.zones[static_cast<std::size_t>(frame)];
    const int bytes = tecplot::format_bytes(z.formats[v]);
    std::vector<unsigned char> raw(static_cast<std::size_t>(count * bytes));
    src_.read_at(z.values_at[v] + first * bytes, raw.data(), raw.size());
    for (std::int64_t i = 0; i < count; ++i)
      out[i] = bytes == 8 ? static_cast<T>(load<double>(raw.data() + 8 * i, ByteOrder::Little)) : static_cast<T>(load<float>(raw.data() + 4 * i, ByteOrder::Little));
  }

  FileSource src_;
  tecplot::File file_;
  serafin::Header h_;
  std::vector<double> times_;
  int rs_ = 4;
  bool in_place_ = true;
};

}  // namespace

bool tecplot_file(const std::string& path) {
  const FileSource in(path);
  return tecplot::is_tecplot(in);
}

std::unique_ptr<ResultFile> open_tecplot_result(const std::string& path) { return std::make_unique<TecplotResult>(path); }

}  // namespace anabranch::pio
