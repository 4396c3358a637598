// SERAFIN reader and writer. Specification: docs/formats/serafin.md.
#include "formats/serafin.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <fstream>

#include "core/error.hpp"

namespace anabranch::serafin {

bool looks_like_serafin(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  unsigned char b[88];
  if (!in.read(reinterpret_cast<char*>(b), 88)) return false;
  const std::uint32_t be = std::uint32_t{b[0]} << 24 | std::uint32_t{b[1]} << 16 | std::uint32_t{b[2]} << 8 | b[3];
  const std::uint32_t le = std::uint32_t{b[3]} << 24 | std::uint32_t{b[2]} << 16 | std::uint32_t{b[1]} << 8 | b[0];
  return (be == 80 || le == 80) && std::memcmp(b, b + 84, 4) == 0;
}
namespace {

constexpr std::size_t kChunkValues = 1 << 16;  // values converted per step

std::string record_name(const std::string& what) { return "record " + what; }

std::int32_t read_i32(const ByteSource& src, std::int64_t offset, ByteOrder order) {
  unsigned char b[4];
  src.read_at(offset, b, 4);
  return load<std::int32_t>(b, order);
}

void put_i32(ByteSink& sink, std::int32_t v, ByteOrder order) {
  unsigned char b[4];
  store<std::int32_t>(b, v, order);
  sink.write(b, 4);
}

void put_record(ByteSink& sink, const void* payload, std::int32_t n, ByteOrder order) {
  put_i32(sink, n, order);
  sink.write(payload, static_cast<std::size_t>(n));
  put_i32(sink, n, order);
}

void put_int_record(ByteSink& sink, const std::int32_t* values, std::int64_t n, ByteOrder order) {
  put_i32(sink, static_cast<std::int32_t>(n * 4), order);
  std::vector<std::int32_t> chunk;
  for (std::int64_t i = 0; i < n; i += static_cast<std::int64_t>(kChunkValues)) {
    std::int64_t m = std::min<std::int64_t>(static_cast<std::int64_t>(kChunkValues), n - i);
    chunk.assign(values + i, values + i + m);
    to_order<4>(chunk.data(), chunk.size(), order);
    sink.write(chunk.data(), chunk.size() * 4);
  }
  put_i32(sink, static_cast<std::int32_t>(n * 4), order);
}

template <class T>
void put_real_record(ByteSink& sink, const T* values, std::int64_t n, Precision p, ByteOrder order,
                     std::vector<unsigned char>& scratch) {
  const int rs = real_size(p);
  put_i32(sink, static_cast<std::int32_t>(n * rs), order);
  scratch.resize(kChunkValues * 8);
  for (std::int64_t i = 0; i < n; i += static_cast<std::int64_t>(kChunkValues)) {
    std::int64_t m = std::min<std::int64_t>(static_cast<std::int64_t>(kChunkValues), n - i);
    encode_reals(values + i, m, p, order, scratch.data());
    sink.write(scratch.data(), static_cast<std::size_t>(m * rs));
  }
  put_i32(sink, static_cast<std::int32_t>(n * rs), order);
}

std::string pad(const std::string& s, std::size_t n) {
  std::string r = s.substr(0, std::min(s.size(), n));
  r.resize(n, ' ');
  return r;
}

}  // namespace

const char* to_string(Integrity i) {
  switch (i) {
    case Integrity::Ok: return "OK";
    case Integrity::TornFrame: return "torn last frame";
    case Integrity::StrayByte: return "stray trailing byte";
  }
  return "?";
}

namespace {
std::string hex(const std::string& t) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  for (unsigned char c : t) out += {digits[c >> 4], digits[c & 15]};
  return out;
}
std::string unhex(const std::string& t) {
  std::string out;
  for (std::size_t i = 0; i + 1 < t.size(); i += 2) out.push_back(static_cast<char>(std::stoi(t.substr(i, 2), nullptr, 16)));
  return out;
}
}  // namespace

std::string header_facts(const Header& h) {
  nlohmann::json j;
  j["title"] = hex(h.title);
  nlohmann::json vars = nlohmann::json::array();
  for (const auto& v : h.variables) vars.push_back({hex(v.name), hex(v.unit)});
  j["variables"] = vars;
  j["iparam"] = h.iparam;
  if (h.date) j["date"] = *h.date;
  j["sizes4"] = h.sizes4;
  j["byte_order"] = h.byte_order == ByteOrder::Big ? "big" : "little";
  return j.dump();
}

void read_header_facts(const std::string& json, Header& h) {
  const auto j = nlohmann::json::parse(json);
  if (j.contains("title")) h.title = unhex(j["title"].get<std::string>());
  if (j.contains("variables")) {
    h.variables.clear();
    for (const auto& v : j["variables"]) h.variables.push_back({unhex(v[0].get<std::string>()), unhex(v[1].get<std::string>())});
  }
  if (j.contains("iparam")) {
    const auto ip = j["iparam"].get<std::vector<std::int32_t>>();
    std::copy_n(ip.begin(), std::min<std::size_t>(ip.size(), h.iparam.size()), h.iparam.begin());
  }
  if (j.contains("date")) {
    const auto d = j["date"].get<std::vector<std::int32_t>>();
    h.date.emplace();
    std::copy_n(d.begin(), std::min<std::size_t>(d.size(), 6), h.date->begin());
  }
  if (j.contains("sizes4")) h.sizes4 = j["sizes4"].get<std::int32_t>();
  if (j.contains("byte_order")) h.byte_order = j["byte_order"] == "little" ? ByteOrder::Little : ByteOrder::Big;
}

void Header::set_title(const std::string& text) {
  title = pad(text, 72) + (precision == Precision::Double ? "SERAFIND" : "SERAFIN ");
}

std::string Header::title_for_output() const {
  std::string t = pad(title, 80);
  std::string suffix = t.substr(72);
  // Readers look at the last byte: 'D' marks double precision ("SERAFIND", or "       D" as
  // some tools write it, kept as it is).
  if (precision == Precision::Double && suffix.back() != 'D') t.replace(72, 8, "SERAFIND");
  if (precision == Precision::Single && suffix.back() == 'D') t.replace(72, 8, "SERAFIN ");
  return t;
}

