#include "blockformats/plot3d.hpp"

#include <algorithm>
#include <charconv>
#include <cstring>
#include <fstream>
#include <string_view>

#include "core/byteorder.hpp"
#include "core/error.hpp"
#include "core/io.hpp"

namespace anabranch::plot3d {
namespace {

std::uint32_t u32(const unsigned char* p, bool big) {
  return big ? (std::uint32_t{p[0]} << 24 | std::uint32_t{p[1]} << 16 | std::uint32_t{p[2]} << 8 | p[3])
             : (std::uint32_t{p[3]} << 24 | std::uint32_t{p[2]} << 16 | std::uint32_t{p[1]} << 8 | p[0]);
}

// The 4-byte integer at byte `at` of the header read (-1 past it).
std::int64_t word(const std::vector<unsigned char>& head, std::int64_t at, bool big) {
  if (at + 4 > static_cast<std::int64_t>(head.size())) return -1;
  return static_cast<std::int64_t>(u32(head.data() + at, big));
}

// A grid's or a solution's first records, one reading of them: the block count (multi-grid
// files) and the dimensions, `dims` integers a block and `extra` more (a function file's
// count of variables, in extras). Returns "" and the blocks, and in `at` the byte after
// the dimensions; otherwise what does not fit.
std::string read_dimensions(const std::vector<unsigned char>& head, bool big, bool records, bool multi, int dims, int extra,
                            std::vector<BlockShape>& blocks, std::vector<std::int64_t>& extras, std::int64_t& at) {
  const int per = dims + extra;
  std::int64_t nblocks = 1;
  at = 0;
  if (multi) {
    if (records && word(head, 0, big) != 4) return "first record";
    nblocks = word(head, records ? 4 : 0, big);
    if (nblocks < 1 || nblocks > 10000000) return "block count";
    at = records ? 12 : 4;
  }
  if (records && word(head, at, big) != nblocks * per * 4) return "dimensions record";
  at += records ? 4 : 0;
  if (at + nblocks * per * 4 > static_cast<std::int64_t>(head.size())) return "dimensions beyond the header read";
  blocks.clear();
  extras.clear();
  for (std::int64_t b = 0; b < nblocks; ++b) {
    BlockShape s;
    s.id = b + 1;
    for (int a = 0; a < dims; ++a) {
      s.dims[static_cast<std::size_t>(a)] = word(head, at + (b * per + a) * 4, big);
      if (s.dims[static_cast<std::size_t>(a)] < 1 || s.dims[static_cast<std::size_t>(a)] > (1 << 24)) return "block dimensions";
    }
    if (dims == 2) s.dims[2] = 1;
    for (int e = 0; e < extra; ++e) extras.push_back(word(head, at + (b * per + dims + e) * 4, big));
    blocks.push_back(s);
  }
  at += nblocks * per * 4 + (records ? 4 : 0);
  return "";
}

// Tries one reading of the header; fills g and returns "" when the file's size agrees.
std::string try_layout(const std::vector<unsigned char>& head, std::int64_t size, bool big, bool records, bool multi, int dims, Grid& g) {
  std::vector<BlockShape> blocks;
  std::vector<std::int64_t> none;
  std::int64_t at = 0;
  const std::string failed = read_dimensions(head, big, records, multi, dims, 0, blocks, none, at);
  if (!failed.empty()) return failed;
  const std::int64_t data = size - at;
  for (int rb : {8, 4})
    for (bool iblank : {false, true}) {
      std::int64_t need = 0;
      for (const auto& s : blocks) need += s.points() * (dims * rb + (iblank ? 4 : 0)) + (records ? 8 : 0);
      if (need != data) continue;
      if (records) {  // the first block's record length must agree too
        const std::int64_t m = word(head, at, big);
        if (m >= 0 && m != blocks[0].points() * (dims * rb + (iblank ? 4 : 0))) continue;
      }
      g.blocks = blocks;
      g.real_bytes = rb;
      g.big_endian = big;
      g.records = records;
      g.iblank = iblank;
      g.multi = multi;
      g.dimensions = dims;
      g.coords_at.clear();
      std::int64_t p = at;
      for (const auto& s : blocks) {
        g.coords_at.push_back(p + (records ? 4 : 0));
        p += s.points() * (dims * rb + (iblank ? 4 : 0)) + (records ? 8 : 0);
      }
      return "";
    }
  return "size";
}

// CFL3D's binary layout, Fortran records: per block a record "jdim kdim idim" and a record
// of its x, y, z (no block count, no IBLANK). Walks the records' markers (a few bytes a
// block); "" when they account for the whole file.
std::string try_native_binary(std::ifstream& in, std::int64_t size, bool big, Grid& g) {
  std::vector<BlockShape> blocks;
  std::vector<std::int64_t> at_of;
  int rb = 0;
  std::int64_t at = 0;
  unsigned char w[20];
  while (at < size) {
    in.clear();
    in.seekg(at);
    if (!in.read(reinterpret_cast<char*>(w), 20)) return "dimensions record";
    if (u32(w, big) != 12 || u32(w + 16, big) != 12) return "dimensions record";
    BlockShape s;
    s.id = static_cast<std::int64_t>(blocks.size()) + 1;
    for (int a = 0; a < 3; ++a) {
      s.dims[static_cast<std::size_t>(a)] = u32(w + 4 + 4 * a, big);
      if (s.dims[static_cast<std::size_t>(a)] < 1 || s.dims[static_cast<std::size_t>(a)] > (1 << 24)) return "block dimensions";
    }
    at += 20;
    unsigned char m[4];
    in.seekg(at);
    if (!in.read(reinterpret_cast<char*>(m), 4)) return "coordinates record";
    const std::int64_t bytes = u32(m, big), per = s.points() * 3;
    const int this_rb = bytes == per * 8 ? 8 : bytes == per * 4 ? 4 : 0;
    if (this_rb == 0 || (rb != 0 && this_rb != rb)) return "coordinates record";
    rb = this_rb;
    at_of.push_back(at + 4);
    at += 8 + bytes;
    blocks.push_back(s);
  }
  if (at != size || blocks.empty()) return "size";
  g.blocks = blocks;
  g.real_bytes = rb;
  g.big_endian = big;
  g.records = true;
  g.iblank = false;
  g.multi = false;
  g.native = true;
  g.dimensions = 3;
  g.coords_at = at_of;
  return "";
}

// ----- Formatted (ASCII) grids: Fortran list-directed reads.

// Text: printable ASCII and blanks (a value that is no number is found, and named, later).
bool formatted_char(unsigned char c) { return (c >= 32 && c < 127) || c == '\t' || c == '\r' || c == '\n'; }

// The values of Fortran list-directed reads over a text: each read starts on a new line and
// leaves the rest of its last line unread; values are separated by blanks, commas or line
// ends; r*v stands for r copies of v.
class ListInput {
 public:
  ListInput(std::string_view text, const std::string& path, std::int64_t base) : t_(text), path_(path), base_(base) {}
  // The next value of the current read (repeats expanded); false at the end of the text.
  bool next(std::string_view& v) {
    if (left_ > 0) {
      --left_;
      ++copy_;
      v = rep_;
      return true;
    }
    bool comma = false;
    for (;; ++at_) {
      if (at_ >= t_.size()) return false;
      const char c = t_[at_];
      if (c == '\n') {
        ++line_;
        comma = false;
      } else if (c == ',') {
        if (comma) throw error("two commas in a row (an empty value)");
        comma = true;
      } else if (c != ' ' && c != '\t' && c != '\r') {
        break;
      }
    }
    const std::size_t start = at_;
    token_ = start;
    copy_ = 0;
    while (at_ < t_.size() && !std::strchr(" \t\r\n,", t_[at_])) ++at_;
    const std::string_view tok = t_.substr(start, at_ - start);
    const auto star = tok.find('*');
    if (star == std::string_view::npos) {
      v = tok;
      return true;
    }
    std::int64_t r = 0;
    const auto [end, ec] = std::from_chars(tok.data(), tok.data() + star, r);
    if (ec != std::errc() || end != tok.data() + star || r < 1) throw error("'" + std::string(tok) + "': not a repeat count");
    rep_ = tok.substr(star + 1);
    if (rep_.empty()) throw error("'" + std::string(tok) + "': a repeat of empty values");
    left_ = r - 1;
    v = rep_;
    return true;
  }
  // Ends the current read: the rest of its last line (and of a repeat) is not read; skipped()
  // says whether that rest held values.
  void end_read() {
    skipped_ = skipped_ || left_ > 0;
    left_ = 0;
    for (; at_ < t_.size() && t_[at_] != '\n'; ++at_) skipped_ = skipped_ || !std::strchr(" \t\r,", t_[at_]);
    if (at_ < t_.size()) {
      ++at_;
      ++line_;
    }
  }
  // True when nothing but blanks remains.
  bool at_end() const {
    for (std::size_t i = at_; i < t_.size(); ++i)
      if (!std::strchr(" \t\r\n,", t_[i])) return false;
    return left_ == 0;
  }
  std::int64_t offset() const { return base_ + static_cast<std::int64_t>(at_); }
  // Where the value next() gave last comes from: the byte its value or repeat (r*v) starts at,
  // and the copies of that repeat before it.
  std::int64_t token_offset() const { return base_ + static_cast<std::int64_t>(token_); }
  std::int64_t copies_before() const { return copy_; }
  bool skipped() const { return skipped_; }
  // Drops n values (a block's share of a repeat that the block before began).
  void skip(std::int64_t n) {
    std::string_view v;
    for (std::int64_t i = 0; i < n; ++i)
      if (!next(v)) throw error("fewer values than at open");
  }
  std::int64_t line() const { return line_; }
  FormatError error(const std::string& what) const {
    return FormatError(path_, base_ == 0 ? "line " + std::to_string(line_) : "values", offset(), what);
  }

