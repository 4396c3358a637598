// The CGNS tree of a multi-block file, as bytes. See cgns.hpp.
#include "blockformats/cgns.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <cstring>
#include <map>

#include "core/error.hpp"
#include "formats/hdf5_bytes.hpp"

namespace anabranch::cgns {

namespace h = hdf5_bytes;

std::string sids_name(const std::string& name) {
  static const std::map<std::string, std::string> known = {
      {"rho", "Density"}, {"density", "Density"}, {"ro", "Density"}, {"r", "Density"},
      {"u", "VelocityX"}, {"vx", "VelocityX"}, {"velocityx", "VelocityX"}, {"velocity u", "VelocityX"},
      {"v", "VelocityY"}, {"vy", "VelocityY"}, {"velocityy", "VelocityY"}, {"velocity v", "VelocityY"},
      {"w", "VelocityZ"}, {"vz", "VelocityZ"}, {"velocityz", "VelocityZ"}, {"velocity w", "VelocityZ"},
      {"p", "Pressure"}, {"pressure", "Pressure"}, {"pres", "Pressure"},
      {"t", "Temperature"}, {"temperature", "Temperature"}, {"temp", "Temperature"},
      {"rhou", "MomentumX"}, {"rho_u", "MomentumX"}, {"ru", "MomentumX"}, {"momentumx", "MomentumX"},
      {"rhov", "MomentumY"}, {"rho_v", "MomentumY"}, {"rv", "MomentumY"}, {"momentumy", "MomentumY"},
      {"rhow", "MomentumZ"}, {"rho_w", "MomentumZ"}, {"rw", "MomentumZ"}, {"momentumz", "MomentumZ"},
      {"rhoe", "EnergyStagnationDensity"}, {"rho_e", "EnergyStagnationDensity"}, {"re", "EnergyStagnationDensity"},
      {"e", "EnergyStagnationDensity"}, {"rhoet", "EnergyStagnationDensity"},
      {"mach", "Mach"}, {"entropy", "Entropy"}, {"enthalpy", "Enthalpy"},
      {"nut", "ViscosityEddyKinematic"}, {"nu_t", "ViscosityEddyKinematic"}, {"mut", "ViscosityEddy"}, {"mu_t", "ViscosityEddy"},
      {"vist3d", "ViscosityEddy"}, {"k", "TurbulentEnergyKinetic"}, {"tke", "TurbulentEnergyKinetic"},
      {"epsilon", "TurbulentDissipation"}, {"omega", "TurbulentDissipationRate"}, {"nutilde", "TurbulentSANuTilde"}};
  std::string lower = name;
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  const auto it = known.find(lower);
  return it == known.end() ? name : it->second;
}

void finish_index(std::string& index, std::int64_t end) {
  const std::string placeholder = kEndPlaceholder;
  const auto at = index.find(placeholder);
  if (at == std::string::npos) throw std::logic_error("a CGNS index without its end's placeholder");
  char digits[32];
  std::snprintf(digits, sizeof digits, "%020lld", static_cast<long long>(end));
  index.replace(at + placeholder.size() - 21, 20, digits);
}

std::int64_t index_end(const std::string& index) {
  const std::string key = "\"tree_end\":\"";
  const auto at = index.find(key);
  if (at == std::string::npos || at + key.size() + 20 > index.size()) return -1;
  return std::atoll(index.substr(at + key.size(), 20).c_str());
}

std::vector<std::string> field_names(const std::vector<std::string>& variables) {
  static const std::map<std::string, std::string> telemac = {{"VELOCITY U", "VelocityX"}, {"VELOCITY V", "VelocityY"},
                                                             {"VELOCITY W", "VelocityZ"}};
  std::vector<std::string> out;
  for (const auto& v : variables) {
    std::string t = v.substr(0, v.find_last_not_of(' ') == std::string::npos ? 0 : v.find_last_not_of(' ') + 1);
    const auto it = telemac.find(t);
    std::string name = it != telemac.end() ? it->second : sids_name(t);
    std::replace(name.begin(), name.end(), '/', '_');
    if (name.empty()) name = "variable";
    name = name.substr(0, 32);
    std::string unique = name;
    for (int k = 2; std::find(out.begin(), out.end(), unique) != out.end(); ++k) {
      const std::string tail = " (" + std::to_string(k) + ")";
      unique = name.substr(0, 32 - tail.size()) + tail;
    }
    out.push_back(unique);
  }
  return out;
}

namespace {

// The dimensional exponents (mass, length, time, temperature, angle) of a SIDS quantity;
// false for a name SIDS does not define (or a nondimensional one: Mach).
bool exponents_of(const std::string& sids, std::array<double, 5>& out) {
  static const std::map<std::string, std::array<double, 5>> table = {
      {"Density", {1, -3, 0, 0, 0}}, {"VelocityX", {0, 1, -1, 0, 0}}, {"VelocityY", {0, 1, -1, 0, 0}}, {"VelocityZ", {0, 1, -1, 0, 0}},
      {"Pressure", {1, -1, -2, 0, 0}}, {"Temperature", {0, 0, 0, 1, 0}}, {"MomentumX", {1, -2, -1, 0, 0}},
      {"MomentumY", {1, -2, -1, 0, 0}}, {"MomentumZ", {1, -2, -1, 0, 0}}, {"EnergyStagnationDensity", {1, -1, -2, 0, 0}},
      {"Entropy", {1, 2, -2, -1, 0}}, {"Enthalpy", {0, 2, -2, 0, 0}}, {"ViscosityEddyKinematic", {0, 2, -1, 0, 0}},
      {"ViscosityEddy", {1, -1, -1, 0, 0}}, {"TurbulentEnergyKinetic", {0, 2, -2, 0, 0}}, {"TurbulentDissipation", {0, 2, -3, 0, 0}},
      {"TurbulentDissipationRate", {0, 0, -1, 0, 0}}, {"TurbulentSANuTilde", {0, 2, -1, 0, 0}},
      {"CoordinateX", {0, 1, 0, 0, 0}}, {"CoordinateY", {0, 1, 0, 0, 0}}, {"CoordinateZ", {0, 1, 0, 0, 0}}};
  const auto it = table.find(sids);
  if (it == table.end()) return false;
  out = it->second;
  return true;
}

// The writer's own names, kept in a Descriptor beside the SIDS ones: a file read back names
// its variables as they were written.
constexpr const char* kNamesDescriptor = "anabranch_variables";

using Links = std::vector<std::pair<std::string, std::int64_t>>;

// A node's name, label or type: a null-terminated string of its own length (CGNS's library
// reads the attribute with the type it is stored with, and writes 33 bytes; the flags
// attribute it writes it never reads).
h::Attribute text_attribute(const std::string& name, const std::string& value) {
  return h::Attribute::string(name, value, static_cast<int>(value.size()) + 1);
}

// CGNS nodes over HDF5 groups, children first.
class Tree {
 public:
  explicit Tree(std::int64_t first) : w_(first) {}