void Header::set_mesh_sizes(const Mesh& mesh) {
  nelem = mesh.nelem;
  npoin = mesh.npoin;
  ndp = mesh.ndp;
  iparam[6] = mesh.nplan > 1 ? mesh.nplan : 0;
}

Layout Layout::of(const Header& h) {
  Layout l;
  l.npoin = h.npoin;
  l.real_bytes = real_size(h.precision);
  l.nvar = h.nvar();
  const std::int64_t rs = l.real_bytes;
  l.header_bytes = (8 + 80) + (8 + 8) + l.nvar * (8 + 32) + (8 + 40) + (h.date ? 8 + 24 : 0) + (8 + 16) +
                   (8 + h.nelem * h.ndp * 4) + (8 + h.npoin * 4) + 2 * (8 + h.npoin * rs);
  l.frame_bytes = (8 + rs) + l.nvar * (8 + h.npoin * rs);
  return l;
}

// ---------------------------------------------------------------------------------------
// Reader

namespace {
// The first bytes of a source, read in one call: the header's small records (two length
// markers and a few values each, up to IKLE's) are parsed from memory rather than with a
// read each.
constexpr std::int64_t kHeadBytes = 4096;
class Head final : public ByteSource {
 public:
  Head(const ByteSource& source, std::int64_t n) : source_(source), size_(std::max<std::int64_t>(0, std::min(n, source.size()))) {
    source_.read_at(0, bytes_, static_cast<std::size_t>(size_));
  }
  std::int64_t size() const override { return source_.size(); }
  const std::string& name() const override { return source_.name(); }
  void read_at(std::int64_t offset, void* dst, std::size_t n) const override {
    if (offset >= 0 && offset + static_cast<std::int64_t>(n) <= size_)
      std::memcpy(dst, bytes_ + offset, n);
    else
      source_.read_at(offset, dst, n);
  }

 private:
  const ByteSource& source_;
  std::int64_t size_;
  unsigned char bytes_[kHeadBytes];
};
}  // namespace

Reader::Reader(const std::string& path) : Reader(std::make_shared<FileSource>(path)) {}

Reader::Reader(std::shared_ptr<const ByteSource> source) : source_(std::move(source)) { parse(); }

// Checks the record at `offset` has length markers equal to `expected` at both ends and
// lies inside the file; returns the offset just past it. expected < 0: any length.
std::int64_t Reader::check_record(const ByteSource& src, std::int64_t offset, std::int64_t expected, const std::string& record) const {
  const std::int64_t size = src.size();
  const auto& file = src.name();
  if (offset + 4 > size)
    throw FormatError(file, record_name(record), offset,
                      "file ends (" + std::to_string(size) + " bytes) before the record starts: truncated file");
  std::int64_t len = read_i32(src, offset, header_.byte_order);
  if (expected >= 0 && len != expected)
    throw FormatError(file, record_name(record), offset,
                      "length marker is " + std::to_string(len) + ", expected " + std::to_string(expected));
  if (len < 0)
    throw FormatError(file, record_name(record), offset, "negative length marker " + std::to_string(len));
  if (offset + 8 + len > size)
    throw FormatError(file, record_name(record), offset,
                      "record of " + std::to_string(len) + " bytes runs past the end of the file (" +
                          std::to_string(size) + " bytes): truncated file");
  std::int64_t tail = read_i32(src, offset + 4 + len, header_.byte_order);
  if (tail != len)
    throw FormatError(file, record_name(record), offset + 4 + len,
                      "closing length marker is " + std::to_string(tail) + ", opening marker was " +
                          std::to_string(len));
  return offset + 8 + len;
}

