// Fortran text records (gfortran's rules). See fortran_text.hpp.
#include "formats/fortran_text.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "core/error.hpp"
#include "core/io.hpp"

namespace anabranch::fortran {
namespace {

std::string right(const std::string& s, int w) {
  if (static_cast<int>(s.size()) > w) return std::string(static_cast<std::size_t>(w), '*');
  return std::string(static_cast<std::size_t>(w) - s.size(), ' ') + s;
}

// Gw.dEe as gfortran's list-directed output uses it (scale factor 1 for E editing).
std::string g_edit(double v, int w, int d, int e) {
  const int trailing = e + 2;
  char buf[64];
  if (v == 0) {
    std::snprintf(buf, sizeof buf, "%s%.*f", std::signbit(v) ? "-" : "", d - 1, 0.0);
    return right(buf, w - trailing) + std::string(static_cast<std::size_t>(trailing), ' ');
  }
  if (std::isnan(v) || std::isinf(v)) {
    std::string s = std::isnan(v) ? "NaN" : (v < 0 ? "-Infinity" : "Infinity");
    return right(s, w);
  }
  // The decimal exponent after rounding to d significant digits decides F or E.
  std::snprintf(buf, sizeof buf, "%.*e", d - 1, v);
  const char* ep = std::strchr(buf, 'e');
  const int exp10 = std::atoi(ep + 1);
  const int k = exp10 + 1;  // digits before the decimal point
  if (k >= 0 && k <= d) {
    std::snprintf(buf, sizeof buf, "%.*f", d - k, v);
    std::string f = buf;
    if (d == k) f += '.';  // Fortran keeps the decimal point
    return right(f, w - trailing) + std::string(static_cast<std::size_t>(trailing), ' ');
  }
  std::string mant(buf, static_cast<std::size_t>(ep - buf));
  char ex[16];
  std::snprintf(ex, sizeof ex, "E%c%0*d", exp10 < 0 ? '-' : '+', e, std::abs(exp10));
  return right(mant + ex, w);
}

}  // namespace

void ListRecord::separate(bool character) {
  if (empty_ || !(character && last_character_)) out_ += ' ';
  empty_ = false;
  last_character_ = character;
}

ListRecord& ListRecord::integer(std::int64_t v) {
  separate(false);
  char buf[32];
  std::snprintf(buf, sizeof buf, "%11lld", static_cast<long long>(v));
  out_ += buf;
  return *this;
}

ListRecord& ListRecord::real4(float v) {
  separate(false);
  out_ += g_edit(static_cast<double>(v), 16, 9, 2);
  return *this;
}

ListRecord& ListRecord::real8(double v) {
  separate(false);
  out_ += g_edit(v, 25, 17, 3);
  return *this;
}

ListRecord& ListRecord::text(const std::string& s) {
  separate(true);
  out_ += s;
  return *this;
}

std::string iw(std::int64_t v, int w) { return right(std::to_string(v), w); }

std::string i0(std::int64_t v) { return std::to_string(v); }

std::string fw(double v, int w, int d) {
  char buf[512];
  std::snprintf(buf, sizeof buf, "%.*f", d, v);
  return right(buf, w);
}

std::string g0(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

std::string iw_group(const std::vector<std::int64_t>& values, int w) {
  std::string s;
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (i) s += ' ';
    s += iw(values[i], w);
  }
  return s;
}

ListReader::ListReader(const std::string& path) : path_(path), file_(std::make_shared<FileSource>(path)) {}

bool ListReader::refill() {
  constexpr std::int64_t kWindow = std::int64_t{4} << 20;
  if (!file_ || next_ >= file_->size()) return false;
  text_.erase(0, pos_);  // only what was read already goes
  base_ += static_cast<std::int64_t>(pos_);
  pos_ = 0;
  const std::size_t have = text_.size(), n = static_cast<std::size_t>(std::min(kWindow, file_->size() - next_));
  text_.resize(have + n);
  file_->read_at(next_, text_.data() + have, n);
  next_ += static_cast<std::int64_t>(n);
  return true;
}

std::vector<std::string> ListReader::read(int n, const char* what) {
  std::vector<std::string> values;
  start_line_ = line_;
  if (!more())
    throw FormatError(path_, std::string(what) + " (line " + std::to_string(line_) + ")", base_ + static_cast<std::int64_t>(pos_),
                      "the file ends here");
  start_offset_ = base_ + static_cast<std::int64_t>(pos_);
  auto end_record = [&] {
    while (more() && text_[pos_] != '\n') ++pos_;
    if (more()) ++pos_;
    ++line_;
  };
  bool slash = false;
  while (static_cast<int>(values.size()) < n && !slash) {
    if (!more())
      throw FormatError(path_, std::string(what) + " (line " + std::to_string(start_line_) + ")", start_offset_,
                        "the file ends after " + std::to_string(values.size()) + " of " + std::to_string(n) + " values");
    const char c = text_[pos_];
    if (c == '\n') {
      ++pos_;
      ++line_;
      continue;
    }
    if (c == ' ' || c == '\t' || c == '\r' || c == ',') {
      ++pos_;
      continue;
    }
    if (c == '/') {
      slash = true;
      break;
    }
    std::string v;
    if (c == '\'' || c == '"') {
      ++pos_;
      while (more() && text_[pos_] != c && text_[pos_] != '\n') v += text_[pos_++];
      if (more() && text_[pos_] == c) ++pos_;
    } else {
      while (more() && !std::strchr(" \t\r\n,/", text_[pos_])) v += text_[pos_++];
    }
    values.push_back(std::move(v));
  }
  end_record();
  return values;
}

template <class T, class Parse>
std::vector<T> ListReader::read_numbers(int n, const char* what, const char* kind, Parse parse) {
  const auto v = read(n, what);
  const std::string record = std::string(what) + " (line " + std::to_string(start_line_) + ")";
  std::vector<T> r;
  for (const auto& s : v) {
    T x{};
    if (s.empty() || !parse(s, x)) throw FormatError(path_, record, start_offset_, "'" + s + "' is not " + kind);
    r.push_back(x);
  }
  if (static_cast<int>(r.size()) < n)
    throw FormatError(path_, record, start_offset_, "expected " + std::to_string(n) + " values, found " + std::to_string(r.size()));
  return r;
}

std::vector<std::int64_t> ListReader::read_integers(int n, const char* what) {
  return read_numbers<std::int64_t>(n, what, "an integer", [](const std::string& s, std::int64_t& x) {
    char* end = nullptr;
    x = std::strtoll(s.c_str(), &end, 10);
    return *end == '\0';
  });
}

std::vector<double> ListReader::read_reals(int n, const char* what) {
  return read_numbers<double>(n, what, "a number", [](std::string s, double& x) {
    for (auto& ch : s)
      if (ch == 'd' || ch == 'D') ch = 'e';  // Fortran's 1.5D+00
    char* end = nullptr;
    x = std::strtod(s.c_str(), &end);
    return *end == '\0';
  });
}

}  // namespace anabranch::fortran