 private:
  std::string_view t_;
  const std::string& path_;
  std::int64_t base_;
  std::size_t at_ = 0;
  std::int64_t line_ = 1;  // counted from the text's start
  std::int64_t left_ = 0;  // copies of rep_ still to hand out
  std::string_view rep_;
  std::size_t token_ = 0;  // the last value's token
  std::int64_t copy_ = 0;  // its copy of the token's repeat, from 0
  bool skipped_ = false;   // a read ended with values left on its line
};

bool integer_value(std::string_view v, std::int64_t& out) {
  if (!v.empty() && v[0] == '+') v.remove_prefix(1);
  const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), out);
  return ec == std::errc() && end == v.data() + v.size();
}

// A Fortran real: 1.5, -2., .5, 1E-3, 1.5D+00, 1.5-100 (exponent without its letter).
bool real_value(std::string_view v, double& out) {
  if (!v.empty() && v[0] == '+') v.remove_prefix(1);
  char buf[64];
  if (v.empty() || v.size() > 60) return false;
  std::size_t n = 0;
  for (std::size_t i = 0; i < v.size(); ++i) {
    char c = v[i];
    if (c == 'd' || c == 'D') c = 'E';
    if ((c == '+' || c == '-') && i > 0 && v[i - 1] != 'e' && v[i - 1] != 'E' && v[i - 1] != 'd' && v[i - 1] != 'D') buf[n++] = 'E';
    buf[n++] = c;
  }
  const auto [end, ec] = std::from_chars(buf, buf + n, out);
  return ec == std::errc() && end == buf + n;
}

