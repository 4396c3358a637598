#include "formats/tecplot.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <set>

#include "core/error.hpp"

namespace anabranch::tecplot {
namespace {

constexpr float kZoneMarker = 299.0f, kZoneMarker191 = 298.0f, kEndOfHeader = 357.0f;
constexpr float kGeometry = 399.0f, kText = 499.0f, kCustomLabel = 599.0f, kUserRec = 699.0f, kDatasetAux = 799.0f,
                kVariableAux = 899.0f;
constexpr std::int64_t kMaxInt32 = std::numeric_limits<std::int32_t>::max();

// Little-endian bytes, appended.
class Out {
 public:
  void i32(std::int32_t v) { raw(&v, 4); }
  void f32(float v) { raw(&v, 4); }
  void f64(double v) { raw(&v, 8); }
  void text(const std::string& s) {  // a character an INT32, then 0
    for (unsigned char c : s) i32(c);
    i32(0);
  }
  std::string bytes;

 private:
  void raw(const void* p, std::size_t n) { bytes.append(static_cast<const char*>(p), n); }
};

std::int64_t text_bytes(const std::string& s) { return 4 * (static_cast<std::int64_t>(s.size()) + 1); }

std::int32_t count32(std::int64_t v, const Zone& z, const char* what) {
  if (v < 0 || v > kMaxInt32)
    throw UsageError("zone '" + z.name + "': " + what + " " + std::to_string(v) + " is past Tecplot's binary format (32-bit counts, at most " +
                     std::to_string(kMaxInt32) + ")");
  return static_cast<std::int32_t>(v);
}

bool holds(const Zone& z, std::size_t v) {
  return (v >= z.share.size() || z.share[v] < 0) && (v >= z.passive.size() || !z.passive[v]);
}

}  // namespace

int nodes_per_element(ZoneType t) {
  switch (t) {
    case ZoneType::FELineSeg: return 2;
    case ZoneType::FETriangle: return 3;
    case ZoneType::FEQuadrilateral: return 4;
    case ZoneType::FETetrahedron: return 4;
    case ZoneType::FEBrick: return 8;
    default: return 0;
  }
}

const char* zone_type_name(ZoneType t) {
  static const char* names[] = {"ORDERED", "FELINESEG", "FETRIANGLE", "FEQUADRILATERAL", "FETETRAHEDRON", "FEBRICK", "FEPOLYGON", "FEPOLYHEDRON"};
  const auto i = static_cast<std::int32_t>(t);
  return i >= 0 && i < 8 ? names[i] : "an unknown zone type";
}

int format_bytes(Format f) {
  switch (f) {
    case Format::Float: return 4;
    case Format::Double: return 8;
    case Format::Int32: return 4;
    case Format::Int16: return 2;
    case Format::Byte: return 1;
    default: return 0;
  }
}

std::string frames_text(std::int64_t frames) {
  char text[32];
  std::snprintf(text, sizeof text, "%020lld", static_cast<long long>(frames));
  return text;
}

std::int64_t frames_said(const File& f) {
  for (const auto& a : f.aux)
    if (a.first == kFramesAux) {
      char* end = nullptr;
      const long long n = std::strtoll(a.second.c_str(), &end, 10);
      return end && *end == '\0' && n >= 0 ? n : -1;
    }
  return -1;
}

std::int64_t Zone::points() const {
  return type == ZoneType::Ordered ? std::max<std::int64_t>(imax, 1) * std::max<std::int64_t>(jmax, 1) * std::max<std::int64_t>(kmax, 1)
                                   : nodes;
}

std::int64_t Zone::connectivity_values() const { return type == ZoneType::Ordered ? 0 : elements * nodes_per_element(type); }

std::int64_t zone_header_bytes(const Zone& z) {
  // marker, name, parent, strand, time, color, type, location flag, face neighbours, misc
  // connections, the sizes, the auxiliary data's end
  return 4 + text_bytes(z.name) + 4 + 4 + 8 + 4 + 4 + 4 + 4 + 4 + (z.type == ZoneType::Ordered ? 12 : 4 + 4 + 12) + 4;
}

std::int64_t header_bytes(const File& f) {
  std::int64_t n = 8 + 4 + 4 + text_bytes(f.title) + 4;
  for (const auto& v : f.variables) n += text_bytes(v);
  for (const auto& a : f.aux) n += 4 + text_bytes(a.first) + 4 + text_bytes(a.second);
  for (const auto& z : f.zones) n += zone_header_bytes(z);
  return n + 4;
}

std::string header(const File& f, std::int64_t size) {
  Out o;
  o.bytes = "#!TDV112";
  o.i32(1);
  o.i32(f.file_type);
  o.text(f.title);
  o.i32(static_cast<std::int32_t>(f.variables.size()));
  for (const auto& v : f.variables) o.text(v);
  for (const auto& a : f.aux) {
    o.f32(kDatasetAux);
    o.text(a.first);
    o.i32(0);  // a text value
    o.text(a.second);
  }
  for (const auto& z : f.zones) {
    o.f32(kZoneMarker);
    o.text(z.name);
    o.i32(z.parent);
    o.i32(z.strand);
    o.f64(z.time);
    o.i32(-1);  // the zone's colour: not used
    o.i32(static_cast<std::int32_t>(z.type));
    o.i32(0);  // every variable at the nodes
    o.i32(0);  // no face neighbours
    o.i32(0);  // no other connections
    if (z.type == ZoneType::Ordered) {
      o.i32(count32(z.imax, z, "IMax"));
      o.i32(count32(z.jmax, z, "JMax"));
      o.i32(count32(z.kmax, z, "KMax"));
      count32(z.points(), z, "its point count");
    } else {
      o.i32(count32(z.nodes, z, "its node count"));
      o.i32(count32(z.elements, z, "its element count"));
      count32(z.connectivity_values(), z, "its connectivity's length");
      o.i32(0);
      o.i32(0);
      o.i32(0);
    }
    o.i32(0);  // no auxiliary data
  }
  const std::int64_t bare = static_cast<std::int64_t>(o.bytes.size()) + 4;
  if (size > 0 && size != bare) {
    if (size < bare + kPaddingBytes || (size - bare) % 4 != 0)
      throw UsageError("a Tecplot header of " + std::to_string(bare) + " bytes cannot fill " + std::to_string(size));
    // A dataset auxiliary record "padding" (every reader skips or keeps it), its value spaces.
    o.f32(kDatasetAux);
    o.text("padding");
    o.i32(0);  // a text value
    o.text(std::string(static_cast<std::size_t>((size - bare - kPaddingBytes) / 4), ' '));
  }
  o.f32(kEndOfHeader);
  return o.bytes;
}

std::int64_t entry_head_bytes(const Zone& z) {
  const std::size_t nvar = z.formats.size();
  std::int64_t n = 4 + 4 * static_cast<std::int64_t>(nvar) + 4 + 4 + 4;
  bool sharing = false;
  for (std::size_t v = 0; v < nvar; ++v) {
    if (holds(z, v)) n += 16;
    if (v < z.share.size() && z.share[v] >= 0) sharing = true;
  }
  if (sharing) n += 4 * static_cast<std::int64_t>(nvar);
  return n;
}

std::int64_t entry_bytes(const Zone& z) {
  std::int64_t n = entry_head_bytes(z);
  for (std::size_t v = 0; v < z.formats.size(); ++v)
    if (holds(z, v)) n += z.points() * format_bytes(z.formats[v]);
  if (z.type != ZoneType::Ordered && z.share_connectivity < 0) n += 4 * z.connectivity_values();
  return n;
}

std::string entry_head(const Zone& z, const std::vector<std::pair<double, double>>& minmax) {
  Out o;
  o.f32(kZoneMarker);
  for (const auto f : z.formats) o.i32(static_cast<std::int32_t>(f));
  o.i32(0);  // no passive variable
  bool sharing = false;
  for (const auto s : z.share) sharing = sharing || s >= 0;
  o.i32(sharing ? 1 : 0);
  if (sharing)
    for (std::size_t v = 0; v < z.formats.size(); ++v) o.i32(v < z.share.size() ? z.share[v] : -1);
  o.i32(z.share_connectivity);
  for (std::size_t v = 0; v < z.formats.size(); ++v)
    if (holds(z, v)) {
      const auto& m = v < minmax.size() ? minmax[v] : std::pair<double, double>(0, 0);
      o.f64(m.first);
      o.f64(m.second);
    }
  return o.bytes;
}

// ---------------------------------------------------------------------------------------
// Reading

namespace {

class Walker {
 public:
  explicit Walker(const ByteSource& in) : in_(in), end_(in.size()) {}
  std::int64_t at = 0;
  bool swap = false;
  std::string where = "the header";
  std::int64_t window = 16384;  // the bytes read at a time: the header's; an entry's first words (set by the caller)

