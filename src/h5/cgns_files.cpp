// CGNS files read by the engine. See cgns_files.hpp.
#include "h5/cgns_files.hpp"

#include "blockformats/cgns.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>

#include "core/byteorder.hpp"
#include "core/error.hpp"
#include "core/io.hpp"
#include "h5/h5.hpp"
#include "h5/vtkhdf.hpp"

namespace anabranch::pio::cgns_files {

using h5::check;
using h5::check_status;
using h5::Handle;

namespace {

// A node's children (name, object address), in their creation order where the group keeps
// it (CGNS's library lists them so), else in the order of their names.
std::vector<std::pair<std::string, haddr_t>> children(hid_t group) {
  std::vector<std::pair<std::string, haddr_t>> out;
  unsigned flags = 0;
  {
    Handle gcpl(H5Gget_create_plist(group));
    if (gcpl.valid()) H5Pget_link_creation_order(gcpl, &flags);
  }
  auto add = [](hid_t, const char* name, const H5L_info_t* info, void* data) -> herr_t {
    if (info->type == H5L_TYPE_HARD)
      static_cast<std::vector<std::pair<std::string, haddr_t>>*>(data)->emplace_back(name, info->u.address);
    return 0;
  };
  hsize_t at = 0;
  if (H5Literate(group, (flags & H5P_CRT_ORDER_TRACKED) ? H5_INDEX_CRT_ORDER : H5_INDEX_NAME, H5_ITER_INC, &at, add, &out) < 0) {
    H5Eclear2(H5E_DEFAULT);
    out.clear();
  }
  return out;
}

std::string label_of(hid_t node, const std::string& path) {
  return h5::has_attribute(node, "label") ? h5::read_string_attribute(node, "label", path) : std::string();
}

// A node's " data" as text (C1), or "" when it has none.
std::string text_of(hid_t node, const std::string& path) {
  if (!h5::exists(node, " data")) return "";
  Handle d(check(H5Dopen2(node, " data", H5P_DEFAULT), "cannot open a node's data in", path));
  Handle space(check(H5Dget_space(d), "H5Dget_space", path));
  const auto n = H5Sget_simple_extent_npoints(space);
  std::string s(static_cast<std::size_t>(std::max<hssize_t>(n, 0)), '\0');
  if (n > 0) check_status(H5Dread(d, H5T_NATIVE_UINT8, H5S_ALL, H5S_ALL, H5P_DEFAULT, s.data()), "cannot read a node's data in", path);
  while (!s.empty() && (s.back() == '\0' || s.back() == ' ')) s.pop_back();
  return s;
}

// A node's " data" as integers.
std::vector<std::int64_t> ints_of(hid_t node, const std::string& path) {
  if (!h5::exists(node, " data")) return {};
  Handle d(check(H5Dopen2(node, " data", H5P_DEFAULT), "cannot open a node's data in", path));
  Handle space(check(H5Dget_space(d), "H5Dget_space", path));
  std::vector<std::int64_t> v(static_cast<std::size_t>(std::max<hssize_t>(H5Sget_simple_extent_npoints(space), 0)));
  if (!v.empty()) check_status(H5Dread(d, H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data()), "cannot read a node's data in", path);
  return v;
}

struct Opened {
  Handle h;
  std::string name, label;
};

// The array of a DataArray_t: its " data" contiguous, little-endian reals of `points` values
// (C order, reversed dims); its offset, or -1 and `why`.
std::int64_t locate(hid_t array, const std::string& where, std::int64_t points, int& real_bytes, const std::string& path,
                    std::string& why) {
  if (!h5::exists(array, " data")) {
    why = where + " holds no values";
    return -1;
  }
  Handle d(check(H5Dopen2(array, " data", H5P_DEFAULT), "cannot open " + where + " in", path));
  Handle dcpl(check(H5Dget_create_plist(d), "H5Dget_create_plist", path));
  if (H5Pget_layout(dcpl) != H5D_CONTIGUOUS || H5Pget_nfilters(dcpl) > 0) {
    why = where + " is chunked or compressed";
    return -1;
  }
  Handle type(check(H5Dget_type(d), "H5Dget_type", path));
  const int rb = static_cast<int>(H5Tget_size(type));
  if (H5Tget_class(type) != H5T_FLOAT || H5Tget_order(type) != H5T_ORDER_LE || (rb != 4 && rb != 8)) {
    why = where + " is not little-endian float32 or float64";
    return -1;
  }
  if (real_bytes == 0) real_bytes = rb;
  if (rb != real_bytes) {
    why = where + " is float" + std::to_string(8 * rb) + " where other arrays are float" + std::to_string(8 * real_bytes);
    return -1;
  }
  Handle space(check(H5Dget_space(d), "H5Dget_space", path));
  if (H5Sget_simple_extent_npoints(space) != points) {
    why = where + " holds " + std::to_string(H5Sget_simple_extent_npoints(space)) + " values for its zone's " + std::to_string(points) +
          " (rind planes, or cell-centred)";
    return -1;
  }
  const haddr_t at = H5Dget_offset(d);
  if (at == HADDR_UNDEF) {
    why = where + " has no storage allocated";
    return -1;
  }
  return static_cast<std::int64_t>(at);
}

struct Zone {
  std::string name;
  BlockShape shape;
  std::int64_t ordinal = 0;
  std::vector<std::int64_t> arrays;  // grid x, y, z, then each solution's fields
};

bool walk(hid_t file, const std::string& path, BlockFileInfo& out, std::string& why) {
  Handle root(check(H5Gopen2(file, "/", H5P_DEFAULT), "cannot open / in", path));
  std::vector<Zone> zones;
  std::vector<std::string> solutions, fields, kept_names;  // the first zone's, which every zone must have
  std::vector<double> times;
  int real_bytes = 0;
  for (const auto& [bname, baddr] : children(root)) {
    if (bname.empty() || bname[0] == ' ') continue;
    Handle base(H5Oopen_by_addr(file, baddr));
    if (!base.valid() || label_of(base, path) != "CGNSBase_t") continue;
    const auto cell_phys = ints_of(base, path);
    for (const auto& [name, addr] : children(base)) {
      if (name.empty() || name[0] == ' ') continue;
      Handle node(check(H5Oopen_by_addr(file, addr), "cannot open " + bname + "/" + name + " in", path));
      const std::string label = label_of(node, path);
      if (label == "Descriptor_t" && name == "anabranch_variables") {
        kept_names.clear();
        const std::string t = text_of(node, path);
        std::size_t a = 0;
        for (std::size_t b; (b = t.find('\n', a)) != std::string::npos; a = b + 1) kept_names.push_back(t.substr(a, b - a));
        kept_names.push_back(t.substr(a));
      }
      if (label == "BaseIterativeData_t" && times.empty())
        for (const auto& [tn, ta] : children(node))
          if (tn == "TimeValues") {
            Handle tv(check(H5Oopen_by_addr(file, ta), "cannot open TimeValues in", path));
            Handle d(check(H5Dopen2(tv, " data", H5P_DEFAULT), "cannot open TimeValues in", path));
            Handle space(check(H5Dget_space(d), "H5Dget_space", path));
            times.resize(static_cast<std::size_t>(H5Sget_simple_extent_npoints(space)));
            if (!times.empty())
              check_status(H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, times.data()), "cannot read TimeValues in", path);
          }
      if (label != "Zone_t") continue;
      const std::string where = bname + "/" + name;
      const auto size = ints_of(node, path);
      const std::size_t cell = cell_phys.empty() ? 3 : static_cast<std::size_t>(cell_phys[0]);
      Zone z;
      z.name = name;
      if (size.size() != 3 * cell || cell < 1 || cell > 3) {
        why = where + ": its sizes are not those of a structured zone";
        return false;
      }
      for (std::size_t a = 0; a < cell; ++a) z.shape.dims[a] = size[a];
      const auto points = z.shape.points();
      std::vector<Opened> kids;
      for (const auto& [kn, ka] : children(node)) {
        if (kn.empty() || kn[0] == ' ') continue;
        Handle k(check(H5Oopen_by_addr(file, ka), "cannot open " + where + "/" + kn + " in", path));
        if (h5::has_attribute(k, "type") && h5::read_string_attribute(k, "type", path) == "LK") {
          why = where + "/" + kn + " is a link to another file (CGNS's library follows it)";
          return false;
        }
        const std::string kl = label_of(k, path);
        kids.push_back({std::move(k), kn, kl});
      }
      std::vector<std::string> zone_solutions;
      std::map<std::string, std::size_t> solution_node;
      std::size_t grid = kids.size();
      for (std::size_t i = 0; i < kids.size(); ++i) {
        const auto& k = kids[i];
        if (k.label == "ZoneType_t" && text_of(k.h, path) != "Structured") {
          why = where + " is not a structured zone";
          return false;
        }
        if (k.label == "Ordinal_t") {
          const auto o = ints_of(k.h, path);
          if (!o.empty()) z.ordinal = o[0];
        }
        if (k.label == "GridCoordinates_t" && (grid == kids.size() || k.name == "GridCoordinates")) grid = i;
        if (k.label == "FlowSolution_t") {
          std::string location = "Vertex";
          for (const auto& [fn, fa] : children(k.h)) {
            Handle f(check(H5Oopen_by_addr(file, fa), "cannot open a node in", path));
            const std::string fl = label_of(f, path);
            if (fl == "GridLocation_t") location = text_of(f, path);
            if (fl == "Rind_t") {
              why = where + "/" + k.name + " has rind planes";
              return false;
            }
          }
          if (location != "Vertex") {
            why = where + "/" + k.name + " is located at " + location + " (its cells' centres: CGNS's library reads those)";
            return false;
          }
          zone_solutions.push_back(k.name);
          solution_node[k.name] = i;
        }
        if (k.label == "ZoneIterativeData_t")  // the frames' order, where the file gives it
          for (const auto& [pn, pa] : children(k.h))
            if (pn == "FlowSolutionPointers") {
              Handle p(check(H5Oopen_by_addr(file, pa), "cannot open FlowSolutionPointers in", path));
              const std::string t = text_of(p, path);
              std::vector<std::string> order;
              for (std::size_t at = 0; at < t.size(); at += 32) {
                std::string s = t.substr(at, 32);
                while (!s.empty() && (s.back() == ' ' || s.back() == '\0')) s.pop_back();
                order.push_back(s);
              }
              if (!order.empty()) zone_solutions = order;
            }
      }
      if (grid == kids.size()) {
        why = where + " has no grid coordinates";
        return false;
      }
      std::map<std::string, haddr_t> coords;
      for (const auto& [cn, ca] : children(kids[grid].h)) coords[cn] = ca;
      for (const char* c : {"CoordinateX", "CoordinateY", "CoordinateZ"}) {
        if (!coords.count(c)) {
          why = where + "/" + kids[grid].name + " has no " + c;
          return false;
        }
        Handle a(check(H5Oopen_by_addr(file, coords[c]), "cannot open a coordinate in", path));
        z.arrays.push_back(locate(a, where + "/" + kids[grid].name + "/" + c, points, real_bytes, path, why));
        if (z.arrays.back() < 0) return false;
      }
      if (zones.empty()) {
        solutions = zone_solutions;
        if (!solutions.empty() && solution_node.count(solutions.at(0)))
          for (const auto& [fn, fa] : children(kids[solution_node[solutions.at(0)]].h)) {
            Handle f(check(H5Oopen_by_addr(file, fa), "cannot open a node in", path));
            if (label_of(f, path) == "DataArray_t") fields.push_back(fn);
          }
      }
      for (const auto& s : solutions) {
        if (!solution_node.count(s)) {
          why = where + " has no solution " + s + " (the first zone's)";
          return false;
        }
        std::map<std::string, haddr_t> have;
        for (const auto& [fn, fa] : children(kids[solution_node[s]].h)) have[fn] = fa;
        for (const auto& f : fields) {
          if (!have.count(f)) {
            why = where + "/" + s + " has no " + f + " (the first zone's)";
            return false;
          }
          Handle a(check(H5Oopen_by_addr(file, have[f]), "cannot open a field in", path));
          z.arrays.push_back(locate(a, where + "/" + s + "/" + f, points, real_bytes, path, why));
          if (z.arrays.back() < 0) return false;
        }
      }
      zones.push_back(std::move(z));
    }
  }
  if (zones.empty()) {
    why = "no structured zone in any base";
    return false;
  }
  // The file's order: the zones' Ordinals when every zone has one, else as listed.
  if (std::all_of(zones.begin(), zones.end(), [](const Zone& z) { return z.ordinal > 0; }))
    std::stable_sort(zones.begin(), zones.end(), [](const Zone& a, const Zone& b) { return a.ordinal < b.ordinal; });
  out = BlockFileInfo();
  out.path = path;
  out.format = "cgns";
  out.real_bytes = real_bytes;
  out.has_grid = true;
  // The writer's own names, where it kept them, and the fields in the order it wrote them:
  // each kept name's field is the one cgns::field_names gives it, wherever the file lists it
  // (a copy made by another program may list the fields in another order).
  out.variables = fields;
  if (kept_names.size() == fields.size()) {
    const auto mapped = cgns::field_names(kept_names);
    std::vector<std::size_t> at;
    for (const auto& m : mapped) {
      const auto it = std::find(fields.begin(), fields.end(), m);
      if (it == fields.end() || std::count(at.begin(), at.end(), static_cast<std::size_t>(it - fields.begin()))) break;
      at.push_back(static_cast<std::size_t>(it - fields.begin()));
    }
    if (at.size() == fields.size()) {
      out.variables = kept_names;
      const std::size_t nf = fields.size();
      for (auto& z : zones)
        for (std::size_t s = 0; s < solutions.size(); ++s) {
          std::vector<std::int64_t> listed(z.arrays.begin() + static_cast<std::ptrdiff_t>(3 + s * nf),
                                           z.arrays.begin() + static_cast<std::ptrdiff_t>(3 + (s + 1) * nf));
          for (std::size_t v = 0; v < nf; ++v) z.arrays[3 + s * nf + v] = listed[at[v]];
        }
    }
  }
  out.times = times.size() == solutions.size() ? times : std::vector<double>();
  for (std::size_t f = 0; out.times.size() < solutions.size(); ++f) out.times.push_back(static_cast<double>(f));
  const std::size_t narrays = 3 + solutions.size() * fields.size();
  out.block_offsets.assign(narrays * zones.size(), 0);
  for (std::size_t b = 0; b < zones.size(); ++b) {
    auto& z = zones[b];
    const auto digits = z.name.find_last_not_of("0123456789");
    z.shape.id = digits + 1 < z.name.size() && digits != std::string::npos ? std::stoll(z.name.substr(digits + 1)) : 0;
    out.blocks.push_back(z.shape);
    out.zones.push_back(z.name);
    for (std::size_t a = 0; a < narrays; ++a) out.block_offsets[a * zones.size() + b] = z.arrays[a];
  }
  // Ids from the zones' names (block_7 is block 7) when they are unique, else 1, 2, ...
  std::vector<std::int64_t> ids;
  for (const auto& s : out.blocks) ids.push_back(s.id);
  std::sort(ids.begin(), ids.end());
  if (ids.front() < 1 || std::adjacent_find(ids.begin(), ids.end()) != ids.end())
    for (std::size_t b = 0; b < out.blocks.size(); ++b) out.blocks[b].id = static_cast<std::int64_t>(b + 1);
  return true;
}

}  // namespace