void Reader::parse() {
  const auto& file = source_->name();
  const std::int64_t size = source_->size();
  const Head head(*source_, kHeadBytes);
  if (size < 4) throw FormatError(file, record_name("1 (title)"), 0, "file has only " + std::to_string(size) + " bytes: not a SERAFIN file");
  unsigned char b4[4];
  head.read_at(0, b4, 4);
  if (load<std::int32_t>(b4, ByteOrder::Big) == 80)
    header_.byte_order = ByteOrder::Big;
  else if (load<std::int32_t>(b4, ByteOrder::Little) == 80)
    header_.byte_order = ByteOrder::Little;
  else
    throw FormatError(file, record_name("1 (title)"), 0,
                      "first length marker is not 80 in either byte order: not a SERAFIN file");
  const ByteOrder bo = header_.byte_order;

  std::int64_t at = 0;
  std::int64_t next = check_record(head, at, 80, "1 (title)");
  header_.title.assign(80, ' ');
  head.read_at(at + 4, header_.title.data(), 80);
  at = next;

  next = check_record(head, at, 8, "2 (NBV1, NBV2)");
  const std::int32_t nbv1 = read_i32(head, at + 4, bo);
  header_.nbv2 = read_i32(head, at + 8, bo);
  if (nbv1 < 0)
    throw FormatError(file, record_name("2 (NBV1, NBV2)"), at + 4, "impossible number of variables NBV1 = " + std::to_string(nbv1));
  if (static_cast<std::int64_t>(nbv1) * 40 > size - next)
    throw FormatError(file, record_name("2 (NBV1, NBV2)"), at + 4,
                      "NBV1 = " + std::to_string(nbv1) + " variable names need " + std::to_string(std::int64_t{nbv1} * 40) +
                          " bytes, and the file ends " + std::to_string(size - next) + " bytes later (cut short?)");
  if (header_.nbv2 != 0)
    throw FormatError(file, record_name("2 (NBV1, NBV2)"), at + 8,
                      "NBV2 = " + std::to_string(header_.nbv2) + ": quadratic variables are not supported");
  at = next;

  header_.variables.resize(static_cast<std::size_t>(nbv1));
  for (std::int32_t v = 0; v < nbv1; ++v) {
    const std::string rec = std::to_string(3 + v) + " (name of variable " + std::to_string(v + 1) + ")";
    next = check_record(head, at, 32, rec);
    char buf[32];
    head.read_at(at + 4, buf, 32);
    header_.variables[static_cast<std::size_t>(v)] = {std::string(buf, 16), std::string(buf + 16, 16)};
    at = next;
  }

  int recno = 3 + nbv1;
  next = check_record(head, at, 40, std::to_string(recno) + " (IPARAM)");
  {
    std::int32_t ip[10];
    head.read_at(at + 4, ip, 40);
    for (int i = 0; i < 10; ++i) header_.iparam[static_cast<std::size_t>(i)] = load<std::int32_t>(&ip[i], bo);
  }
  at = next;
  ++recno;

  if (header_.iparam[9] == 1) {
    next = check_record(head, at, 24, std::to_string(recno) + " (date, present because IPARAM(10) = 1)");
    std::array<std::int32_t, 6> d{};
    std::int32_t raw[6];
    head.read_at(at + 4, raw, 24);
    for (int i = 0; i < 6; ++i) d[static_cast<std::size_t>(i)] = load<std::int32_t>(&raw[i], bo);
    header_.date = d;
    at = next;
    ++recno;
  }

  const std::string sizes_rec = std::to_string(recno) + " (NELEM, NPOIN, NDP, 1)";
  next = check_record(head, at, 16, sizes_rec);
  const std::int32_t nelem = read_i32(head, at + 4, bo);
  const std::int32_t npoin = read_i32(head, at + 8, bo);
  const std::int32_t ndp = read_i32(head, at + 12, bo);
  header_.sizes4 = read_i32(head, at + 16, bo);
  if (nelem < 0) throw FormatError(file, record_name(sizes_rec), at + 4, "negative NELEM = " + std::to_string(nelem));
  // NPOIN = 0 only for an empty subdomain (no element either).
  if (npoin < 0 || (npoin == 0 && nelem > 0))
    throw FormatError(file, record_name(sizes_rec), at + 8, "impossible NPOIN = " + std::to_string(npoin));
  if (ndp < 1 || ndp > 8) throw FormatError(file, record_name(sizes_rec), at + 12, "impossible NDP = " + std::to_string(ndp));
  header_.nelem = nelem;
  header_.npoin = npoin;
  header_.ndp = ndp;
  const int nplan = header_.nplan();
  if (header_.iparam[6] < 0)
    throw FormatError(file, record_name(std::to_string(3 + nbv1) + " (IPARAM)"), 4 + 80 + 4 + 16 + nbv1 * 40 + 4 + 6 * 4,
                      "negative NPLAN = IPARAM(7) = " + std::to_string(header_.iparam[6]));
  if (nplan > 1 && npoin % nplan != 0)
    throw FormatError(file, record_name(sizes_rec), at + 8,
                      "NPOIN = " + std::to_string(npoin) + " is not a multiple of NPLAN = " + std::to_string(nplan));
  at = next;
  ++recno;

  const std::int64_t ikle_bytes = static_cast<std::int64_t>(nelem) * ndp * 4;
  ikle_at_ = at;
  {
    const std::string rec = std::to_string(recno) + " (IKLE)";
    if (at + 4 <= size) {
      std::int64_t len = read_i32(head, at, bo);
      if (len != ikle_bytes && len >= 0 && ndp > 0 && len % 4 == 0 && ikle_bytes <= kMaxRecordBytes)
        throw FormatError(file, record_name(rec), at,
                          "length marker is " + std::to_string(len) + " bytes, but NELEM = " + std::to_string(nelem) +
                              " elements of NDP = " + std::to_string(ndp) + " nodes need " + std::to_string(ikle_bytes) +
                              ": NDP does not match the element count");
    }
    next = check_record(head, at, ikle_bytes, rec);
  }
  at = next;
  ++recno;
  ipobo_at_ = at;
  next = check_record(head, at, static_cast<std::int64_t>(npoin) * 4, std::to_string(recno) + " (IPOBO/KNOLG)");
  at = next;
  ++recno;

  x_at_ = at;
  {
    const std::string rec = std::to_string(recno) + " (X)";
    if (at + 4 > size) check_record(head, at, -1, rec);  // throws: truncated
    std::int64_t len = read_i32(head, at, bo);
    if (len == static_cast<std::int64_t>(npoin) * 4)
      header_.precision = Precision::Single;
    else if (len == static_cast<std::int64_t>(npoin) * 8)
      header_.precision = Precision::Double;
    else
      throw FormatError(file, record_name(rec), at,
                        "length marker " + std::to_string(len) + " is neither NPOIN*4 = " +
                            std::to_string(static_cast<std::int64_t>(npoin) * 4) + " (single) nor NPOIN*8 = " +
                            std::to_string(static_cast<std::int64_t>(npoin) * 8) + " (double)");
    next = check_record(head, at, len, rec);
  }
  at = next;
  ++recno;
  y_at_ = at;
  next = check_record(head, at, static_cast<std::int64_t>(npoin) * real_size(header_.precision), std::to_string(recno) + " (Y)");
  at = next;

  layout_ = Layout::of(header_);
  if (layout_.header_bytes != at)
    throw FormatError(file, "header", at, "internal error: header size mismatch");
  const std::int64_t rest = size - at;
  frames_ = rest / layout_.frame_bytes;
  const std::int64_t tail = rest % layout_.frame_bytes;
  integrity_.trailing_bytes = tail;
  if (tail == 1) {
    integrity_.status = Integrity::StrayByte;
    integrity_.message = file + ": one extra byte after the last record (a trailing newline some tools leave), ignored";
  } else if (tail > 0) {
    integrity_.status = Integrity::TornFrame;
    integrity_.message = file + ": frame " + std::to_string(frames_ + 1) + " at byte " +
                         std::to_string(layout_.frame_offset(frames_)) + " is incomplete (" + std::to_string(tail) +
                         " of " + std::to_string(layout_.frame_bytes) + " bytes): reading the " +
                         std::to_string(frames_) + " whole frames";
  }
}

void Reader::read_int_record(std::int64_t offset, std::int64_t count, const std::string& record,
                             std::int32_t* out) const {
  (void)record;
  source_->read_at(offset + 4, out, static_cast<std::size_t>(count) * 4);
  to_order<4>(out, static_cast<std::size_t>(count), header_.byte_order);
}