  void need(std::int64_t n) {
    if (at + n > end_) fail("the file ends (at byte " + std::to_string(end_) + ") inside " + where);
  }
  std::int32_t i32() {
    std::uint32_t v;
    get(&v, 4);
    if (swap) v = __builtin_bswap32(v);
    std::int32_t r;
    std::memcpy(&r, &v, 4);
    return r;
  }
  std::int64_t i64() {
    std::uint64_t v;
    get(&v, 8);
    if (swap) v = __builtin_bswap64(v);
    std::int64_t r;
    std::memcpy(&r, &v, 8);
    return r;
  }
  float f32() {
    const std::int32_t b = i32();
    float r;
    std::memcpy(&r, &b, 4);
    return r;
  }
  double f64() {
    const std::int64_t b = i64();
    double r;
    std::memcpy(&r, &b, 8);
    return r;
  }
  std::string text() {
    std::string s;
    for (;;) {
      const std::int32_t c = i32();
      if (c == 0) return s;
      if (c < 0 || c > 0x10ffff) fail("a text that does not end (character code " + std::to_string(c) + ")");
      s += c < 256 ? static_cast<char>(c) : '?';
    }
  }
  void skip(std::int64_t n) {
    need(n);
    at += n;
  }
  [[noreturn]] void fail(const std::string& what) const { throw FormatError(in_.name(), where, at, what); }