  // A node: its " data" (if any, made by the caller) and its children; `parents` the nodes
  // that will hold it (a node shared by many: one object, several hard links).
  std::int64_t node(const std::string& name, const std::string& label, const char* type, std::int64_t data, const Links& children,
                    std::int64_t parents = 1) {
    Links links;
    if (data >= 0) links.emplace_back(" data", data);
    links.insert(links.end(), children.begin(), children.end());
    return w_.group({text_attribute("name", name), text_attribute("label", label), text_attribute("type", type)}, links, parents);
  }
  std::int64_t text(const std::string& name, const std::string& label, const std::string& value, const Links& children = {},
                    std::int64_t parents = 1) {
    return node(name, label, "C1", w_.compact({}, h::Type::i8(), {value.size()}, value), children, parents);
  }
  std::int64_t ints(const std::string& name, const std::string& label, const std::vector<std::int64_t>& v, std::vector<std::uint64_t> dims,
                    const Links& children = {}) {
    const bool wide = std::any_of(v.begin(), v.end(), [](std::int64_t x) { return x > 2147483647 || x < -2147483647; });
    std::string bytes;
    for (auto x : v) {
      unsigned char b[8];
      for (int i = 0; i < 8; ++i) b[i] = static_cast<unsigned char>((static_cast<std::uint64_t>(x) >> (8 * i)) & 0xff);
      bytes.append(reinterpret_cast<const char*>(b), wide ? 8 : 4);
    }
    return node(name, label, wide ? "I8" : "I4", w_.compact({}, wide ? h::Type::i64() : h::Type::i32(), std::move(dims), bytes), children);
  }
  std::int64_t reals(const std::string& name, const std::string& label, const std::vector<double>& v, const Links& children = {},
                     std::int64_t parents = 1) {
    std::string bytes(v.size() * 8, '\0');
    if (!v.empty()) std::memcpy(bytes.data(), v.data(), bytes.size());
    return node(name, label, "R8", w_.compact({}, h::Type::f64(), {v.size()}, bytes), children, parents);
  }
  // A DataArray_t of a block's values at `address` (dims: C order), with what says what its
  // values are (a node every array of the same quantity shares: `about`).
  // (Compressed: chunked as `stored` says, through `codec`.)
  std::int64_t array(const std::string& name, int real_bytes, const std::vector<std::uint64_t>& dims, std::int64_t address, const Links& about,
                     const std::vector<h::Filter>& codec = {}, const Stored* stored = nullptr) {
    const auto type = real_bytes == 8 ? h::Type::f64() : h::Type::f32();
    return node(name, "DataArray_t", real_bytes == 8 ? "R8" : "R4", data(type, dims, address, codec, stored), about);
  }
  // A DataArray_t's " data": contiguous at `address`, or (a codec given) chunked as stored,
  // through HDF5's byte shuffle and the codec.
  std::int64_t data(const h::Type& type, const std::vector<std::uint64_t>& dims, std::int64_t address, const std::vector<h::Filter>& codec,
                    const Stored* stored) {
    std::uint64_t count = 1;
    for (auto d : dims) count *= d;
    if (codec.empty() || count == 0) return w_.dataset({}, type, dims, address);
    std::vector<h::Filter> filters = {{2, 1, {static_cast<std::uint32_t>(type.bytes)}, {}}};  // shuffle, optional
    filters.insert(filters.end(), codec.begin(), codec.end());
    return w_.chunked({}, type, dims, stored->chunk, filters, stored->chunks);
  }
  // A contiguous dataset of bytes, hidden from CGNS's library (its name starts with a blank).
  Links hidden(const std::string& name, const h::Type& type, std::uint64_t count, std::int64_t address) {
    if (address < 0) return {};
    return {{name, w_.dataset({}, type, {count}, address)}};
  }
  std::int64_t root(const Links& children) {
    const std::string format("IEEE_LITTLE_32\0", 15);
    std::string version = "HDF5 Version 1.10.8";
    version.resize(33, '\0');
    Links links = {{" format", w_.compact({}, h::Type::i8(), {format.size()}, format)},
                   {" hdf5version", w_.compact({}, h::Type::i8(), {version.size()}, version)}};
    float v = 3.4f;
    std::string bytes(4, '\0');
    std::memcpy(bytes.data(), &v, 4);
    links.emplace_back("CGNSLibraryVersion",
                       node("CGNSLibraryVersion", "CGNSLibraryVersion_t", "R4", w_.compact({}, h::Type::f32(), {1}, bytes), {}));
    links.insert(links.end(), children.begin(), children.end());
    return w_.group({text_attribute("name", "HDF5 MotherNode"), text_attribute("label", "Root Node of HDF5 File"), text_attribute("type", "MT")},
                    links);
  }
  h::Writer& writer() { return w_; }