void check_root(const std::string& path) {
  if (!vtkhdf::is_hdf5(path)) return;
  h5::quiet();
  const hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  if (f < 0) {
    H5Eclear2(H5E_DEFAULT);
    return;
  }
  Handle file(f);
  if (h5::exists(file, " format") && !h5::has_attribute(file, "label"))
    throw FormatError(path + ": an HDF5 file whose root node has no CGNS label (not a CGNS file; a copy by a tool that drops the "
                             "root's attributes, such as h5repack, is not one either)");
}

bool is_cgns_hdf5(const std::string& path) {
  if (!vtkhdf::is_hdf5(path)) return false;
  h5::quiet();
  const hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  if (f < 0) {
    H5Eclear2(H5E_DEFAULT);
    return false;
  }
  Handle file(f);
  // CGNS's " format" at the root; its root's label, unless a copy lost it (describe says so)
  return h5::exists(file, " format") &&
         (!h5::has_attribute(file, "label") || h5::read_string_attribute(file, "label", path) == "Root Node of HDF5 File");
}

namespace {

// anabranch's own description of a CGNS file it wrote (" anabranch", beside the tree), or "".
std::string description(hid_t file, const std::string& path) {
  if (!h5::exists(file, " anabranch")) return "";
  Handle d(check(H5Dopen2(file, " anabranch", H5P_DEFAULT), "cannot open the description in", path));
  Handle space(check(H5Dget_space(d), "H5Dget_space", path));
  std::string text(static_cast<std::size_t>(std::max<hssize_t>(H5Sget_simple_extent_npoints(space), 0)), '\0');
  check_status(H5Dread(d, H5T_NATIVE_UINT8, H5S_ALL, H5S_ALL, H5P_DEFAULT, text.data()), "cannot read the description in", path);
  return text;
}

constexpr const char* kMeshFormat = "anabranch-cgns-mesh";

}  // namespace