bool looks_real(std::string_view v) { return v.find_first_of(".eEdD") != std::string_view::npos; }

// One reading of a formatted grid: count (the block count first), d dimensions per block,
// k values per point (d coordinates, and IBLANK when k > d), each block's values a read of its
// own or (stream) every block's one read. "" and g filled when every block's values are there
// and nothing follows them; strict: and no read left values on its last line.
std::string try_formatted(std::string_view text, const std::string& path, bool count, int d, int k, bool stream, bool strict,
                          Grid& g, std::string& why) {
  ListInput in(text, path, 0);
  std::string_view v;
  std::vector<BlockShape> blocks;
  std::int64_t nblocks = -1;
  auto read_dims = [&](std::int64_t n) {  // one read of n blocks' dimensions
    for (std::int64_t b = 0; b < n; ++b) {
      BlockShape s;
      s.id = static_cast<std::int64_t>(blocks.size()) + 1;
      for (int a = 0; a < d; ++a) {
        std::int64_t x = 0;
        if (!in.next(v) || !integer_value(v, x) || x < 1 || x > (1 << 24)) return false;
        s.dims[static_cast<std::size_t>(a)] = x;
      }
      if (d == 2) s.dims[2] = 1;
      blocks.push_back(s);
    }
    in.end_read();
    return true;
  };
  if (count) {
    if (!in.next(v) || !integer_value(v, nblocks) || nblocks < 1 || nblocks > 10000000) return "block count";
    in.end_read();
    if (!read_dims(nblocks)) return "dimensions";
  }
  std::vector<std::int64_t> at, end, skip;
  for (std::size_t b = 0;; ++b) {
    if (!count) {
      if (in.at_end()) break;
      if (!read_dims(1)) return "dimensions of block " + std::to_string(b + 1);
    } else if (b == blocks.size()) {
      break;
    }
    const std::int64_t want = blocks[b].points() * k, coordinates = blocks[b].points() * d;
    for (std::int64_t i = 0; i < want; ++i) {
      if (!in.next(v)) {
        why = "block " + std::to_string(b + 1) + ": the file ends after " + std::to_string(i) + " of its " + std::to_string(want) + " values";
        return "values";
      }
      if (i == 0) {
        at.push_back(in.token_offset());
        skip.push_back(in.copies_before());
      }
      if (b == 0 && i == 0 && !looks_real(v)) return "coordinates";  // not a grid: a list of integers
      std::int64_t flag = 0;
      if (i >= coordinates && !integer_value(v, flag)) return "IBLANK";  // IBLANK: integers
    }
    end.push_back(in.offset());
    if (!stream) in.end_read();
  }
  if (stream) in.end_read();
  if (blocks.empty()) return "blocks";
  if (strict && in.skipped()) return "values left on a line";
  if (!in.at_end()) {
    why = "values after the last block, at line " + std::to_string(in.line());
    return "values";
  }
  g.blocks = blocks;
  g.real_bytes = 8;
  g.big_endian = false;
  g.records = false;
  g.iblank = k > d;
  g.multi = count;
  g.native = !count && blocks.size() > 1;
  g.dimensions = d;
  g.formatted = true;
  g.stream = stream;
  g.coords_at = at;
  g.coords_end = end;
  g.coords_skip = skip;
  return "";
}