 private:
  h::Writer w_;
};

}  // namespace

// The writer's own names, one a line, where a field's name is not the variable's (kept beside
// the tree so that a file read back names its variables as written); "" where none differs.
static std::string kept_names(const std::vector<std::string>& fields, const std::vector<std::string>& variables) {
  std::string joined;
  bool renamed = false;
  for (std::size_t v = 0; v < fields.size(); ++v) {
    renamed = renamed || fields[v] != variables[v];
    joined += (v ? "\n" : "") + variables[v];
  }
  return renamed ? joined : "";
}

std::vector<hdf5_bytes::Filter> codec_filters(const Compression& c) {
  if (!c.on()) return {};
  if (c.codec == Compression::Codec::Zstd) return {{kZstdFilterId, 0, {kZstdLevel}, "zstd"}};
  return {{1, 1, {kDeflateLevel}, {}}};  // deflate, optional as HDF5 sets it
}

std::int64_t write_tree(const BlockFile& file, std::int64_t first, const std::function<void(std::int64_t, const std::string&)>& out,
                        std::int64_t& end) {
  Tree t(first);
  auto flush = [&](bool all) {
    if (!all && t.writer().bytes().size() < (std::size_t{8} << 20)) return;
    const std::int64_t at = t.writer().end() - static_cast<std::int64_t>(t.writer().bytes().size());
    out(at, t.writer().take());
  };
  const auto fields = field_names(file.variables);
  const std::string kept = kept_names(fields, file.variables);
  const auto steps = static_cast<std::int64_t>(file.times.size());
  std::string pointers;  // every zone's FlowSolutionPointers: 32 characters a frame
  char sol[33];
  for (std::int64_t f = 0; f < steps; ++f) {
    std::snprintf(sol, sizeof sol, "FlowSolution%06lld", static_cast<long long>(f));
    std::string padded(sol);
    padded.resize(32, ' ');
    pointers += padded;
  }
  // What every array of a quantity shares, one node each, hard-linked from each array: its
  // DimensionalExponents (or, for Mach, its DataClass). A file of many blocks holds them once,
  // not once an array (about 300 bytes each).
  static const char* axes[3] = {"CoordinateX", "CoordinateY", "CoordinateZ"};
  auto stored = [&](std::int64_t f, std::size_t b, int var) { return file.codec.empty() ? nullptr : &file.stored(f, b, var); };
  const auto nb = static_cast<std::int64_t>(file.blocks.size());
  std::map<std::array<double, 5>, std::int64_t> uses;  // exponents -> arrays that have them
  std::int64_t machs = 0;
  auto count = [&](const std::string& name, std::int64_t n) {
    std::array<double, 5> e;
    if (name == "Mach") machs += n;
    else if (exponents_of(name, e)) uses[e] += n;
  };
  for (const char* a : axes) count(a, nb);
  for (const auto& f : fields) count(f, nb * steps);
  std::map<std::array<double, 5>, std::int64_t> exponents;
  for (const auto& [e, n] : uses)
    exponents[e] = t.reals("DimensionalExponents", "DimensionalExponents_t", std::vector<double>(e.begin(), e.end()), {}, n);
  const std::int64_t nondimensional = machs ? t.text("DataClass", "DataClass_t", "NondimensionalParameter", {}, machs) : -1;
  auto about = [&](const std::string& name) {
    std::array<double, 5> e;
    if (name == "Mach") return Links{{"DataClass", nondimensional}};
    if (exponents_of(name, e)) return Links{{"DimensionalExponents", exponents.at(e)}};
    return Links{};
  };
  // Nodes every zone holds alike, once: ZoneType, and ZoneIterativeData (the frames' names).
  const std::int64_t zone_type = t.text("ZoneType", "ZoneType_t", "Structured", {}, nb);
  std::int64_t iterative = -1;
  if (steps > 0) {
    const std::int64_t p = t.node("FlowSolutionPointers", "DataArray_t", "C1",
                                  t.writer().compact({}, h::Type::i8(), {static_cast<std::uint64_t>(steps), 32}, pointers), {});
    iterative = t.node("ZoneIterativeData", "ZoneIterativeData_t", "MT", -1, {{"FlowSolutionPointers", p}}, nb);
  }
  // Volume blocks in "Base" (cell dimension 3), blocks one point thick in k in "Base2D" (CGNS
  // wants two points or more in every direction of a zone). Each base lists its zones in the
  // file's order (their creation order), and each zone's Ordinal is its block's place in the
  // file: CGNS's library hands zones out in the order of their names.
  Links zones[2];
  for (std::size_t b = 0; b < file.blocks.size(); ++b) {
    const BlockShape& s = file.blocks[b];
    const bool flat = s.dims[2] == 1;
    if (s.dims[0] < 2 || s.dims[1] < 2 || (s.dims[2] < 2 && !flat))
      throw UsageError("block " + std::to_string(s.id) + " (" + std::to_string(s.dims[0]) + " x " + std::to_string(s.dims[1]) + " x " +
                       std::to_string(s.dims[2]) + "): a CGNS zone has at least 2 points in i and j");
    const std::size_t cell = flat ? 2 : 3;
    std::vector<std::uint64_t> dims;  // C order: k, j, i
    for (std::size_t a = cell; a-- > 0;) dims.push_back(static_cast<std::uint64_t>(s.dims[a]));
    std::vector<std::int64_t> size;  // points, cells, boundary points, each per direction
    for (int row = 0; row < 3; ++row)
      for (std::size_t a = 0; a < cell; ++a) size.push_back(row == 0 ? s.dims[a] : row == 1 ? s.dims[a] - 1 : 0);
    Links children = {{"ZoneType", zone_type}, {"Ordinal", t.ints("Ordinal", "Ordinal_t", {static_cast<std::int64_t>(b + 1)}, {1})}};
    Links coords;
    for (int c = 0; c < 3; ++c)
      coords.emplace_back(axes[c], t.array(axes[c], file.real_bytes, dims, file.codec.empty() ? file.address(0, b, -(c + 1)) : -1,
                                           about(axes[c]), file.codec, stored(0, b, -(c + 1))));
    children.emplace_back("GridCoordinates", t.node("GridCoordinates", "GridCoordinates_t", "MT", -1, coords));
    for (std::int64_t f = 0; f < steps; ++f) {
      Links arrays;
      for (std::size_t v = 0; v < fields.size(); ++v)
        arrays.emplace_back(fields[v], t.array(fields[v], file.real_bytes, dims, file.codec.empty() ? file.address(f, b, static_cast<int>(v)) : -1,
                                               about(fields[v]), file.codec, stored(f, b, static_cast<int>(v))));
      std::snprintf(sol, sizeof sol, "FlowSolution%06lld", static_cast<long long>(f));
      children.emplace_back(sol, t.node(sol, "FlowSolution_t", "MT", -1, arrays));
    }
    if (steps > 0) children.emplace_back("ZoneIterativeData", iterative);
    const std::string name = "block_" + std::to_string(s.id);
    zones[flat ? 1 : 0].emplace_back(name, t.ints(name, "Zone_t", size, {3, cell}, children));
    flush(false);
  }
  Links bases;
  for (int flat = 0; flat < 2; ++flat) {
    if (zones[flat].empty()) continue;
    Links children = {{"DataClass", t.text("DataClass", "DataClass_t", "NormalizedByUnknownDimensional")}};
    if (!kept.empty()) children.emplace_back(kNamesDescriptor, t.text(kNamesDescriptor, "Descriptor_t", kept));
    if (steps > 0) {
      children.emplace_back("SimulationType", t.text("SimulationType", "SimulationType_t", "TimeAccurate"));
      const std::int64_t times = t.reals("TimeValues", "DataArray_t", file.times);
      children.emplace_back("BaseIterativeData", t.ints("BaseIterativeData", "BaseIterativeData_t", {steps}, {1}, {{"TimeValues", times}}));
    }
    children.insert(children.end(), zones[flat].begin(), zones[flat].end());
    const char* name = flat ? "Base2D" : "Base";
    bases.emplace_back(name, t.ints(name, "CGNSBase_t", {flat ? 2 : 3, 3}, {2}, children));
  }
  Links top = t.hidden(" anabranch", h::Type::i8(), file.index.size(), file.index_address);
  top.insert(top.end(), bases.begin(), bases.end());
  const std::int64_t root = t.root(top);
  flush(true);
  end = t.writer().end();
  return root;
}

std::int64_t write_tree(const MeshFile& file, std::int64_t first, const std::function<void(std::int64_t, const std::string&)>& out,
                        std::int64_t& end) {
  Tree t(first);
  const auto fields = field_names(file.variables);
  const std::string kept = kept_names(fields, file.variables);
  const auto steps = static_cast<std::int64_t>(file.times.size());
  std::vector<const char*> axes = {"CoordinateX", "CoordinateY"};
  if (file.three_d) axes.push_back("CoordinateZ");
  // Each quantity's exponents once, linked from each of its arrays (see the blocks' tree).
  std::map<std::array<double, 5>, std::int64_t> uses, exponents;
  std::array<double, 5> e;
  for (const char* a : axes)
    if (exponents_of(a, e)) uses[e] += 1;
  for (const auto& f : fields)
    if (exponents_of(f, e)) uses[e] += steps;
  for (const auto& [x, n] : uses)
    exponents[x] = t.reals("DimensionalExponents", "DimensionalExponents_t", std::vector<double>(x.begin(), x.end()), {}, n);
  auto about = [&](const std::string& name) {
    return exponents_of(name, e) ? Links{{"DimensionalExponents", exponents.at(e)}} : Links{};
  };
  const auto real = file.real_bytes == 8 ? h::Type::f64() : h::Type::f32();
  const char* real_name = file.real_bytes == 8 ? "R8" : "R4";
  const auto npoin = static_cast<std::uint64_t>(file.npoin);
  auto stored = [&](std::int64_t f, int var) { return file.codec.empty() ? nullptr : &file.stored(f, var); };
  Links coords;
  for (std::size_t c = 0; c < axes.size(); ++c) {
    const int var = -static_cast<int>(c + 1);
    coords.emplace_back(axes[c], t.node(axes[c], "DataArray_t", real_name,
                                        t.data(real, {npoin}, c == 0 ? file.x : c == 1 ? file.y : file.z, file.codec, stored(0, var)),
                                        about(axes[c])));
  }
  Links children = {{"ZoneType", t.text("ZoneType", "ZoneType_t", "Unstructured")},
                    {"GridCoordinates", t.node("GridCoordinates", "GridCoordinates_t", "MT", -1, coords)}};
  // One section of every element: TELEMAC's node order is CGNS's for triangles (TRI_3),
  // quadrangles (QUAD_4) and prisms (PENTA_6: the bottom triangle, then the top one above it).
  const int type = file.ndp == 3 ? 5 : file.ndp == 4 ? (file.three_d ? 10 : 7) : file.ndp == 6 ? 14 : file.ndp == 2 ? 3 : 0;
  if (type == 0) throw UsageError("CGNS has no element of " + std::to_string(file.ndp) + " nodes for this mesh");
  const std::int64_t range = t.ints("ElementRange", "IndexRange_t", {1, file.nelem}, {2});
  const std::int64_t conn = t.node("ElementConnectivity", "DataArray_t", "I4",
                                   t.data(h::Type::i32(), {static_cast<std::uint64_t>(file.nelem * file.ndp)}, file.connectivity, file.codec,
                                          stored(0, MeshFile::kConnectivity)),
                                   {});
  children.emplace_back("Elements", t.ints("Elements", "Elements_t", {type, 0}, {2}, {{"ElementRange", range}, {"ElementConnectivity", conn}}));
  char sol[33];
  std::string pointers;
  for (std::int64_t f = 0; f < steps; ++f) {
    Links arrays;
    for (std::size_t v = 0; v < fields.size(); ++v)
      arrays.emplace_back(fields[v], t.node(fields[v], "DataArray_t", real_name,
                                            t.data(real, {npoin}, file.codec.empty() ? file.address(f, static_cast<int>(v)) : -1, file.codec,
                                                   stored(f, static_cast<int>(v))),
                                            about(fields[v])));
    std::snprintf(sol, sizeof sol, "FlowSolution%06lld", static_cast<long long>(f));
    children.emplace_back(sol, t.node(sol, "FlowSolution_t", "MT", -1, arrays));
    std::string padded(sol);
    padded.resize(32, ' ');
    pointers += padded;
  }
  if (steps > 0) {
    const std::int64_t p = t.node("FlowSolutionPointers", "DataArray_t", "C1",
                                  t.writer().compact({}, h::Type::i8(), {static_cast<std::uint64_t>(steps), 32}, pointers), {});
    children.emplace_back("ZoneIterativeData", t.node("ZoneIterativeData", "ZoneIterativeData_t", "MT", -1, {{"FlowSolutionPointers", p}}));
  }
  const std::int64_t zone = t.ints("mesh", "Zone_t", {file.npoin, file.nelem, 0}, {3, 1}, children);
  Links base = {{"DataClass", t.text("DataClass", "DataClass_t", "NormalizedByUnknownDimensional")}};
  if (!kept.empty()) base.emplace_back(kNamesDescriptor, t.text(kNamesDescriptor, "Descriptor_t", kept));
  if (steps > 0) {
    base.emplace_back("SimulationType", t.text("SimulationType", "SimulationType_t", "TimeAccurate"));
    base.emplace_back("BaseIterativeData", t.ints("BaseIterativeData", "BaseIterativeData_t", {steps}, {1},
                                                  {{"TimeValues", t.reals("TimeValues", "DataArray_t", file.times)}}));
  }
  base.emplace_back("mesh", zone);
  Links top = t.hidden(" anabranch", h::Type::i8(), file.index.size(), file.index_address);
  if (!file.codec.empty())
    top.emplace_back(" ipobo", t.data(h::Type::i32(), {npoin}, -1, file.codec, stored(0, MeshFile::kIpobo)));
  else {
    const Links ipobo = t.hidden(" ipobo", h::Type::i32(), npoin, file.ipobo_address);
    top.insert(top.end(), ipobo.begin(), ipobo.end());
  }
  const int cell = file.three_d ? 3 : 2;
  top.emplace_back("Base", t.ints("Base", "CGNSBase_t", {cell, cell}, {2}, base));
  const std::int64_t root = t.root(top);
  const std::int64_t at = t.writer().end() - static_cast<std::int64_t>(t.writer().bytes().size());
  out(at, t.writer().take());
  end = t.writer().end();
  return root;
}

}  // namespace anabranch::cgns