namespace {

// The file opened for a walk of its tree. HDF5 keeps every object header it reads, decoded
// (several KiB a dataset), for as long as its metadata cache holds the header, and sizes
// that cache by the headers' bytes on disk (up to 32 MiB of them): a walk of 32,768 zones
// held 1.6 GiB so, and ran slower. One pass over the tree needs no cache: 256 KiB, fixed.
hid_t open_for_walk(const std::string& path) {
  Handle fapl(check(H5Pcreate(H5P_FILE_ACCESS), "H5Pcreate", path));
  H5AC_cache_config_t c{};
  c.version = H5AC__CURR_CACHE_CONFIG_VERSION;
  check_status(H5Pget_mdc_config(fapl, &c), "H5Pget_mdc_config", path);
  c.set_initial_size = true;
  c.initial_size = c.max_size = 256 * 1024;
  c.min_size = std::min<std::size_t>(c.min_size, c.max_size);
  c.incr_mode = H5C_incr__off;
  c.flash_incr_mode = H5C_flash_incr__off;
  c.decr_mode = H5C_decr__off;
  check_status(H5Pset_mdc_config(fapl, &c), "H5Pset_mdc_config", path);
  return check(H5Fopen(path.c_str(), H5F_ACC_RDONLY, fapl), "cannot open", path);
}

// The last file described, while it is unchanged (its size, time and inode): a command
// asks whether a file is a block file, then for its description, then opens it; another
// writer's tree is walked once.
struct Described {
  std::string path;
  std::int64_t size = -1, mtime = 0, inode = 0;
  BlockFileInfo info;
  std::string why;
  bool ok = false;
};
std::mutex described_mu;
Described described;

bool stamp(const std::string& path, Described& d) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return false;
  d.path = path;
  d.size = st.st_size;
  d.mtime = static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
  d.inode = static_cast<std::int64_t>(st.st_ino);
  return true;
}