 private:
  // n bytes at `at`, through a window of the file (a header is read a word at a time; the
  // entries' first words a window each, their values skipped: a small window).
  void get(void* to, std::size_t n) {
    need(static_cast<std::int64_t>(n));
    if (at < window_at_ || at + static_cast<std::int64_t>(n) > window_at_ + static_cast<std::int64_t>(window_.size())) {
      window_at_ = at;
      window_.resize(static_cast<std::size_t>(std::min<std::int64_t>(std::max<std::int64_t>(window, static_cast<std::int64_t>(n)), end_ - at)));
      in_.read_at(at, window_.data(), window_.size());
    }
    std::memcpy(to, window_.data() + (at - window_at_), n);
    at += static_cast<std::int64_t>(n);
  }

  const ByteSource& in_;
  std::int64_t end_;
  std::vector<unsigned char> window_;
  std::int64_t window_at_ = 0;
};

bool near(float a, float b) { return std::fabs(a - b) < 0.5f; }

void zone_header(Walker& w, File& f, bool v191) {
  Zone z;
  w.where = "the header of zone " + std::to_string(f.zones.size() + 1);
  z.name = w.text();
  w.where = "the header of zone " + std::to_string(f.zones.size() + 1) + " ('" + z.name + "')";
  z.parent = w.i32();
  z.strand = w.i32();
  z.time = w.f64();
  w.i32();  // colour
  const std::int32_t type = w.i32();
  if (type < 0 || type > 7) {
    w.at -= 4;
    w.fail("zone type " + std::to_string(type) + " (0 to 7 are Tecplot's)");
  }
  z.type = static_cast<ZoneType>(type);
  z.passive.assign(f.variables.size(), 0);
  if (w.i32() != 0)  // where each variable is
    for (std::size_t v = 0; v < f.variables.size(); ++v)
      if (w.i32() != 0) {
        w.at -= 4;
        w.fail("variable '" + f.variables[v] + "' is cell-centred (anabranch reads values at the nodes)");
      }
  if (w.i32() != 0) {
    w.at -= 4;
    w.fail("raw face neighbours (not read)");
  }
  if (w.i32() != 0) {
    w.at -= 4;
    w.fail("face neighbour connections (not read)");
  }
  if (z.type == ZoneType::Ordered) {
    z.imax = w.i32();
    z.jmax = w.i32();
    z.kmax = w.i32();
    if (z.imax < 1 || z.jmax < 1 || z.kmax < 1) {
      w.at -= 12;
      w.fail("sizes " + std::to_string(z.imax) + " x " + std::to_string(z.jmax) + " x " + std::to_string(z.kmax) + " (each at least 1)");
    }
  } else {
    z.nodes = w.i32();
    if (z.type == ZoneType::FEPolygon || z.type == ZoneType::FEPolyhedron) {
      if (v191) {
        w.i64();
        w.i64();
      } else {
        w.skip(16);
      }
    }
    z.elements = w.i32();
    w.skip(12);
    if (z.nodes < 0 || z.elements < 0) w.fail("a negative node or element count");
  }
  while (w.i32() != 0) {  // auxiliary data: a name, a format, a value
    w.text();
    w.i32();
    w.text();
  }
  f.zones.push_back(std::move(z));
}

// anabranch's own block files (their header says how many frames they hold: kFramesAux):
// every entry's place follows from the header and the first entry's formats (the
// later frames' zones share X, Y, Z with their block's first zone), without a read of each
// entry's first words one after another. Checked: the first zone of the second frame and the
// last zone read as predicted, the file ending where the last entry does. Anything else (a
// file of another writer, one changed since) is walked: false, w.at back at the first entry.
template <class Parse>
bool predicted(const ByteSource& in, File& f, Walker& w, Parse&& parse_entry) {
  auto& zones = f.zones;
  if (frames_said(f) < 0 || zones.size() < 2) return false;
  for (const auto& z : zones)
    if (z.type != ZoneType::Ordered) return false;
  const std::int64_t start = w.at;
  parse_entry(0);
  const Zone& z0 = zones[0];
  const std::size_t nvar = f.variables.size();
  if (nvar < 3) return w.at = start, false;
  for (std::size_t v = 0; v < nvar; ++v)
    if (z0.share[v] >= 0 || z0.passive[v]) return w.at = start, false;
  std::size_t nb = zones.size();  // the first frame's zones: until a strand comes again, or the time changes
  std::set<std::int32_t> strands;
  for (std::size_t k = 0; k < zones.size() && nb == zones.size(); ++k)
    if (zones[k].strand >= 0 ? !strands.insert(zones[k].strand).second : zones[k].time != z0.time) nb = k;
  std::int64_t at = w.at;
  for (std::size_t k = 1; k < zones.size(); ++k) {
    Zone& z = zones[k];
    z.formats = z0.formats;
    z.passive.assign(nvar, 0);
    z.share.assign(nvar, -1);
    if (k >= nb)
      for (std::size_t c = 0; c < 3; ++c) z.share[c] = static_cast<std::int32_t>(k % nb);
    z.share_connectivity = -1;
    z.entry = at;
    std::int64_t value = at + entry_head_bytes(z);
    z.values_at.assign(nvar, -1);
    for (std::size_t v = 0; v < nvar; ++v) {
      if (z.share[v] >= 0) {
        const Zone& from = zones[static_cast<std::size_t>(z.share[v])];
        if (from.points() != z.points()) return w.at = start, false;
        z.values_at[v] = from.values_at[v];
        continue;
      }
      z.values_at[v] = value;
      value += z.points() * format_bytes(z.formats[v]);
    }
    at += entry_bytes(z);
  }
  if (at != in.size()) return w.at = start, false;
  for (const std::size_t k : {std::min(nb, zones.size() - 1), zones.size() - 1}) {
    const Zone want = zones[k];
    w.at = want.entry;
    parse_entry(k);
    const Zone& got = zones[k];
    if (got.formats != want.formats || got.share != want.share || got.passive != want.passive || got.values_at != want.values_at ||
        (k + 1 == zones.size() && w.at != at))
      return w.at = start, false;
  }
  f.end = at;
  return true;
}

}  // namespace

bool is_tecplot(const ByteSource& in) {
  if (in.size() < 8) return false;
  char magic[5];
  in.read_at(0, magic, 5);
  return std::memcmp(magic, "#!TDV", 5) == 0;
}

File read(const ByteSource& in) {
  File f;
  Walker w(in);
  char magic[8] = {};
  in.read_at(0, magic, static_cast<std::size_t>(std::min<std::int64_t>(8, in.size())));
  if (std::memcmp(magic, "#!SZPLT", 7) == 0) w.fail("Tecplot's SZL format (.szplt), not read: anabranch reads the binary .plt format (Tecplot saves either)");
  if (std::memcmp(magic, "#!TDV", 5) != 0)
    w.fail("not a Tecplot binary file (no #!TDV magic number; ASCII files are not read: Tecplot's preplot makes a binary .plt of one)");
  const std::string version(magic + 5, 3);
  if (version != "112" && version != "191") w.fail("version " + version + " (anabranch reads versions 112 and 191)");
  w.need(12);
  w.at = 8;
  f.version = std::stoi(version);
  std::int32_t one;
  in.read_at(8, &one, 4);
  if (one != 1) {
    if (__builtin_bswap32(static_cast<std::uint32_t>(one)) != 1u) w.fail("the byte-order word is not 1");
    w.swap = f.big_endian = true;
  }
  w.at = 12;
  f.file_type = w.i32();
  if (f.file_type < 0 || f.file_type > 2) {
    w.at -= 4;
    w.fail("file type " + std::to_string(f.file_type) + " (0 full, 1 grid, 2 solution)");
  }
  f.title = w.text();
  const std::int32_t nvar = w.i32();
  if (nvar < 0 || nvar > 100000) {
    w.at -= 4;
    w.fail(std::to_string(nvar) + " variables");
  }
  for (std::int32_t v = 0; v < nvar; ++v) f.variables.push_back(w.text());
  for (;;) {
    w.where = "the header";
    const float marker = w.f32();
    if (near(marker, kEndOfHeader)) break;
    if (near(marker, kZoneMarker) || near(marker, kZoneMarker191)) {
      zone_header(w, f, near(marker, kZoneMarker191));
    } else if (near(marker, kUserRec)) {
      w.text();
    } else if (near(marker, kDatasetAux)) {
      std::string name = w.text();
      w.i32();
      f.aux.emplace_back(std::move(name), w.text());
    } else if (near(marker, kVariableAux)) {
      w.i32();
      w.text();
      w.i32();
      w.text();
    } else if (near(marker, kCustomLabel)) {
      for (std::int32_t n = w.i32(); n > 0; --n) w.text();
    } else if (near(marker, kGeometry) || near(marker, kText)) {
      w.at -= 4;
      w.fail(std::string("a ") + (near(marker, kText) ? "text" : "geometry") + " record (anabranch reads zones; Tecplot's drawings are not read)");
    } else {
      w.at -= 4;
      w.fail("marker " + std::to_string(marker) + " where a zone, a record or the end of the header was");
    }
  }
  if (f.zones.empty()) w.fail("no zone in the header");
  f.data_section = w.at;
  w.window = 64 + 24 * static_cast<std::int64_t>(nvar);  // an entry's first words: marker, formats, flags, sharing, min/max
  // The data section: each zone's entry, in the header's order. Each entry's place follows
  // from the one before; from a cold cache every head would be a disk read of its own, one
  // after another: the next entries' heads are asked of the kernel ahead, where the last
  // entry's bytes a point say they start (the frames of one writer alike), a few hundred at
  // a time.
  std::size_t asked = 0;
  auto ask_ahead = [&](std::size_t k) {
    if (k == 0 || asked > k + 64) return;
    const Zone& last = f.zones[k - 1];
    const double per_point = static_cast<double>(w.at - last.entry) / static_cast<double>(std::max<std::int64_t>(last.points(), 1));
    std::int64_t at = w.at;
    for (std::size_t j = k; j < std::min(f.zones.size(), k + 256); ++j) {
      in.will_need(at, 512);
      at += static_cast<std::int64_t>(per_point * static_cast<double>(f.zones[j].points()));
    }
    asked = k + 256;
  };
  // One zone's entry at w.at: its first words read, its values' places, w.at past it.
  auto parse_entry = [&](std::size_t k) {
    Zone& z = f.zones[k];
    w.where = "the data of zone " + std::to_string(k + 1) + " ('" + z.name + "')";
    z.entry = w.at;
    const float marker = w.f32();
    if (!near(marker, kZoneMarker) && !near(marker, kZoneMarker191)) {
      w.at -= 4;
      w.fail("marker " + std::to_string(marker) + " where the zone's data starts (299)");
    }
    z.formats.resize(static_cast<std::size_t>(nvar));
    for (auto& fm : z.formats) {
      const std::int32_t c = w.i32();
      if (c < 1 || c > 6) {
        w.at -= 4;
        w.fail("value format " + std::to_string(c) + " (1 to 6 are Tecplot's)");
      }
      fm = static_cast<Format>(c);
    }
    if (w.i32() != 0)
      for (auto& p : z.passive) p = w.i32() != 0 ? 1 : 0;
    z.share.assign(static_cast<std::size_t>(nvar), -1);
    if (w.i32() != 0)
      for (std::int32_t v = 0; v < nvar; ++v) {
        const std::int32_t s = w.i32();
        if (s >= static_cast<std::int32_t>(k) || s < -1) {
          w.at -= 4;
          w.fail("variable '" + f.variables[static_cast<std::size_t>(v)] + "' shared with zone " + std::to_string(s + 1) +
                 ", not an earlier zone");
        }
        z.share[static_cast<std::size_t>(v)] = s;
      }
    z.share_connectivity = w.i32();
    if (z.share_connectivity >= static_cast<std::int32_t>(k) || z.share_connectivity < -1) {
      w.at -= 4;
      w.fail("connectivity shared with zone " + std::to_string(z.share_connectivity + 1) + ", not an earlier zone");
    }
    for (std::int32_t v = 0; v < nvar; ++v)
      if (holds(z, static_cast<std::size_t>(v))) w.skip(16);
    z.values_at.assign(static_cast<std::size_t>(nvar), -1);
    for (std::int32_t v = 0; v < nvar; ++v) {
      const auto vi = static_cast<std::size_t>(v);
      if (z.passive[vi]) continue;
      if (z.share[vi] >= 0) {
        const Zone& from = f.zones[static_cast<std::size_t>(z.share[vi])];
        if (from.points() != z.points() || from.formats[vi] != z.formats[vi])
          w.fail("variable '" + f.variables[vi] + "' shared with zone " + std::to_string(z.share[vi] + 1) + " of another size or format");
        z.values_at[vi] = from.values_at[vi];
        continue;
      }
      if (z.formats[vi] == Format::Bit) w.fail("variable '" + f.variables[vi] + "' is bit-packed (not read)");
      z.values_at[vi] = w.at;
      w.skip(z.points() * format_bytes(z.formats[vi]));
    }
    if (z.type == ZoneType::FEPolygon || z.type == ZoneType::FEPolyhedron) {
      w.fail(std::string("a ") + zone_type_name(z.type) + " zone (polygonal and polyhedral zones are not read)");
    } else if (z.type != ZoneType::Ordered) {
      if (z.share_connectivity >= 0) {
        const Zone& from = f.zones[static_cast<std::size_t>(z.share_connectivity)];
        if (from.type != z.type || from.elements != z.elements)
          w.fail("connectivity shared with zone " + std::to_string(z.share_connectivity + 1) + " of another type or size");
        z.connectivity_at = from.connectivity_at;
      } else {
        z.connectivity_at = w.at;
        w.skip(4 * z.connectivity_values());
      }
    }
    };
  if (predicted(in, f, w, parse_entry)) return f;
  for (std::size_t k = 0; k < f.zones.size(); ++k) {
    ask_ahead(k);
    parse_entry(k);
  }
  f.end = w.at;
  return f;
}

}  // namespace anabranch::tecplot