// The numbers on the first line, repeats expanded (at most a few).
std::vector<std::int64_t> first_line_integers(std::string_view text, const std::string& path, bool& all_integers) {
  const std::string_view line = text.substr(0, text.find('\n'));
  ListInput in(line, path, 0);
  std::vector<std::int64_t> out;
  std::string_view v;
  all_integers = true;
  while (out.size() < 8 && in.next(v)) {
    std::int64_t x = 0;
    if (!integer_value(v, x)) all_integers = false;
    out.push_back(x);
  }
  return out;
}

Grid read_formatted(const std::string& path, const std::string& text) {
  bool ints = false;
  const std::vector<std::int64_t> first = first_line_integers(text, path, ints);
  // The first read: the block count alone (multi-grid), or a block's dimensions (single-grid,
  // or CFL3D's layout): 3 numbers for 3D, 2 for 2D.
  if (!ints || first.empty() || first.size() > 3)
    throw FormatError(path, "line 1", 0, "not a formatted PLOT3D grid: its first line holds " + std::to_string(first.size()) +
                                           " numbers, not the block count or one block's dimensions");
  const bool count = first.size() == 1;
  Grid g;
  g.path = path;
  std::string why, first_why;
  // A read per block first; then, with the block count first, one read for every block (a
  // single WRITE of the whole grid): a block's values may start where the last one's ended.
  // First the readings that read every value; then those that leave some at the end of a
  // read's last line (a count after the dimensions that a program does not read).
  for (bool strict : {true, false})
    for (bool stream : {false, true}) {
      if (stream && !count) break;
      for (int d : {3, 2}) {
        if (!count && d != static_cast<int>(first.size())) continue;
        for (int k : {d + 1, d}) {  // IBLANK first: without it, a read of the coordinates alone may leave it on a line's end
          why.clear();
          const std::string failed = try_formatted(text, path, count, d, k, stream, strict, g, why);
          if (failed.empty()) return g;
          if (first_why.empty() && !why.empty()) first_why = why;
        }
      }
    }
  throw FormatError(path, "formatted PLOT3D grid", 0,
                    "no reading (" + std::string(count ? "block count first" : "dimensions before each block") +
                        ", 3D or 2D, with or without IBLANK, a read per block" + (count ? " or one for the whole grid" : "") +
                        ") accounts for its values" + (first_why.empty() ? "" : ": " + first_why));
}

bool looks_formatted(const std::vector<unsigned char>& head) {
  if (head.empty()) return false;
  for (std::size_t i = 0; i < std::min<std::size_t>(head.size(), 4096); ++i)
    if (!formatted_char(head[i])) return false;
  return true;
}

}  // namespace