bool describe_now(const std::string& path, BlockFileInfo& out, std::string& why) {
  h5::quiet();
  Handle file(open_for_walk(path));
  check_root(path);
  const std::string text = description(file, path);
  if (text.find(kMeshFormat) != std::string::npos) {
    why = "a mesh result (one unstructured zone), read as a result file";
    return false;
  }
  if (!text.empty() && cgns::index_end(text) == file_size(path)) {  // anabranch's own, unchanged: its description
    try {
      out = BlockFileInfo::from_json(text);
    } catch (const std::exception& e) {
      throw FormatError(path + ": its description (\" anabranch\") is damaged: " + e.what());
    }
  } else if (!walk(file, path, out, why)) {
    return false;
  }
  out.path = path;
  out.file_bytes = file_size(path);
  if (!out.compression.empty()) return true;  // chunks, wherever HDF5's index says
  const std::int64_t end = std::max(out.frame_end(0, true), out.frames() ? out.frame_end(out.frames() - 1) : 0);
  if (out.file_bytes < end)
    throw FormatError(path, "arrays", out.file_bytes, "the file ends before its arrays do (at byte " + std::to_string(end) + ")");
  return true;
}

}  // namespace

bool describe(const std::string& path, BlockFileInfo& out, std::string& why) {
  Described now;
  const bool stamped = stamp(path, now);
  {
    std::lock_guard<std::mutex> lock(described_mu);
    if (stamped && described.path == now.path && described.size == now.size && described.mtime == now.mtime &&
        described.inode == now.inode) {
      out = described.info;
      why = described.why;
      return described.ok;
    }
  }
  now.ok = describe_now(path, now.info, now.why);
  out = now.info;
  why = now.why;
  if (stamped) {
    std::lock_guard<std::mutex> lock(described_mu);
    described = now;
  }
  return now.ok;
}