std::vector<std::int32_t> Reader::read_ikle() const {
  std::vector<std::int32_t> ikle(static_cast<std::size_t>(header_.nelem * header_.ndp));
  read_ikle_rows(0, header_.nelem, ikle.data());
  return ikle;
}

void Reader::read_ikle_rows(std::int64_t first, std::int64_t count, std::int32_t* out) const {
  if (first < 0 || count < 0 || first + count > header_.nelem) throw UsageError(source_->name() + ": element range out of bounds");
  const std::int64_t n = count * header_.ndp, at = ikle_at_ + 4 * header_.ndp * first;
  read_int_record(at, n, "IKLE", out);
  const std::int32_t npoin = static_cast<std::int32_t>(header_.npoin);
  for (std::int64_t i = 0; i < n; ++i) {
    const std::int32_t v = out[i];
    if (v < 1 || v > npoin)
      throw FormatError(source_->name(), "record IKLE", at + 4 + i * 4,
                        "node number " + std::to_string(v) + " of element " + std::to_string(first + i / header_.ndp + 1) +
                            " is outside 1.." + std::to_string(npoin));
  }
}

std::vector<std::int32_t> Reader::read_ipobo() const {
  std::vector<std::int32_t> v(static_cast<std::size_t>(header_.npoin));
  read_ipobo(0, header_.npoin, v.data());
  return v;
}

void Reader::read_ipobo(std::int64_t first, std::int64_t count, std::int32_t* out) const {
  if (first < 0 || count < 0 || first + count > header_.npoin) throw UsageError(source_->name() + ": node range out of bounds");
  read_int_record(ipobo_at_ + 4 * first, count, "IPOBO", out);
}

void Reader::read_coordinates(bool y, std::int64_t first, std::int64_t count, double* out) const {
  if (first < 0 || count < 0 || first + count > header_.npoin) throw UsageError(source_->name() + ": node range out of bounds");
  const std::int64_t rs = layout_.real_bytes, at = (y ? y_at_ : x_at_) + 4 + first * rs;
  source_->read_at(at, out, static_cast<std::size_t>(count * rs));
  if (rs == 8) {
    to_order<8>(out, static_cast<std::size_t>(count), header_.byte_order);
    return;
  }
  // Single precision: widened in place from the back (each double is wider than its float).
  auto* raw = reinterpret_cast<unsigned char*>(out);
  for (std::int64_t k = count - 1; k >= 0; --k) out[k] = static_cast<double>(load<float>(raw + k * 4, header_.byte_order));
}

std::vector<double> Reader::read_real_record(std::int64_t offset, const std::string& record) const {
  (void)record;
  std::vector<double> v(static_cast<std::size_t>(header_.npoin));
  const std::int64_t rs = layout_.real_bytes;
  std::vector<unsigned char> buf(kChunkValues * 8);
  for (std::int64_t i = 0; i < header_.npoin; i += static_cast<std::int64_t>(kChunkValues)) {
    std::int64_t m = std::min<std::int64_t>(static_cast<std::int64_t>(kChunkValues), header_.npoin - i);
    source_->read_at(offset + 4 + i * rs, buf.data(), static_cast<std::size_t>(m * rs));
    for (std::int64_t k = 0; k < m; ++k) {
      v[static_cast<std::size_t>(i + k)] = rs == 4 ? static_cast<double>(load<float>(buf.data() + k * 4, header_.byte_order))
                                                   : load<double>(buf.data() + k * 8, header_.byte_order);
    }
  }
  return v;
}

std::vector<double> Reader::read_x() const { return read_real_record(x_at_, "X"); }

Coordinates Reader::read_coordinates(bool y) const {
  const std::int64_t at = (y ? y_at_ : x_at_) + 4;
  if (header_.precision == Precision::Double) {
    std::vector<double> v(static_cast<std::size_t>(header_.npoin));
    read_values_at(at, v.data());
    return Coordinates(std::move(v));
  }
  std::vector<float> v(static_cast<std::size_t>(header_.npoin));
  read_values_at(at, v.data());
  return Coordinates(std::move(v));
}

template <class T>
void Reader::read_values_at(std::int64_t offset, T* out) const {
  source_->read_at(offset, out, static_cast<std::size_t>(header_.npoin) * sizeof(T));
  to_order<sizeof(T)>(out, static_cast<std::size_t>(header_.npoin), header_.byte_order);
}
std::vector<double> Reader::read_y() const { return read_real_record(y_at_, "Y"); }

Mesh Reader::read_mesh() const {
  Mesh m;
  m.nelem = header_.nelem;
  m.npoin = header_.npoin;
  m.ndp = header_.ndp;
  m.nplan = header_.nplan();
  m.ikle = read_ikle();
  m.ipobo = read_ipobo();
  m.x = read_x();
  m.y = read_y();
  return m;
}

void Reader::check_frame(std::int64_t frame, int var) const {
  if (frame < 0 || frame >= frames_)
    throw UsageError(source_->name() + ": frame " + std::to_string(frame + 1) + " requested, the file has " +
                     std::to_string(frames_) + " whole frames");
  if (var != -1 && (var < 0 || var >= header_.nvar()))
    throw UsageError(source_->name() + ": variable " + std::to_string(var + 1) + " requested, the file has " +
                     std::to_string(header_.nvar()));
}

double Reader::read_time(std::int64_t frame) const {
  check_frame(frame, -1);
  const std::int64_t at = layout_.frame_offset(frame);
  const int rs = layout_.real_bytes;
  unsigned char buf[16];
  source_->read_at(at, buf, static_cast<std::size_t>(8 + rs));
  const std::int32_t m1 = load<std::int32_t>(buf, header_.byte_order);
  const std::int32_t m2 = load<std::int32_t>(buf + 4 + rs, header_.byte_order);
  if (m1 != rs || m2 != rs)
    throw FormatError(source_->name(), "record time of frame " + std::to_string(frame + 1), at,
                      "length markers " + std::to_string(m1) + "/" + std::to_string(m2) + ", expected " + std::to_string(rs));
  return rs == 4 ? static_cast<double>(load<float>(buf + 4, header_.byte_order)) : load<double>(buf + 4, header_.byte_order);
}