Grid read_header(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw IoError::from_errno("cannot open", path);
  in.seekg(0, std::ios::end);
  const std::int64_t size = in.tellg();
  in.seekg(0);
  // The first 64 KiB, then, when a reading needs more of the header, enough for the
  // dimensions of a million blocks.
  std::vector<unsigned char> head;
  Grid g;
  g.path = path;
  for (const std::int64_t want : {std::int64_t{64} << 10, 16 + 12 * std::int64_t{1000000} + 8}) {
    head.resize(static_cast<std::size_t>(std::min<std::int64_t>(size, want)));
    in.clear();
    in.seekg(0);
    in.read(reinterpret_cast<char*>(head.data()), static_cast<std::streamsize>(head.size()));
    if (looks_formatted(head)) return read_formatted(path, read_text_file(path));
    bool longer = false;
    for (bool records : {true, false})
      for (bool big : {false, true})
        for (bool multi : {true, false})
          for (int dims : {3, 2}) {
            const std::string failed = try_layout(head, size, big, records, multi, dims, g);
            if (failed.empty()) return g;
            longer = longer || failed == "dimensions beyond the header read";
          }
    if (!longer || static_cast<std::int64_t>(head.size()) == size) break;
  }
  for (bool big : {false, true})
    if (try_native_binary(in, size, big, g).empty()) {
      g.path = path;
      return g;
    }
  throw FormatError(path, "PLOT3D header", 0,
                    "not a PLOT3D grid: no reading (multi- or single-grid, CFL3D's layout, 3D or 2D, single or double, with or "
                    "without IBLANK, either byte order, Fortran records or C binary) gives the file's " + std::to_string(size) + " bytes");
}

bool is_plot3d(const std::string& path) {
  try {
    // A formatted grid is told by its first lines: the block count or a block's dimensions,
    // then integers, then reals. A binary one by its header's records and the file's size.
    std::ifstream in(path, std::ios::binary);
    if (!in) return false;
    std::vector<unsigned char> head(64 << 10);
    in.read(reinterpret_cast<char*>(head.data()), static_cast<std::streamsize>(head.size()));
    head.resize(static_cast<std::size_t>(in.gcount()));
    if (!looks_formatted(head)) {
      read_header(path);
      return true;
    }
    const std::string_view text(reinterpret_cast<const char*>(head.data()), head.size());
    bool ints = false;
    const std::vector<std::int64_t> first = first_line_integers(text, path, ints);
    if (!ints || first.empty() || first.size() > 3) return false;
    for (auto x : first)
      if (x < 1) return false;
    // The values that follow: integers (dimensions) first, then a real within the lines read.
    ListInput values(text.substr(text.find('\n') == std::string_view::npos ? text.size() : text.find('\n') + 1), path, 0);
    std::string_view v;
    while (values.next(v)) {
      std::int64_t x = 0;
      if (looks_real(v)) return true;
      if (!integer_value(v, x)) return false;
    }
    return false;
  } catch (const Error&) {
    return false;
  }
}

void read_block(const Grid& g, std::size_t b, std::array<std::vector<double>, 3>& xyz) {
  const std::int64_t n = g.blocks[b].points();
  for (auto& c : xyz) c.assign(static_cast<std::size_t>(n), 0.0);
  std::ifstream in(g.path, std::ios::binary);
  if (!in) throw IoError::from_errno("cannot open", g.path);
  if (g.formatted) {  // the block's lines, read and parsed once
    std::string text(static_cast<std::size_t>(g.coords_end[b] - g.coords_at[b]), '\0');
    in.seekg(g.coords_at[b]);
    if (!in.read(text.data(), static_cast<std::streamsize>(text.size())))
      throw FormatError(g.path, "block " + std::to_string(b + 1) + " coordinates", g.coords_at[b], "the file ends inside them");
    ListInput values(text, g.path, g.coords_at[b]);
    values.skip(b < g.coords_skip.size() ? g.coords_skip[b] : 0);
    std::string_view v;
    for (int c = 0; c < g.dimensions; ++c)
      for (std::int64_t i = 0; i < n; ++i) {
        if (!values.next(v)) throw FormatError(g.path, "block " + std::to_string(b + 1) + " coordinates", values.offset(), "fewer values than at open");
        if (!real_value(v, xyz[static_cast<std::size_t>(c)][static_cast<std::size_t>(i)]))
          throw FormatError(g.path, "block " + std::to_string(b + 1) + " coordinate " + "xyz"[c] + " value " + std::to_string(i + 1),
                            values.offset() - static_cast<std::int64_t>(v.size()), "'" + std::string(v) + "' is not a number");
      }
    return;
  }
  std::vector<unsigned char> raw(static_cast<std::size_t>(n * g.real_bytes));
  const bool swap = g.big_endian != (native_byte_order() == ByteOrder::Big);
  for (int c = 0; c < g.dimensions; ++c) {
    const std::int64_t at = g.coords_at[b] + c * n * g.real_bytes;
    in.seekg(at);
    in.read(reinterpret_cast<char*>(raw.data()), static_cast<std::streamsize>(raw.size()));
    if (!in) throw FormatError(g.path, "block " + std::to_string(b + 1) + " coordinates", at, "the file ends inside them");
    double* out = xyz[static_cast<std::size_t>(c)].data();
    for (std::int64_t i = 0; i < n; ++i) {
      unsigned char* p = raw.data() + i * g.real_bytes;
      if (swap) std::reverse(p, p + g.real_bytes);
      if (g.real_bytes == 8) {
        std::memcpy(out + i, p, 8);
      } else {
        float f;
        std::memcpy(&f, p, 4);
        out[i] = f;
      }
    }
  }
}

