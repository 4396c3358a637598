// Compression of result values (`compress=SPEC`, `--compress SPEC`): lossless, or within an
// error bound. A bounded value is rounded to the fewest mantissa bits that keep it within
// the bound (its low bits zeroed, round to nearest), so that the file's lossless filters
// (HDF5's byte shuffle and a codec) store it in fewer bytes; the file holds plain floats.
//   lossless   every value as given
//   abs=TOL    every value within TOL, in the variable's units
//   rel=TOL    every value within TOL x (the variable's max - min in that frame)
// followed by ":deflate" (the default: HDF5's own filter, every reader has it) or ":zstd"
// (HDF5's registered filter 32015: faster and smaller; other readers need its plugin).
#pragma once

#include <cstdint>
#include <string>

namespace anabranch {

struct Compression {
  enum class Mode { None, Lossless, Absolute, Relative };
  enum class Codec { Deflate, Zstd };
  Mode mode = Mode::None;
  double tolerance = 0;  // abs: in the variable's units; rel: a fraction of its range
  Codec codec = Codec::Deflate;  // the lossless coder after HDF5's byte shuffle

  // "lossless", "abs=TOL", "rel=TOL" (TOL > 0, finite), each with ":deflate" or ":zstd"
  // after it or not; "none" or "" for none. A bad SPEC: UsageError naming it.
  static Compression parse(const std::string& spec);
  std::string str() const;  // the SPEC, as parse() takes it
  bool on() const { return mode != Mode::None; }
  bool lossy() const { return mode == Mode::Absolute || mode == Mode::Relative; }
  // The absolute bound of a frame's variable whose values span [lo, hi]: 0 is lossless.
  double bound(double lo, double hi) const;
};

// Rounds each finite value to the fewest mantissa bits that keep it within `bound` of
// itself (each value its own: the same result in any piece of any rank), and to +0 when
// |value| <= bound (bound <= 0 or not finite: unchanged). NaN and infinities stay as they are.
void round_within(float* values, std::int64_t n, double bound);
void round_within(double* values, std::int64_t n, double bound);

}  // namespace anabranch