std::vector<double> Reader::read_times() const {
  // One small record per frame, far apart: ask for all of them first, so that a cold file
  // costs about one disk round trip rather than one per frame.
  for (std::int64_t f = 0; f < frames_; ++f) source_->will_need(layout_.frame_offset(f), 8 + layout_.real_bytes);
  std::vector<double> t(static_cast<std::size_t>(frames_));
  for (std::int64_t f = 0; f < frames_; ++f) t[static_cast<std::size_t>(f)] = read_time(f);
  return t;
}

void Reader::check_value_markers(std::int64_t frame, int var, std::int32_t m1, std::int32_t m2) const {
  const std::int64_t payload = header_.npoin * layout_.real_bytes;
  if (m1 != payload || m2 != payload)
    throw FormatError(source_->name(), "record variable " + std::to_string(var + 1) + " of frame " + std::to_string(frame + 1),
                      layout_.values_offset(frame, var) - 4,
                      "length markers " + std::to_string(m1) + "/" + std::to_string(m2) + ", expected " + std::to_string(payload));
}

namespace {
// out[k] = the k-th value of type S at raw (native byte order), for k < n.
template <class S, class T>
void convert_values(const unsigned char* raw, std::size_t n, T* out) {
  for (std::size_t k = 0; k < n; ++k) {
    S v;
    std::memcpy(&v, raw + k * sizeof(S), sizeof(S));
    out[k] = static_cast<T>(v);
  }
}
}  // namespace

template <class T>
void Reader::read_values(std::int64_t frame, int var, std::int64_t first, std::int64_t count, T* out) const {
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>, "float or double");
  if (var < 0) throw UsageError(source_->name() + ": variable numbers start at 1");
  check_frame(frame, var);
  if (first < 0 || count < 0 || first + count > header_.npoin)
    throw UsageError(source_->name() + ": node range out of bounds");
  const int rs = layout_.real_bytes;
  const std::int64_t at = layout_.values_offset(frame, var);
  const std::int64_t payload = header_.npoin * rs;
  const bool whole = first == 0 && count == header_.npoin;
  // Front to back (markers, then values, then the closing marker) so that the kernel's
  // read-ahead sees one sequential stream.
  const std::int32_t m1 = read_i32(*source_, at - 4, header_.byte_order);
  if (!whole) check_value_markers(frame, var, m1, read_i32(*source_, at + payload, header_.byte_order));
  const std::int64_t begin = at + first * rs;
  if (static_cast<int>(sizeof(T)) == rs) {
    // Read in place, then fix the byte order in cache-sized pieces.
    constexpr std::int64_t piece = 1 << 18;
    for (std::int64_t i = 0; i < count; i += piece) {
      std::int64_t m = std::min(piece, count - i);
      source_->read_at(begin + i * rs, out + i, static_cast<std::size_t>(m) * sizeof(T));
      to_order<sizeof(T)>(out + i, static_cast<std::size_t>(m), header_.byte_order);
    }
  } else {
    // The other precision: a piece read, its byte order fixed in place, then converted
    // (each step a simple loop the compiler vectorises).
    std::vector<unsigned char> buf(kChunkValues * 8);
    for (std::int64_t i = 0; i < count; i += static_cast<std::int64_t>(kChunkValues)) {
      const auto m = static_cast<std::size_t>(std::min<std::int64_t>(static_cast<std::int64_t>(kChunkValues), count - i));
      source_->read_at(begin + i * rs, buf.data(), m * static_cast<std::size_t>(rs));
      if (rs == 4) {
        to_order<4>(buf.data(), m, header_.byte_order);
        convert_values<float>(buf.data(), m, out + i);
      } else {
        to_order<8>(buf.data(), m, header_.byte_order);
        convert_values<double>(buf.data(), m, out + i);
      }
    }
  }
  if (whole) check_value_markers(frame, var, m1, read_i32(*source_, at + payload, header_.byte_order));
}

void Reader::read_encoded(std::int64_t frame, int var, std::int64_t first, std::int64_t count, void* out) const {
  if (var < 0) throw UsageError(source_->name() + ": variable numbers start at 1");
  check_frame(frame, var);
  if (first < 0 || count < 0 || first + count > header_.npoin)
    throw UsageError(source_->name() + ": node range out of bounds");
  const std::int64_t at = layout_.values_offset(frame, var);
  const std::int64_t payload = header_.npoin * layout_.real_bytes;
  const auto expected = static_cast<std::int32_t>(payload);  // fits: the X record, checked at open, is as long
  // Front to back, as read_values: the opening marker with the first piece, the closing one
  // with the last.
  if (first == 0) check_value_markers(frame, var, read_i32(*source_, at - 4, header_.byte_order), expected);
  source_->read_at(at + first * layout_.real_bytes, out, static_cast<std::size_t>(count * layout_.real_bytes));
  if (first + count == header_.npoin) check_value_markers(frame, var, expected, read_i32(*source_, at + payload, header_.byte_order));
}

void Reader::check_markers(std::int64_t frame, int var) const {
  check_frame(frame, var);
  const std::int64_t at = layout_.values_offset(frame, var), payload = header_.npoin * layout_.real_bytes;
  check_value_markers(frame, var, read_i32(*source_, at - 4, header_.byte_order), read_i32(*source_, at + payload, header_.byte_order));
}

void Reader::read_frame_encoded(std::int64_t frame, void* out) const {
  check_frame(frame, -1);
  const std::int64_t at = layout_.frame_offset(frame);
  auto* b = static_cast<unsigned char*>(out);
  source_->read_at(at, b, static_cast<std::size_t>(layout_.frame_bytes));
  const int rs = layout_.real_bytes;
  const std::int32_t t1 = load<std::int32_t>(b, header_.byte_order), t2 = load<std::int32_t>(b + 4 + rs, header_.byte_order);
  if (t1 != rs || t2 != rs)
    throw FormatError(source_->name(), "record time of frame " + std::to_string(frame + 1), at,
                      "length markers " + std::to_string(t1) + "/" + std::to_string(t2) + ", expected " + std::to_string(rs));
  const std::int64_t payload = header_.npoin * rs;
  for (int v = 0; v < header_.nvar(); ++v) {
    const unsigned char* values = b + (layout_.values_offset(frame, v) - at);
    check_value_markers(frame, v, load<std::int32_t>(values - 4, header_.byte_order),
                        load<std::int32_t>(values + payload, header_.byte_order));
  }
}