namespace {

// One reading of a solution file: "" and s filled when it gives the file's size.
std::string try_solution(const std::vector<unsigned char>& head, std::int64_t size, bool big, bool records, bool multi, int dims,
                         bool function, Solution& s) {
  std::vector<BlockShape> blocks;
  std::vector<std::int64_t> counts;  // a function file's variables, per block
  std::int64_t at = 0;
  const std::string failed = read_dimensions(head, big, records, multi, dims, function ? 1 : 0, blocks, counts, at);
  if (!failed.empty()) return failed;
  int nvar = function ? 0 : dims + 2;
  for (std::size_t b = 0; b < counts.size(); ++b) {
    if (counts[b] < 1 || counts[b] > 10000 || (b > 0 && counts[b] != nvar)) return "variable count";
    nvar = static_cast<int>(counts[b]);
  }
  for (int rb : {8, 4}) {
    std::int64_t need = 0;
    for (const auto& b : blocks) need += (function ? 0 : 4 * rb + (records ? 8 : 0)) + b.points() * nvar * rb + (records ? 8 : 0);
    if (need != size - at) continue;
    const std::int64_t first = word(head, at, big);
    if (records && first >= 0 && first != (function ? blocks[0].points() * nvar * rb : 4 * rb)) continue;
    s.blocks = blocks;
    s.function = function;
    s.nvar = nvar;
    s.real_bytes = rb;
    s.big_endian = big;
    s.records = records;
    s.multi = multi;
    s.dimensions = dims;
    s.values_at.clear();
    std::int64_t p = at;
    for (const auto& b : blocks) {
      if (!function) p += 4 * rb + (records ? 8 : 0);
      s.values_at.push_back(p + (records ? 4 : 0));
      p += b.points() * nvar * rb + (records ? 8 : 0);
    }
    return "";
  }
  return "size";
}

// One reading of a formatted solution: multi (the block count first), d dimensions per block
// (and a function file's count of variables), then per block a q file's 4 header values in a
// read of their own and the block's values in another. "" and s filled when every block's
// values are there and nothing follows them; strict: and no read left values on its line.
std::string try_formatted_solution(std::string_view text, const std::string& path, bool multi, int d, bool function, bool strict,
                                   Solution& s) {
  ListInput in(text, path, 0);
  std::string_view v;
  std::int64_t nblocks = 1;
  if (multi) {
    if (!in.next(v) || !integer_value(v, nblocks) || nblocks < 1 || nblocks > 10000000) return "block count";
    in.end_read();
  }
  std::vector<BlockShape> blocks;
  int nvar = function ? 0 : d + 2;
  for (std::int64_t b = 0; b < nblocks; ++b) {
    BlockShape shape;
    shape.id = b + 1;
    for (int a = 0; a < d + (function ? 1 : 0); ++a) {
      std::int64_t x = 0;
      if (!in.next(v) || !integer_value(v, x) || x < 1 || x > (1 << 24)) return "dimensions";
      if (a < d)
        shape.dims[static_cast<std::size_t>(a)] = x;
      else if (b > 0 && x != nvar)
        return "variable count";
      else
        nvar = static_cast<int>(x);
    }
    if (d == 2) shape.dims[2] = 1;
    blocks.push_back(shape);
  }
  in.end_read();
  std::vector<std::int64_t> at, end;
  double head[4] = {0, 0, 0, 0}, first[4] = {0, 0, 0, 0};  // a q file's first block's free-stream values
  for (std::size_t b = 0; b < blocks.size(); ++b) {
    if (!function) {
      for (double& h : head)
        if (!in.next(v) || !real_value(v, h)) return "header of block " + std::to_string(b + 1);
      if (b == 0) std::copy(head, head + 4, first);
      in.end_read();
    }
    at.push_back(in.offset());
    const std::int64_t want = blocks[b].points() * nvar;
    for (std::int64_t i = 0; i < want; ++i)
      if (!in.next(v)) return "values";
    end.push_back(in.offset());
    in.end_read();
  }
  if (!in.at_end()) return "values";
  if (strict && in.skipped()) return "values left on a line";
  s.mach = first[0], s.alpha = first[1], s.reynolds = first[2], s.time = first[3];
  s.blocks = blocks;
  s.function = function;
  s.nvar = nvar;
  s.real_bytes = 8;
  s.big_endian = false;
  s.records = false;
  s.multi = multi;
  s.dimensions = d;
  s.formatted = true;
  s.values_at = at;
  s.values_end = end;
  return "";
}

Solution read_formatted_solution(const std::string& path, const std::string& text) {
  bool ints = false;
  const std::vector<std::int64_t> first = first_line_integers(text, path, ints);
  if (!ints || first.empty() || first.size() > 4)
    throw FormatError(path, "line 1", 0, "not a formatted PLOT3D solution: its first line holds " + std::to_string(first.size()) +
                                           " numbers, not the block count or one block's dimensions");
  Solution s;
  const bool multi = first.size() == 1;
  for (bool strict : {true, false})  // first the readings that read every value
    for (int d : {3, 2})
      for (bool function : {false, true}) {
        if (!multi && static_cast<int>(first.size()) != d + (function ? 1 : 0)) continue;
        if (try_formatted_solution(text, path, multi, d, function, strict, s).empty()) {
          s.path = path;
          return s;
        }
      }
  throw FormatError(path, "formatted PLOT3D solution", 0,
                    "not a PLOT3D q or function file: no reading (multi- or single-grid, 3D or 2D, q or function file) "
                    "accounts for its values");
}

// n reals of the file's form at src, as doubles.
void reals(const unsigned char* src, std::int64_t n, int rb, bool big, double* out) {
  const bool swap = big != (native_byte_order() == ByteOrder::Big);
  for (std::int64_t i = 0; i < n; ++i) {
    unsigned char v[8];
    std::memcpy(v, src + i * rb, static_cast<std::size_t>(rb));
    if (swap) std::reverse(v, v + rb);
    if (rb == 8) {
      std::memcpy(out + i, v, 8);
    } else {
      float f;
      std::memcpy(&f, v, 4);
      out[i] = f;
    }
  }
}

}  // namespace

