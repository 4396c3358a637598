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

// Widens span = {min, -max} by the finite values among `n` (NaN and infinities skipped): a
// frame's range for a relative bound, reduced over the ranks with MPI_MIN.
void widen_span(const float* values, std::int64_t n, double span[2]);
void widen_span(const double* values, std::int64_t n, double span[2]);

// The codecs' levels (zlib's deflate and zstd): level 1 of each. zlib is three quarters of a
// compressed write's time; level 1 against 4 on TELEMAC's results (bench/compress.py):
// rel=1e-4 4.31x against 4.55x, written in 0.74 of the time, read in 0.76. zstd level 1
// stored rel=1e-4 4.64x, level 3 4.76x (a chunk one stream; a block a byte stream since:
// 5.01x at level 1); at 2 ranks a rel=1e-4 write of 100 MB took 1.47x the uncompressed one
// at level 1, 1.66x at 3 (docs/benchmarks.md).
constexpr unsigned kDeflateLevel = 1, kZstdLevel = 1;
// HDF5's registered filter number of zstd.
constexpr int kZstdFilterId = 32015;

// A chunk of `count` values of `size` bytes each as HDF5 stores it under a compression's
// filters: HDF5's byte shuffle (filter 2), then deflate (filter 1: a zlib stream) or zstd
// (filter 32015: one frame, with its content's checksum), at the levels above; what HDF5 and every reader with the codec
// decode back to the values, each byte's stream a block of the codec's own (its own entropy
// tables; one stream to every decoder). Throws UsageError when the codec is not in this build.
// Appended to `out`; the shuffle streamed to the codec through 64 KiB at a time, so that
// the chunk costs its encoding's bytes and no copy of its values.
void encode_chunk(const Compression& c, const void* values, std::size_t count, int size, std::string& out);
// True when this build has the zstd codec (built with libzstd).
bool have_zstd();

// Rounds each finite value to the fewest mantissa bits that keep it within `bound` of
// itself (each value its own: the same result in any piece of any rank), and to +0 when
// |value| <= bound (bound <= 0 or not finite: unchanged). NaN and infinities stay as they are.
void round_within(float* values, std::int64_t n, double bound);
void round_within(double* values, std::int64_t n, double bound);

}  // namespace anabranch