void Reader::prefetch(std::int64_t first, std::int64_t count) const {
  const std::int64_t end = std::min(frames_, first + count);
  if (first < 0 || first >= end) return;
  source_->will_need(layout_.frame_offset(first), layout_.frame_offset(end) - layout_.frame_offset(first));
}

void Reader::prefetch(std::int64_t first, std::int64_t count, std::int64_t node, std::int64_t n) const {
  const std::int64_t end = std::min(frames_, first + count);
  if (first < 0 || n <= 0) return;
  for (std::int64_t f = first; f < end; ++f)
    for (int v = 0; v < header_.nvar(); ++v)
      source_->will_need(layout_.values_offset(f, v) + node * layout_.real_bytes, n * layout_.real_bytes);
}

template void Reader::read_values<float>(std::int64_t, int, std::int64_t, std::int64_t, float*) const;
template void Reader::read_values<double>(std::int64_t, int, std::int64_t, std::int64_t, double*) const;

// ---------------------------------------------------------------------------------------
// Writer

template <class T>
void encode_reals(const T* values, std::int64_t n, Precision precision, ByteOrder order, void* out) {
  const bool swap = order != native_byte_order();
  if (precision == Precision::Single)
    encode_words<float>(values, static_cast<std::size_t>(n), swap, out);
  else
    encode_words<double>(values, static_cast<std::size_t>(n), swap, out);
}
template void encode_reals<float>(const float*, std::int64_t, Precision, ByteOrder, void*);
template void encode_reals<double>(const double*, std::int64_t, Precision, ByteOrder, void*);

void check_record_limits(const Header& h, const WriteOptions& options) {
  std::int64_t limit = options.max_record_bytes;
  // A lower limit from the environment: exercises the route past the limit on small meshes.
  if (const char* env = std::getenv("ANABRANCH_SERAFIN_RECORD_LIMIT"); env && std::atoll(env) > 0)
    limit = std::min<std::int64_t>(limit, std::atoll(env));
  const std::int64_t rs = real_size(h.precision);
  auto check = [&](const char* record, std::int64_t bytes, const std::string& why) {
    if (bytes > limit)
      throw UsageError("record " + std::string(record) + " would hold " + std::to_string(bytes) +
                       " bytes, more than SERAFIN's record limit of " + std::to_string(limit) + " bytes (" + why +
                       "): write HDF5 instead (strategy hdf5, or anabranch convert IN OUT.h5) or partition the mesh");
  };
  check("IKLE", h.nelem * h.ndp * 4, std::to_string(h.nelem) + " elements of " + std::to_string(h.ndp) + " nodes");
  check("X", h.npoin * rs, std::to_string(h.npoin) + " nodes in " + to_string(h.precision) + " precision");
}

void write_header_records(ByteSink& sink, const Header& h, const WriteOptions& options) {
  check_record_limits(h, options);
  if (h.nelem > 2147483647 || h.npoin > 2147483647) throw UsageError("NELEM and NPOIN must fit in 32 bits");
  const ByteOrder bo = h.byte_order;
  const std::string title = h.title_for_output();
  put_record(sink, title.data(), 80, bo);
  const std::int32_t counts[2] = {h.nvar(), h.nbv2};
  std::int32_t tmp[10];
  for (int i = 0; i < 2; ++i) store<std::int32_t>(&tmp[i], counts[i], bo);
  put_record(sink, tmp, 8, bo);
  for (const auto& v : h.variables) {
    std::string rec = pad(v.name, 16) + pad(v.unit, 16);
    put_record(sink, rec.data(), 32, bo);
  }
  auto iparam = h.iparam;
  iparam[9] = h.date ? 1 : (iparam[9] == 1 ? 0 : iparam[9]);
  for (int i = 0; i < 10; ++i) store<std::int32_t>(&tmp[i], iparam[static_cast<std::size_t>(i)], bo);
  put_record(sink, tmp, 40, bo);
  if (h.date) {
    for (int i = 0; i < 6; ++i) store<std::int32_t>(&tmp[i], (*h.date)[static_cast<std::size_t>(i)], bo);
    put_record(sink, tmp, 24, bo);
  }
  const std::int32_t sizes[4] = {static_cast<std::int32_t>(h.nelem), static_cast<std::int32_t>(h.npoin), h.ndp, h.sizes4};
  for (int i = 0; i < 4; ++i) store<std::int32_t>(&tmp[i], sizes[i], bo);
  put_record(sink, tmp, 16, bo);
}

void write_header(ByteSink& sink, const Header& h, const Mesh& mesh, const WriteOptions& options) {
  if (mesh.nelem != h.nelem || mesh.npoin != h.npoin || mesh.ndp != h.ndp)
    throw UsageError("header sizes (NELEM " + std::to_string(h.nelem) + ", NPOIN " + std::to_string(h.npoin) +
                     ", NDP " + std::to_string(h.ndp) + ") disagree with the mesh (" + std::to_string(mesh.nelem) + ", " +
                     std::to_string(mesh.npoin) + ", " + std::to_string(mesh.ndp) + ")");
  mesh.check_sizes();
  write_header_records(sink, h, options);
  const ByteOrder bo = h.byte_order;
  put_int_record(sink, mesh.ikle.data(), h.nelem * h.ndp, bo);
  put_int_record(sink, mesh.ipobo.data(), h.npoin, bo);
  std::vector<unsigned char> scratch;
  put_real_record(sink, mesh.x.data(), h.npoin, h.precision, bo, scratch);
  put_real_record(sink, mesh.y.data(), h.npoin, h.precision, bo, scratch);
}

void write_header(ByteSink& sink, const Header& h, const Reader& mesh_file, const WriteOptions& options) {
  write_header_records(sink, h, options);
  // One share: every piece comes in the file's order.
  copy_mesh_records(h, mesh_file, 0, 1, [&](std::int64_t, const void* data, std::size_t n) { sink.write(data, n); });
}

