// Boundary-conditions (.cli) files. Specification: docs/formats/boundary.md.
#include "formats/boundary.hpp"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "core/error.hpp"
#include "core/io.hpp"

namespace anabranch::boundary {
namespace {

bool parse_int(const std::string& s, std::int64_t& out) {
  if (s.empty()) return false;
  char* end = nullptr;
  errno = 0;
  long long v = std::strtoll(s.c_str(), &end, 10);
  if (errno != 0 || *end != '\0') return false;
  out = v;
  return true;
}

bool parse_real(std::string s, double& out) {
  for (char& c : s)
    if (c == 'd' || c == 'D') c = 'e';  // Fortran double-precision exponent
  if (s.empty()) return false;
  char* end = nullptr;
  errno = 0;
  double v = std::strtod(s.c_str(), &end);
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

File parse(const std::string& text, const std::string& path) {
  File f;
  f.path = path;
  std::size_t pos = 0;
  std::int64_t lineno = 0;
  while (pos < text.size()) {
    std::size_t eol = text.find('\n', pos);
    if (eol == std::string::npos) eol = text.size();
    std::string raw = text.substr(pos, eol - pos);
    if (!raw.empty() && raw.back() == '\r') raw.pop_back();
    const std::size_t line_offset = pos;
    pos = eol + 1;
    ++lineno;
    Line line;
    line.text = raw;
    line.offset = static_cast<std::int64_t>(line_offset);
    line.lineno = lineno;
    for (std::size_t i = 0; i < raw.size();) {
      while (i < raw.size() && (raw[i] == ' ' || raw[i] == '\t')) ++i;
      if (i >= raw.size()) break;
      std::size_t b = i;
      while (i < raw.size() && raw[i] != ' ' && raw[i] != '\t') ++i;
      line.fields.emplace_back(b, i);
    }
    if (line.fields.empty()) continue;  // blank lines are ignored
    auto where = [&](std::size_t field) {
      return "line " + std::to_string(lineno) + (field ? ", column " + std::to_string(field) : std::string());
    };
    auto offset_of = [&](std::size_t field) {
      return static_cast<std::int64_t>(line_offset + (field ? line.fields[field - 1].first : 0));
    };
    if (line.fields.size() < 13)
      throw FormatError(path, where(0), offset_of(0),
                        "expected 13 columns (LIHBOR LIUBOR LIVBOR HBOR UBOR VBOR AUBOR LITBOR TBOR ATBOR BTBOR N K), found " +
                            std::to_string(line.fields.size()));
    auto tok = [&](std::size_t field) {
      return raw.substr(line.fields[field - 1].first, line.fields[field - 1].second - line.fields[field - 1].first);
    };
    int* ints[] = {&line.lihbor, &line.liubor, &line.livbor};
    for (std::size_t c = 1; c <= 3; ++c) {
      std::int64_t v;
      if (!parse_int(tok(c), v)) throw FormatError(path, where(c), offset_of(c), "'" + tok(c) + "' is not an integer code");
      *ints[c - 1] = static_cast<int>(v);
    }
    double* reals[] = {&line.hbor, &line.ubor, &line.vbor, &line.aubor};
    for (std::size_t c = 4; c <= 7; ++c)
      if (!parse_real(tok(c), *reals[c - 4])) throw FormatError(path, where(c), offset_of(c), "'" + tok(c) + "' is not a number");
    {
      std::int64_t v;
      if (!parse_int(tok(8), v)) throw FormatError(path, where(8), offset_of(8), "'" + tok(8) + "' is not an integer code");
      line.litbor = static_cast<int>(v);
    }
    double* reals2[] = {&line.tbor, &line.atbor, &line.btbor};
    for (std::size_t c = 9; c <= 11; ++c)
      if (!parse_real(tok(c), *reals2[c - 9])) throw FormatError(path, where(c), offset_of(c), "'" + tok(c) + "' is not a number");
    if (!parse_int(tok(12), line.n)) throw FormatError(path, where(12), offset_of(12), "node number '" + tok(12) + "' is not an integer");
    if (!parse_int(tok(13), line.k)) throw FormatError(path, where(13), offset_of(13), "'" + tok(13) + "' is not an integer");
    f.lines.push_back(std::move(line));
  }
  return f;
}

File read(const std::string& path) {
  return parse(read_text_file(path), path);
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
  if (l.text.empty() || l.fields.size() < 13) return format_telemac(l, n, k);
  std::string out = l.text.substr(0, l.fields[10].second);  // through column 11
  auto put = [&](std::size_t field, std::int64_t v) {
    // Right-align the new value in the room the old one had (its spaces included).
    const std::size_t room = l.fields[field].second - l.fields[field - 1].second;
    std::string s = std::to_string(v);
    if (s.size() + 1 <= room) s.insert(0, room - s.size(), ' ');
    else s.insert(0, 1, ' ');
    out += s;
  };
  put(11, n);
  put(12, k);
  out += l.text.substr(l.fields[12].second);  // extra columns and trailing text, as written
  return out;
}

void validate(const File& file, std::int64_t npoin, const std::string& mesh_name) {
  std::vector<std::int64_t> seen(static_cast<std::size_t>(npoin) + 1, 0);
  for (std::size_t i = 0; i < file.lines.size(); ++i) {
    const auto& l = file.lines[i];
    const std::int64_t at = l.offset + (l.fields.size() > 11 ? static_cast<std::int64_t>(l.fields[11].first) : 0);
    if (l.n < 1 || l.n > npoin)
      throw FormatError(file.path, "line " + std::to_string(l.lineno) + ", column 12", at,
                        "node " + std::to_string(l.n) + " is outside 1.." + std::to_string(npoin) + " (NPOIN of " + mesh_name + ")");
    auto& s = seen[static_cast<std::size_t>(l.n)];
    if (s)
      throw FormatError(file.path, "line " + std::to_string(l.lineno) + ", column 12", at,
                        "node " + std::to_string(l.n) + " is listed twice (first on line " + std::to_string(s) + ")");
    s = l.lineno;
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