std::vector<std::string> Solution::names() const {
  if (function) {
    std::vector<std::string> out;
    for (int v = 0; v < nvar; ++v) out.push_back("function " + std::to_string(v + 1));
    return out;
  }
  if (dimensions == 2) return {"Density", "MomentumX", "MomentumY", "EnergyStagnationDensity"};
  return {"Density", "MomentumX", "MomentumY", "MomentumZ", "EnergyStagnationDensity"};
}

Solution read_solution(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw IoError::from_errno("cannot open", path);
  in.seekg(0, std::ios::end);
  const std::int64_t size = in.tellg();
  std::vector<unsigned char> head;
  Solution s;
  for (const std::int64_t want : {std::int64_t{64} << 10, 16 + 16 * std::int64_t{1000000} + 8}) {
    head.resize(static_cast<std::size_t>(std::min<std::int64_t>(size, want)));
    in.clear();
    in.seekg(0);
    in.read(reinterpret_cast<char*>(head.data()), static_cast<std::streamsize>(head.size()));
    if (looks_formatted(head)) return read_formatted_solution(path, read_text_file(path));
    bool longer = false;
    for (bool records : {true, false})
      for (bool big : {false, true})
        for (bool multi : {true, false})
          for (int dims : {3, 2})
            for (bool function : {false, true}) {
              const std::string failed = try_solution(head, size, big, records, multi, dims, function, s);
              if (failed.empty()) {
                s.path = path;
                if (!function) {  // the first block's free-stream values
                  const std::int64_t at = s.values_at[0] - (records ? 8 : 0) - 4 * s.real_bytes;
                  std::vector<unsigned char> four(static_cast<std::size_t>(4 * s.real_bytes));
                  in.clear();
                  in.seekg(at);
                  in.read(reinterpret_cast<char*>(four.data()), static_cast<std::streamsize>(four.size()));
                  double v[4];
                  reals(four.data(), 4, s.real_bytes, big, v);
                  s.mach = v[0], s.alpha = v[1], s.reynolds = v[2], s.time = v[3];
                }
                return s;
              }
              longer = longer || failed == "dimensions beyond the header read";
            }
    if (!longer || static_cast<std::int64_t>(head.size()) == size) break;
  }
  throw FormatError(path, "PLOT3D solution header", 0,
                    "not a PLOT3D q or function file: no reading (multi- or single-grid, 3D or 2D, single or double, either byte "
                    "order, Fortran records or C binary) gives the file's " + std::to_string(size) + " bytes");
}