std::int64_t mesh_records_offset(const Header& h) {
  const std::int64_t rs = real_size(h.precision);
  return Layout::of(h).header_bytes - (8 + h.nelem * h.ndp * 4) - (8 + h.npoin * 4) - 2 * (8 + h.npoin * rs);
}

bool extrudes(const Header& h, const Header& g) {
  const std::int64_t nplan = h.nplan();
  return nplan > 1 && g.nplan() == 1 && g.ndp == 3 && h.ndp == 6 && g.npoin * nplan == h.npoin && g.nelem * (nplan - 1) == h.nelem;
}

void check_mesh_source(const Header& h, const Reader& mesh_file) {
  const Header& g = mesh_file.header();
  if ((g.nelem != h.nelem || g.npoin != h.npoin || g.ndp != h.ndp) && !extrudes(h, g))
    throw UsageError(mesh_file.name() + " does not have the header's sizes (NELEM, NPOIN, NDP), nor its 2D mesh to extrude");
}

namespace {
// Runs [first, first + count) of an extruded record of `per_plane` items a plane (layer),
// cut at the planes: f(plane, first item within it, items, where they go in the output).
template <class F>
void by_plane(std::int64_t per_plane, std::int64_t first, std::int64_t count, F f) {
  for (std::int64_t i = first; i < first + count;) {
    const std::int64_t plane = i / per_plane, at = i % per_plane, m = std::min(per_plane - at, first + count - i);
    f(plane, at, m, i - first);
    i += m;
  }
}
}  // namespace

void read_mesh_rows(const Header& h, const Reader& mesh_file, std::int64_t first, std::int64_t count, std::int32_t* out) {
  const Header& g = mesh_file.header();
  if (!extrudes(h, g)) {
    mesh_file.read_ikle_rows(first, count, out);
    return;
  }
  if (first < 0 || count < 0 || first + count > h.nelem) throw UsageError(mesh_file.name() + ": element range out of bounds");
  std::vector<std::int32_t> rows;
  const auto np = static_cast<std::int32_t>(g.npoin);
  by_plane(g.nelem, first, count, [&](std::int64_t layer, std::int64_t e2, std::int64_t m, std::int64_t o) {
    rows.resize(static_cast<std::size_t>(m * 3));
    mesh_file.read_ikle_rows(e2, m, rows.data());
    const auto below = static_cast<std::int32_t>(layer) * np, above = below + np;
    for (std::int64_t e = 0; e < m; ++e)
      for (int k = 0; k < 3; ++k) {
        out[(o + e) * 6 + k] = rows[static_cast<std::size_t>(e * 3 + k)] + below;
        out[(o + e) * 6 + 3 + k] = rows[static_cast<std::size_t>(e * 3 + k)] + above;
      }
  });
}

void read_mesh_ipobo(const Header& h, const Reader& mesh_file, std::int64_t first, std::int64_t count, std::int32_t* out) {
  if (!extrudes(h, mesh_file.header())) {
    mesh_file.read_ipobo(first, count, out);
    return;
  }
  if (first < 0 || count < 0 || first + count > h.npoin) throw UsageError(mesh_file.name() + ": node range out of bounds");
  std::fill(out, out + count, 0);  // the extruded mesh has no boundary numbering (gretel's 0s)
}

void read_mesh_coordinates(const Header& h, const Reader& mesh_file, bool y, std::int64_t first, std::int64_t count, double* out) {
  const Header& g = mesh_file.header();
  if (!extrudes(h, g)) {
    mesh_file.read_coordinates(y, first, count, out);
    return;
  }
  if (first < 0 || count < 0 || first + count > h.npoin) throw UsageError(mesh_file.name() + ": node range out of bounds");
  by_plane(g.npoin, first, count, [&](std::int64_t, std::int64_t p2, std::int64_t m, std::int64_t o) {
    mesh_file.read_coordinates(y, p2, m, out + o);
  });
}

namespace {
// Items [first, last) of n cut into `shares` runs, the first n % shares one longer.
std::pair<std::int64_t, std::int64_t> share_of(std::int64_t n, int share, int shares) {
  return {n / shares * share + std::min<std::int64_t>(share, n % shares),
          n / shares * (share + 1) + std::min<std::int64_t>(share + 1, n % shares)};
}

// copy_mesh_records for a mesh extruded from mesh_file's: each share's items made from the
// geometry's (read_mesh_*), encoded in the header's precision and byte order.
void copy_extruded_records(const Header& h, const Reader& mesh_file, int share, int shares,
                           const std::function<void(std::int64_t, const void*, std::size_t)>& write_at) {
  const ByteOrder bo = h.byte_order;
  const int rs = real_size(h.precision);
  std::int64_t at = mesh_records_offset(h);
  std::vector<std::int32_t> ints;
  std::vector<double> reals;
  std::vector<unsigned char> out;
  for (int r = 0; r < 4; ++r) {
    const std::int64_t per = r == 0 ? h.ndp : 1, n = (r == 0 ? h.nelem : h.npoin), size = r < 2 ? 4 : rs;
    const std::int64_t bytes = n * per * size;
    unsigned char marker[4];
    store<std::int32_t>(marker, static_cast<std::int32_t>(bytes), bo);
    if (share == 0) write_at(at, marker, 4);
    const auto [first, last] = share_of(n, share, shares);
    const std::int64_t step = std::max<std::int64_t>(1, (std::int64_t{1} << 20) / (per * size));
    for (std::int64_t i = first; i < last; i += step) {
      const std::int64_t m = std::min(step, last - i);
      out.resize(static_cast<std::size_t>(m * per * size));
      if (r < 2) {
        ints.resize(static_cast<std::size_t>(m * per));
        if (r == 0)
          read_mesh_rows(h, mesh_file, i, m, ints.data());
        else
          read_mesh_ipobo(h, mesh_file, i, m, ints.data());
        for (std::size_t k = 0; k < ints.size(); ++k) store<std::int32_t>(out.data() + 4 * k, ints[k], bo);
      } else {
        reals.resize(static_cast<std::size_t>(m));
        read_mesh_coordinates(h, mesh_file, r == 3, i, m, reals.data());
        encode_reals(reals.data(), m, h.precision, bo, out.data());
      }
      write_at(at + 4 + i * per * size, out.data(), out.size());
    }
    if (share == 0) write_at(at + 4 + bytes, marker, 4);
    at += bytes + 8;
  }
}
}  // namespace

