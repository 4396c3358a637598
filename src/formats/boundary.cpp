// Boundary-conditions (.cli) files. Specification: docs/formats/boundary.md.
#include "formats/boundary.hpp"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <cstdio>
#include <cstdlib>
#include <string_view>
#include <vector>

#include "core/error.hpp"
#include "core/io.hpp"

namespace anabranch::boundary {
namespace {

// A column [b, e) of a line as an integer or a real: std::from_chars, with strtoll/strtod
// for what it does not take (a leading '+', Fortran's D exponent).
bool parse_int(const char* b, const char* e, std::int64_t& out) {
  if (b == e) return false;
  const auto r = std::from_chars(b, e, out);
  if (r.ec == std::errc() && r.ptr == e) return true;
  char buf[32];
  if (e - b >= static_cast<std::ptrdiff_t>(sizeof buf)) return false;
  std::memcpy(buf, b, static_cast<std::size_t>(e - b));
  buf[e - b] = '\0';
  char* end = nullptr;
  errno = 0;
  const long long v = std::strtoll(buf, &end, 10);
  if (errno != 0 || *end != '\0') return false;
  out = v;
  return true;
}

bool parse_real(const char* b, const char* e, double& out) {
  if (b == e) return false;
  const auto r = std::from_chars(b, e, out);
  if (r.ec == std::errc() && r.ptr == e) return true;
  char buf[64];
  if (e - b >= static_cast<std::ptrdiff_t>(sizeof buf)) return false;
  for (std::ptrdiff_t i = 0; i < e - b; ++i) buf[i] = (b[i] == 'd' || b[i] == 'D') ? 'e' : b[i];  // Fortran double precision
  buf[e - b] = '\0';
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(buf, &end);
  if (errno == ERANGE || *end != '\0') return false;
  out = v;
  return true;
}

std::string fortran_f(double v, int width, int decimals) {
  char buf[64];
  int n = std::snprintf(buf, sizeof buf, "%*.*f", width, decimals, v);
  if (n > width) return std::string(static_cast<std::size_t>(width), '*');
  return buf;
}

std::string fortran_i(std::int64_t v, int width) {
  char buf[32];
  int n = std::snprintf(buf, sizeof buf, "%*lld", width, static_cast<long long>(v));
  if (n > width) return std::string(static_cast<std::size_t>(width), '*');
  return buf;
}

}  // namespace

File parse(const std::string& text, const std::string& path, bool keep_text) {
  File f;
  f.path = path;
  f.lines.reserve(static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n')) + 1);
  std::size_t pos = 0;
  std::int64_t lineno = 0;
  while (pos < text.size()) {
    std::size_t eol = text.find('\n', pos);
    if (eol == std::string::npos) eol = text.size();
    std::size_t len = eol - pos;
    if (len > 0 && text[pos + len - 1] == '\r') --len;
    const std::size_t line_offset = pos;
    pos = eol + 1;
    ++lineno;
    Line line;
    if (keep_text) line.text.assign(text, line_offset, len);
    line.offset = static_cast<std::int64_t>(line_offset);
    line.lineno = lineno;
    const std::string_view raw(text.data() + line_offset, len);
    std::pair<std::size_t, std::size_t> fields[13];  // [begin, end) of the first 13 columns in raw
    std::size_t columns = 0;
    for (std::size_t i = 0; i < raw.size() && columns < 13;) {
      while (i < raw.size() && (raw[i] == ' ' || raw[i] == '\t')) ++i;
      if (i >= raw.size()) break;
      std::size_t b = i;
      while (i < raw.size() && raw[i] != ' ' && raw[i] != '\t') ++i;
      fields[columns++] = {b, i};
    }
    if (columns == 0) continue;  // blank lines are ignored
    auto where = [&](std::size_t field) {
      return "line " + std::to_string(lineno) + (field ? ", column " + std::to_string(field) : std::string());
    };
    auto offset_of = [&](std::size_t field) {
      return static_cast<std::int64_t>(line_offset + (field ? fields[field - 1].first : 0));
    };
    if (columns < 13)
      throw FormatError(path, where(0), offset_of(0),
                        "expected 13 columns (LIHBOR LIUBOR LIVBOR HBOR UBOR VBOR AUBOR LITBOR TBOR ATBOR BTBOR N K), found " +
                            std::to_string(columns));
    auto tok = [&](std::size_t field) {
      return std::string(raw.substr(fields[field - 1].first, fields[field - 1].second - fields[field - 1].first));
    };
    auto as_int = [&](std::size_t field, std::int64_t& v) {
      return parse_int(raw.data() + fields[field - 1].first, raw.data() + fields[field - 1].second, v);
    };
    auto as_real = [&](std::size_t field, double& v) {
      return parse_real(raw.data() + fields[field - 1].first, raw.data() + fields[field - 1].second, v);
    };
    int* ints[] = {&line.lihbor, &line.liubor, &line.livbor};
    for (std::size_t c = 1; c <= 3; ++c) {
      std::int64_t v;
      if (!as_int(c, v)) throw FormatError(path, where(c), offset_of(c), "'" + tok(c) + "' is not an integer code");
      *ints[c - 1] = static_cast<int>(v);
    }
    double* reals[] = {&line.hbor, &line.ubor, &line.vbor, &line.aubor};
    for (std::size_t c = 4; c <= 7; ++c)
      if (!as_real(c, *reals[c - 4])) throw FormatError(path, where(c), offset_of(c), "'" + tok(c) + "' is not a number");
    {
      std::int64_t v;
      if (!as_int(8, v)) throw FormatError(path, where(8), offset_of(8), "'" + tok(8) + "' is not an integer code");
      line.litbor = static_cast<int>(v);
    }
    double* reals2[] = {&line.tbor, &line.atbor, &line.btbor};
    for (std::size_t c = 9; c <= 11; ++c)
      if (!as_real(c, *reals2[c - 9])) throw FormatError(path, where(c), offset_of(c), "'" + tok(c) + "' is not a number");
    if (!as_int(12, line.n)) throw FormatError(path, where(12), offset_of(12), "node number '" + tok(12) + "' is not an integer");
    if (!as_int(13, line.k)) throw FormatError(path, where(13), offset_of(13), "'" + tok(13) + "' is not an integer");
    line.end11 = fields[10].second;
    line.begin12 = fields[11].first;
    line.end12 = fields[11].second;
    line.end13 = fields[12].second;
    f.lines.push_back(std::move(line));
  }
  return f;
}

File read(const std::string& path, bool keep_text) {
  return parse(read_text_file(path), path, keep_text);
}

std::string format_telemac(const Line& l, std::int64_t n, std::int64_t k) {
  std::string s;
  s.reserve(208);
  s += ' ';
  s += fortran_i(l.lihbor, 2);
  s += ' ';
  s += fortran_i(l.liubor, 1);
  s += ' ';
  s += fortran_i(l.livbor, 1);
  s += ' ';
  for (double v : {l.hbor, l.ubor, l.vbor}) {
    s += fortran_f(v, 24, 12);
    s += ' ';
  }
  s += ' ';
  s += fortran_f(l.aubor, 24, 12);
  s += "   ";
  s += fortran_i(l.litbor, 1);
  s += ' ';
  for (double v : {l.tbor, l.atbor, l.btbor}) {
    s += fortran_f(v, 24, 12);
    s += ' ';
  }
  s += fortran_i(n, 9);
  s += ' ';
  s += fortran_i(k, 9);
  return s;
}

std::string rewrite(const Line& l, std::int64_t n, std::int64_t k) {
  if (l.text.empty()) return format_telemac(l, n, k);
  std::string out = l.text.substr(0, l.end11);  // through column 11
  auto put = [&](std::size_t room, std::int64_t v) {
    // Right-align the new value in the room the old one had (its spaces included).
    std::string s = std::to_string(v);
    if (s.size() + 1 <= room) s.insert(0, room - s.size(), ' ');
    else s.insert(0, 1, ' ');
    out += s;
  };
  put(l.end12 - l.end11, n);
  put(l.end13 - l.end12, k);
  out += l.text.substr(l.end13);  // extra columns and trailing text, as written
  return out;
}

void validate(const File& file, std::int64_t npoin, const std::string& mesh_name) {
  // In file order, the first line naming a node outside the mesh or one named before. The
  // lines are sorted by node rather than marked in an array of NPOIN: a rank of the
  // partitioner holds the boundary, never a word per node of the mesh.
  const auto& lines = file.lines;
  std::size_t bad = lines.size();  // the first line out of range
  for (std::size_t i = 0; i < lines.size() && bad == lines.size(); ++i)
    if (lines[i].n < 1 || lines[i].n > npoin) bad = i;
  std::vector<std::size_t> order;
  order.reserve(bad);
  for (std::size_t i = 0; i < bad; ++i) order.push_back(i);
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return lines[a].n != lines[b].n ? lines[a].n < lines[b].n : a < b; });
  std::size_t twice = lines.size(), first = 0;  // the first line naming a node again, and the line it repeats
  for (std::size_t g = 0, j; g < order.size(); g = j) {  // each node's lines, in file order
    for (j = g + 1; j < order.size() && lines[order[j]].n == lines[order[g]].n; ++j) {
    }
    if (j - g >= 2 && order[g + 1] < twice) twice = order[g + 1], first = order[g];
  }
  auto at = [&](const Line& l) { return l.offset + static_cast<std::int64_t>(l.begin12); };
  if (twice < bad) {
    const auto& l = lines[twice];
    throw FormatError(file.path, "line " + std::to_string(l.lineno) + ", column 12", at(l),
                      "node " + std::to_string(l.n) + " is listed twice (first on line " + std::to_string(lines[first].lineno) + ")");
  }
  if (bad < lines.size()) {
    const auto& l = lines[bad];
    throw FormatError(file.path, "line " + std::to_string(l.lineno) + ", column 12", at(l),
                      "node " + std::to_string(l.n) + " is outside 1.." + std::to_string(npoin) + " (NPOIN of " + mesh_name + ")");
  }
}

void write(const std::string& path, const std::vector<std::string>& lines) {
  AtomicFileSink sink(path, 1 << 20);
  for (const auto& l : lines) {
    sink.write(l.data(), l.size());
    sink.write("\n", 1);
  }
  sink.commit();
}

}  // namespace anabranch::boundary
