#include "core/compression.hpp"

#include <cmath>
#include <cstring>
#include <limits>
#include <sstream>

#include "core/error.hpp"

namespace anabranch {

Compression Compression::parse(const std::string& spec) {
  Compression c;
  if (spec.empty() || spec == "none") return c;
  if (spec == "lossless") {
    c.mode = Mode::Lossless;
    return c;
  }
  const auto eq = spec.find('=');
  const std::string kind = eq == std::string::npos ? spec : spec.substr(0, eq);
  if (eq == std::string::npos || (kind != "abs" && kind != "rel"))
    throw UsageError("compression '" + spec + "': expected lossless, abs=TOL or rel=TOL");
  const std::string text = spec.substr(eq + 1);
  double tol = std::numeric_limits<double>::quiet_NaN();
  try {
    std::size_t used = 0;
    tol = std::stod(text, &used);
    if (used != text.size()) tol = std::numeric_limits<double>::quiet_NaN();
  } catch (const std::exception&) {
  }
  if (!(tol > 0) || !std::isfinite(tol))
    throw UsageError("compression '" + spec + "': the bound must be a finite number above 0");
  if (kind == "rel" && tol >= 1) throw UsageError("compression '" + spec + "': a relative bound is below 1");
  c.mode = kind == "abs" ? Mode::Absolute : Mode::Relative;
  c.tolerance = tol;
  return c;
}

std::string Compression::str() const {
  if (mode == Mode::None) return "none";
  if (mode == Mode::Lossless) return "lossless";
  std::ostringstream s;
  s.precision(17);
  s << (mode == Mode::Absolute ? "abs=" : "rel=") << tolerance;
  return s.str();
}

double Compression::bound(double lo, double hi) const {
  if (mode == Mode::Absolute) return tolerance;
  if (mode == Mode::Relative && std::isfinite(hi - lo)) return tolerance * (hi - lo);
  return 0;
}

namespace {

// Bits: the type's unsigned word, its mantissa bits and exponent bias.
template <class T>
struct Ieee;
template <>
struct Ieee<float> {
  using Word = std::uint32_t;
  static constexpr int kMantissa = 23, kBias = 127, kExponentMask = 0xff;
};
template <>
struct Ieee<double> {
  using Word = std::uint64_t;
  static constexpr int kMantissa = 52, kBias = 1023, kExponentMask = 0x7ff;
};

template <class T>
void round_values(T* values, std::int64_t n, double bound) {
  using B = Ieee<T>;
  using Word = typename B::Word;
  if (!(bound > 0) || !std::isfinite(bound)) return;
  const int eb = std::ilogb(bound);  // 2^eb <= bound
  for (std::int64_t i = 0; i < n; ++i) {
    Word w;
    std::memcpy(&w, &values[i], sizeof w);
    const int e = static_cast<int>((w >> B::kMantissa) & B::kExponentMask);
    if (e == B::kExponentMask) continue;  // NaN, infinity
    // The value's unit in the last place is 2^(e - bias - mantissa) (subnormals: e = 1);
    // zeroing d bits with rounding to nearest moves it by at most 2^(d - 1) units: within
    // the bound while d - 1 + (e - bias - mantissa) <= eb.
    const int ulp = (e == 0 ? 1 : e) - B::kBias - B::kMantissa;
    int d = eb + 1 - ulp;
    if (d <= 0) continue;
    if (d > B::kMantissa) d = B::kMantissa;
    const Word half = Word{1} << (d - 1), low = (Word{1} << d) - 1;
    Word r = (w + half) & ~low;  // a carry into the exponent is the rounding's own
    T v;
    std::memcpy(&v, &r, sizeof v);
    if (!std::isfinite(v) || std::fabs(static_cast<double>(v) - static_cast<double>(values[i])) > bound) {
      r = w & ~low;  // rounding up overflowed or (near a power of two) went past: truncate
      std::memcpy(&v, &r, sizeof v);
      if (std::fabs(static_cast<double>(v) - static_cast<double>(values[i])) > bound) continue;
    }
    values[i] = v;
  }
}

}  // namespace

void round_within(float* values, std::int64_t n, double bound) { round_values(values, n, bound); }
void round_within(double* values, std::int64_t n, double bound) { round_values(values, n, bound); }

}  // namespace anabranch