namespace {

// A mesh result the cgns strategy wrote: its arrays where its description says they are,
// read with pread; compressed, its chunked datasets through HDF5 (which decodes the chunks
// a read needs).
class MeshResult final : public ResultFile {
 public:
  MeshResult(const std::string& path, const std::string& text) : src_(path) {
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(text);
      serafin::read_header_facts(text, h_);
      const auto sizes = j["sizes"].get<std::vector<std::int64_t>>();
      h_.nelem = sizes.at(0);
      h_.npoin = sizes.at(1);
      h_.ndp = static_cast<int>(sizes.at(2));
      h_.sizes4 = static_cast<std::int32_t>(sizes.at(3));
      h_.precision = j["precision"] == "double" ? Precision::Double : Precision::Single;
      times_ = j["times"].get<std::vector<double>>();
      if (j.contains("compression")) {
        compression_ = j["compression"].get<std::string>();
      } else {
        const auto& a = j["arrays"];
        x_ = a["x"];
        y_ = a["y"];
        ipobo_ = a["ipobo"];
        conn_ = a["connectivity"];
        frames_ = a["frames"];
      }
    } catch (const std::exception& e) {
      throw FormatError(path + ": its description (\" anabranch\") is damaged: " + e.what());
    }
    rs_ = h_.precision == Precision::Double ? 8 : 4;
    if (!compression_.empty()) {
      std::vector<std::string> names;
      for (const auto& v : h_.variables) names.push_back(v.name);
      fields_ = cgns::field_names(names);
      const auto lock = h5::lock();
      file_ = Handle(check(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), "cannot open", path));
      return;
    }
    const std::int64_t end = frames_ + static_cast<std::int64_t>(times_.size()) * h_.nvar() * h_.npoin * rs_;
    if (src_.size() < end) throw FormatError(path, "arrays", src_.size(), "the file ends before its frames do (at byte " + std::to_string(end) + ")");
  }
  const char* format() const override { return "cgns"; }
  const std::string& name() const override { return src_.name(); }
  std::int64_t file_bytes() const override { return src_.size(); }
  const serafin::Header& header() const override { return h_; }
  std::int64_t frame_count() const override { return static_cast<std::int64_t>(times_.size()); }
  std::vector<double> times() const override { return times_; }
  Mesh read_mesh() const override {
    Mesh m;
    m.nelem = h_.nelem;
    m.npoin = h_.npoin;
    m.ndp = h_.ndp;
    m.nplan = h_.nplan();
    m.x.resize(static_cast<std::size_t>(h_.npoin));
    m.y.resize(m.x.size());
    m.ipobo.resize(m.x.size());
    m.ikle.resize(static_cast<std::size_t>(h_.nelem * h_.ndp));
    if (!compression_.empty()) {
      const auto lock = h5::lock();
      h5::read_range(dataset("/Base/mesh/GridCoordinates/CoordinateX/ data"), 0, h_.npoin, m.x.data(), H5P_DEFAULT, name());
      h5::read_range(dataset("/Base/mesh/GridCoordinates/CoordinateY/ data"), 0, h_.npoin, m.y.data(), H5P_DEFAULT, name());
      h5::read_range(dataset("/ ipobo"), 0, h_.npoin, m.ipobo.data(), H5P_DEFAULT, name());
      h5::read_range(dataset("/Base/mesh/Elements/ElementConnectivity/ data"), 0, h_.nelem * h_.ndp, m.ikle.data(), H5P_DEFAULT, name());
      return m;
    }
    reals(x_, 0, h_.npoin, m.x.data());
    reals(y_, 0, h_.npoin, m.y.data());
    ints(ipobo_, h_.npoin, m.ipobo.data());
    ints(conn_, h_.nelem * h_.ndp, m.ikle.data());
    return m;
  }
  void read_values(std::int64_t frame, int var, std::int64_t first, std::int64_t count, float* out) const override { values(frame, var, first, count, out); }
  void read_values(std::int64_t frame, int var, std::int64_t first, std::int64_t count, double* out) const override { values(frame, var, first, count, out); }
  std::vector<std::int64_t> in_place(std::int64_t frame, int var) const override {
    if (!compression_.empty()) return {};
    return {value_at(frame, var)};
  }
  std::int64_t in_place_bytes() const override { return compression_.empty() ? h_.npoin * rs_ : 0; }
  // Compressed: each variable's filters, bound and ratio over its frames, as info shows them.
  std::map<std::string, std::string> extras() const override {
    std::map<std::string, std::string> out;
    if (compression_.empty()) return out;
    const bool zstd = compression_.find(":zstd") != std::string::npos;
    const auto lock = h5::lock();
    for (int v = 0; v < h_.nvar(); ++v) {
      double stored = 0;
      for (std::int64_t f = 0; f < frame_count(); ++f) stored += static_cast<double>(H5Dget_storage_size(dataset(frame_path(f, v))));
      const double values = static_cast<double>(frame_count() * h_.npoin * rs_);
      char ratio[96];
      std::snprintf(ratio, sizeof ratio, ", %.2fx (%.0f of %.0f bytes)", stored > 0 ? values / stored : 0.0, stored, values);
      out["compression." + fields_[static_cast<std::size_t>(v)]] = std::string(zstd ? "shuffle+zstd, " : "shuffle+deflate, ") + compression_ + ratio;
    }
    return out;
  }

 private:
  std::string frame_path(std::int64_t frame, int var) const {
    char sol[40];
    std::snprintf(sol, sizeof sol, "FlowSolution%06lld", static_cast<long long>(frame));
    return "/Base/mesh/" + std::string(sol) + "/" + fields_[static_cast<std::size_t>(var)] + "/ data";
  }
  // Compressed: the dataset at `path` (kept open), FormatError naming it when it is not there.
  hid_t dataset(const std::string& path) const {
    auto it = open_.find(path);
    if (it != open_.end()) return it->second;
    const hid_t d = H5Dopen2(file_, path.c_str(), H5P_DEFAULT);
    if (d < 0) throw FormatError(name() + ": dataset \"" + path + "\" not found (a CGNS mesh result changed since it was written?)");
    h5::require_filters(d, path, name());
    return open_.emplace(path, Handle(d)).first->second;
  }
  template <class T>
  void values(std::int64_t frame, int var, std::int64_t first, std::int64_t count, T* out) const {
    if (compression_.empty()) return reals(value_at(frame, var), first, count, out);
    if (frame < 0 || frame >= frame_count() || var < 0 || var >= h_.nvar())
      throw UsageError("frame " + std::to_string(frame) + " variable " + std::to_string(var) + " out of range in " + name());
    if (first < 0 || count < 0 || first + count > h_.npoin) throw UsageError("nodes out of range in " + name());
    const auto lock = h5::lock();
    h5::read_range(dataset(frame_path(frame, var)), first, count, out, H5P_DEFAULT, name());
  }
  std::int64_t value_at(std::int64_t frame, int var) const {
    if (frame < 0 || frame >= frame_count() || var < 0 || var >= h_.nvar())
      throw UsageError("frame " + std::to_string(frame) + " variable " + std::to_string(var) + " out of range in " + name());
    return frames_ + (frame * h_.nvar() + var) * h_.npoin * rs_;
  }
  template <class T>
  void reals(std::int64_t at, std::int64_t first, std::int64_t count, T* out) const {
    if (first < 0 || count < 0 || first + count > h_.npoin) throw UsageError("nodes out of range in " + name());
    std::vector<unsigned char> raw(static_cast<std::size_t>(count * rs_));
    src_.read_at(at + first * rs_, raw.data(), raw.size());
    for (std::int64_t i = 0; i < count; ++i)
      out[i] = rs_ == 8 ? static_cast<T>(load<double>(raw.data() + 8 * i, ByteOrder::Little)) : static_cast<T>(load<float>(raw.data() + 4 * i, ByteOrder::Little));
  }
  void ints(std::int64_t at, std::int64_t n, std::int32_t* out) const {
    src_.read_at(at, out, static_cast<std::size_t>(n * 4));
    to_order<4>(reinterpret_cast<unsigned char*>(out), static_cast<std::size_t>(n), ByteOrder::Little);  // little-endian to native: its own inverse
  }

  FileSource src_;
  serafin::Header h_;
  std::vector<double> times_;
  std::int64_t x_ = 0, y_ = 0, ipobo_ = 0, conn_ = 0, frames_ = 0;
  int rs_ = 4;
  std::string compression_;  // the SPEC it was written with; empty: the arrays in place
  std::vector<std::string> fields_;
  Handle file_;
  mutable std::map<std::string, Handle> open_;
};

}  // namespace