void read_solution_block(const Solution& s, std::size_t b, std::vector<std::vector<double>>& vars) {
  const std::int64_t n = s.blocks.at(b).points();
  std::ifstream in(s.path, std::ios::binary);
  if (!in) throw IoError::from_errno("cannot open", s.path);
  vars.resize(static_cast<std::size_t>(s.nvar));
  if (s.formatted) {  // the block's lines, read and parsed once
    std::string text(static_cast<std::size_t>(s.values_end[b] - s.values_at[b]), '\0');
    in.seekg(s.values_at[b]);
    if (!in.read(text.data(), static_cast<std::streamsize>(text.size())))
      throw FormatError(s.path, "block " + std::to_string(b + 1) + " values", s.values_at[b], "the file ends inside them");
    ListInput values(text, s.path, s.values_at[b]);
    std::string_view v;
    for (int k = 0; k < s.nvar; ++k) {
      auto& out = vars[static_cast<std::size_t>(k)];
      out.resize(static_cast<std::size_t>(n));
      for (std::int64_t i = 0; i < n; ++i) {
        if (!values.next(v)) throw FormatError(s.path, "block " + std::to_string(b + 1) + " values", values.offset(), "fewer values than at open");
        if (!real_value(v, out[static_cast<std::size_t>(i)]))
          throw FormatError(s.path, "block " + std::to_string(b + 1) + " variable " + std::to_string(k + 1) + " value " + std::to_string(i + 1),
                            values.offset() - static_cast<std::int64_t>(v.size()), "'" + std::string(v) + "' is not a number");
      }
    }
    return;
  }
  std::vector<unsigned char> raw(static_cast<std::size_t>(n * s.real_bytes));
  for (int v = 0; v < s.nvar; ++v) {
    const std::int64_t at = s.values_at[b] + v * n * s.real_bytes;
    in.seekg(at);
    if (!in.read(reinterpret_cast<char*>(raw.data()), static_cast<std::streamsize>(raw.size())))
      throw FormatError(s.path, "block " + std::to_string(b + 1) + " variable " + std::to_string(v + 1), at, "the file ends inside it");
    vars[static_cast<std::size_t>(v)].resize(static_cast<std::size_t>(n));
    reals(raw.data(), n, s.real_bytes, s.big_endian, vars[static_cast<std::size_t>(v)].data());
  }
}

void write(const std::string& path, const std::vector<BlockShape>& blocks, bool big_endian,
           const std::function<void(std::size_t b, int c, std::vector<double>& out)>& xyz) {
  AtomicFileSink sink(path);
  const bool swap = big_endian != (native_byte_order() == ByteOrder::Big);
  auto i32 = [&](std::int64_t v) {
    auto x = static_cast<std::uint32_t>(v);
    if (swap) x = __builtin_bswap32(x);
    sink.write(&x, 4);
  };
  i32(4);
  i32(static_cast<std::int64_t>(blocks.size()));
  i32(4);
  i32(static_cast<std::int64_t>(blocks.size()) * 12);
  for (const auto& b : blocks)
    for (auto d : b.dims) i32(d);
  i32(static_cast<std::int64_t>(blocks.size()) * 12);
  std::vector<double> v;
  for (std::size_t b = 0; b < blocks.size(); ++b) {
    const std::int64_t bytes = blocks[b].points() * 3 * 8;
    if (bytes > 0x7fffffffLL) throw UsageError("block " + std::to_string(blocks[b].id) + ": its coordinates (" + std::to_string(bytes) + " bytes) are past a Fortran record's 2^31-1 bytes");
    i32(bytes);
    for (int c = 0; c < 3; ++c) {
      xyz(b, c, v);
      if (swap)
        for (auto& d : v) {
          std::uint64_t u;
          std::memcpy(&u, &d, 8);
          u = __builtin_bswap64(u);
          std::memcpy(&d, &u, 8);
        }
      sink.write(v.data(), v.size() * 8);
    }
    i32(bytes);
  }
  sink.commit();
}

}  // namespace anabranch::plot3d