void copy_mesh_records(const Header& h, const Reader& mesh_file, int share, int shares,
                       const std::function<void(std::int64_t, const void*, std::size_t)>& write_at) {
  check_mesh_source(h, mesh_file);
  const Header& g = mesh_file.header();
  const ByteOrder bo = h.byte_order;
  if (extrudes(h, g)) {
    copy_extruded_records(h, mesh_file, share, shares, write_at);
    return;
  }
  const auto& src = mesh_file.source();
  const int rs_in = real_size(g.precision), rs = real_size(h.precision);
  struct Record {
    std::int64_t from, n;  // the source record's marker, its items
    int in, out;           // item sizes in the source and here
  };
  const Record records[4] = {{mesh_file.ikle_offset(), h.nelem * h.ndp, 4, 4},
                             {mesh_file.ipobo_offset(), h.npoin, 4, 4},
                             {mesh_file.x_offset(), h.npoin, rs_in, rs},
                             {mesh_file.y_offset(), h.npoin, rs_in, rs}};
  std::int64_t at = mesh_records_offset(h);  // this record's leading marker, here
  std::vector<unsigned char> in, out;
  std::vector<double> values;
  for (const Record& r : records) {
    const std::int64_t bytes = r.n * r.out;
    unsigned char marker[4];
    store<std::int32_t>(marker, static_cast<std::int32_t>(bytes), bo);
    if (share == 0) write_at(at, marker, 4);
    // This share's items, a piece at a time: copied as stored (swapped when the byte orders
    // differ), or converted to the other precision.
    const auto [first, last] = share_of(r.n, share, shares);
    const std::int64_t step = (std::int64_t{1} << 20) / r.in;
    for (std::int64_t i = first; i < last; i += step) {
      const std::int64_t m = std::min(step, last - i);
      in.resize(static_cast<std::size_t>(m * r.in));
      src.read_at(r.from + 4 + i * r.in, in.data(), in.size());
      if (r.in == r.out) {
        if (g.byte_order != bo) {
          if (r.in == 4)
            bswap_words<4>(in.data(), in.size() / 4);
          else
            bswap_words<8>(in.data(), in.size() / 8);
        }
        write_at(at + 4 + i * r.out, in.data(), in.size());
        continue;
      }
      values.resize(static_cast<std::size_t>(m));
      for (std::int64_t k = 0; k < m; ++k)
        values[static_cast<std::size_t>(k)] = r.in == 4 ? static_cast<double>(load<float>(in.data() + 4 * k, g.byte_order))
                                                        : load<double>(in.data() + 8 * k, g.byte_order);
      out.resize(static_cast<std::size_t>(m * r.out));
      encode_reals(values.data(), m, h.precision, bo, out.data());
      write_at(at + 4 + i * r.out, out.data(), out.size());
    }
    if (share == 0) write_at(at + 4 + bytes, marker, 4);
    at += bytes + 8;
  }
}

Writer::Writer(const std::string& path, const Header& header, const Mesh& mesh, const WriteOptions& options)
    : header_(header), layout_(Layout::of(header)), sink_(path, 8u << 20, !options.atomic), flush_frames_(!options.atomic) {
  check_record_limits(header_, options);
  write_header(sink_, header_, mesh, options);
  if (flush_frames_) sink_.flush();
}

Writer::Writer(const std::string& path, const Header& header, const Reader& mesh_file, const WriteOptions& options)
    : header_(header), layout_(Layout::of(header)), sink_(path, 8u << 20, !options.atomic), flush_frames_(!options.atomic) {
  write_header(sink_, header_, mesh_file, options);
  if (flush_frames_) sink_.flush();
}

Writer::~Writer() = default;

void Writer::begin_frame(double time) {
  if (next_var_ >= 0) throw UsageError("begin_frame: frame " + std::to_string(frames_ + 1) + " is not complete");
  const int rs = layout_.real_bytes;
  unsigned char buf[16];
  store<std::int32_t>(buf, rs, header_.byte_order);
  encode_reals(&time, 1, header_.precision, header_.byte_order, buf + 4);
  store<std::int32_t>(buf + 4 + rs, rs, header_.byte_order);
  sink_.write(buf, static_cast<std::size_t>(8 + rs));
  next_var_ = 0;
  if (header_.nvar() == 0) {
    next_var_ = -1;
    ++frames_;
    if (flush_frames_) sink_.flush();
  }
}

template <class T>
void Writer::write_variable(const T* values) {
  if (next_var_ < 0) throw UsageError("write_variable called outside a frame (call begin_frame first)");
  put_real_record(sink_, values, header_.npoin, header_.precision, header_.byte_order, scratch_);
  end_variable();
}

void Writer::write_variable_encoded(const void* bytes) {
  if (next_var_ < 0) throw UsageError("write_variable called outside a frame (call begin_frame first)");
  const auto n = static_cast<std::int32_t>(header_.npoin * layout_.real_bytes);
  put_i32(sink_, n, header_.byte_order);
  sink_.write(bytes, static_cast<std::size_t>(n));
  put_i32(sink_, n, header_.byte_order);
  end_variable();
}

void Writer::end_variable() {
  if (++next_var_ == header_.nvar()) {
    next_var_ = -1;
    ++frames_;
    if (flush_frames_) sink_.flush();
  }
}

template <class T>
void Writer::write_frame(double time, const std::vector<const T*>& values) {
  if (static_cast<int>(values.size()) != header_.nvar())
    throw UsageError("write_frame: " + std::to_string(values.size()) + " variables given, the file has " +
                     std::to_string(header_.nvar()));
  begin_frame(time);
  for (const T* v : values) write_variable(v);
}

template void Writer::write_variable<float>(const float*);
template void Writer::write_variable<double>(const double*);
template void Writer::write_frame<float>(double, const std::vector<const float*>&);
template void Writer::write_frame<double>(double, const std::vector<const double*>&);

void Writer::close() {
  if (next_var_ >= 0) throw UsageError("close: frame " + std::to_string(frames_ + 1) + " is not complete");
  sink_.commit();
}

}  // namespace anabranch::serafin