bool is_mesh_result(const std::string& path) {
  if (!is_cgns_hdf5(path)) return false;
  Handle file(check(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), "cannot open", path));
  return description(file, path).find(kMeshFormat) != std::string::npos;
}

std::unique_ptr<ResultFile> open_mesh(const std::string& path) {
  h5::quiet();
  std::string text;
  {
    Handle file(check(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), "cannot open", path));
    text = description(file, path);
  }
  if (!text.empty() && cgns::index_end(text) != file_size(path))
    throw FormatError(path + ": a CGNS mesh result changed since anabranch wrote it (its size is not the " +
                      std::to_string(cgns::index_end(text)) + " bytes its description says)");
  if (text.find(kMeshFormat) == std::string::npos)
    throw FormatError(path + ": a CGNS file that is not a mesh result anabranch wrote (multi-block CGNS files convert to block files; "
                             "unstructured ones from other writers are not read)");
  return std::make_unique<MeshResult>(path, text);
}

std::vector<Extent> contiguous_extents(const std::string& path, const std::vector<std::string>& datasets) {
  h5::quiet();
  Handle file(check(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), "cannot open", path));
  std::vector<Extent> out;
  out.reserve(datasets.size());
  for (const auto& name : datasets) {
    const std::string where = path + ": dataset \"" + name + "\"";
    const hid_t id = H5Dopen2(file, name.c_str(), H5P_DEFAULT);
    if (id < 0) throw FormatError(where + " not found");
    Handle d(id);
    Handle dcpl(check(H5Dget_create_plist(d), "H5Dget_create_plist", path));
    if (H5Pget_layout(dcpl) != H5D_CONTIGUOUS) throw FormatError(where + " is not contiguous (chunked or compact): its place is HDF5's");
    Handle type(check(H5Dget_type(d), "H5Dget_type", path));
    Handle space(check(H5Dget_space(d), "H5Dget_space", path));
    const haddr_t at = H5Dget_offset(d);
    if (at == HADDR_UNDEF) throw FormatError(where + " has no storage allocated");
    const auto points = H5Sget_simple_extent_npoints(space);
    out.push_back({static_cast<std::int64_t>(at), static_cast<std::int64_t>(points) * static_cast<std::int64_t>(H5Tget_size(type))});
  }
  return out;
}

}  // namespace anabranch::pio::cgns_files
