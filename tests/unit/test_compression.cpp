#include "core/compression.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "core/error.hpp"

#include <zlib.h>
#ifdef ANABRANCH_HAVE_ZSTD
#include <zstd.h>
#endif

namespace {

using anabranch::Compression;
using anabranch::round_within;

template <class T>
int zero_low_bits(T v) {
  std::uint64_t w = 0;
  std::memcpy(&w, &v, sizeof v);
  return w == 0 ? 64 : __builtin_ctzll(w);
}

// Random values over many magnitudes (subnormals, zeros, signs, NaN, infinities) and random
// bounds: every finite value within its bound, the others as they were, and a bound of a
// value's own size leaves it few bits.
template <class T>
void rounds_within(unsigned seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> unit(-1, 1), exponent(-30, 30);
  for (int round = 0; round < 200; ++round) {
    std::vector<T> v(257);
    for (auto& x : v) x = static_cast<T>(unit(rng) * std::pow(10.0, exponent(rng) / 3));
    v[0] = 0, v[1] = -0.0, v[2] = std::numeric_limits<T>::quiet_NaN(), v[3] = std::numeric_limits<T>::infinity();
    v[4] = std::numeric_limits<T>::denorm_min(), v[5] = std::numeric_limits<T>::max(), v[6] = -std::numeric_limits<T>::max();
    v[7] = static_cast<T>(1), v[8] = std::nextafter(static_cast<T>(2), static_cast<T>(1));
    const double bound = round == 0 ? 0.0 : std::pow(10.0, exponent(rng) / 2);
    const auto before = v;
    round_within(v.data(), static_cast<std::int64_t>(v.size()), bound);
    for (std::size_t i = 0; i < v.size(); ++i) {
      if (!std::isfinite(before[i])) {
        EXPECT_EQ(std::memcmp(&v[i], &before[i], sizeof(T)), 0) << i;
        continue;
      }
      ASSERT_TRUE(std::isfinite(v[i])) << before[i] << " bound " << bound;
      ASSERT_LE(std::fabs(static_cast<double>(v[i]) - static_cast<double>(before[i])), bound) << before[i] << " -> " << v[i];
      if (bound == 0) {
        ASSERT_EQ(std::memcmp(&v[i], &before[i], sizeof(T)), 0);
        continue;
      }
      // The fewest bits: a value changed has every mantissa bit below the largest step that
      // rounding to nearest keeps within the bound (half a step <= bound) zeroed.
      int power = 0;
      std::frexp(static_cast<double>(before[i]), &power);
      const int mantissa = sizeof(T) == 4 ? 23 : 52, lowest = sizeof(T) == 4 ? -125 : -1021;
      const int ulp = std::max(power, lowest) - 1 - mantissa;  // the value's last place, a power of two
      const int want = std::min(mantissa, static_cast<int>(std::floor(std::log2(2 * bound))) - ulp);
      if (want > 0 && std::memcmp(&v[i], &before[i], sizeof(T)) != 0) {
        ASSERT_GE(zero_low_bits(v[i]), want) << before[i] << " bound " << bound;
      }
      // Zero when zero is within the bound; else no value with one more low bit zeroed
      // (the nearest one, or the next power of two) is.
      if (std::fabs(static_cast<double>(before[i])) <= bound) {
        ASSERT_EQ(zero_low_bits(v[i]), 64) << before[i] << " bound " << bound;
        continue;
      }
      const int kept = zero_low_bits(v[i]);
      if (kept < mantissa) {
        int vpower = 0;  // rounding up may have carried into the next power of two
        std::frexp(static_cast<double>(v[i]), &vpower);
        const int vulp = std::max(vpower, lowest) - 1 - mantissa;
        const double step = std::ldexp(1.0, vulp + kept + 1);  // a grid one bit coarser
        const double nearest = std::nearbyint(static_cast<double>(before[i]) / step) * step;
        ASSERT_GT(std::fabs(nearest - static_cast<double>(before[i])), bound)
            << before[i] << " -> " << v[i] << " keeps a bit it could drop, bound " << bound;
      }
    }
  }
  // A value about 1000 times its bound keeps about 10 bits of mantissa: the rest are zero.
  T x = static_cast<T>(0.7853981633974483);
  round_within(&x, 1, 0.7853981633974483 / 1000);
  EXPECT_GE(zero_low_bits(x), (sizeof(T) == 4 ? 23 : 52) - 11);
}

TEST(Compression, RoundingKeepsEveryValueWithinItsBound) {
  for (unsigned seed = 0; seed < 5; ++seed) {
    rounds_within<float>(seed);
    rounds_within<double>(seed);
  }
}

TEST(Compression, SpecsParseAndPrintBack) {
  EXPECT_FALSE(Compression::parse("").on());
  EXPECT_FALSE(Compression::parse("none").on());
  EXPECT_TRUE(Compression::parse("lossless").on());
  EXPECT_FALSE(Compression::parse("lossless").lossy());
  const auto rel = Compression::parse("rel=1e-4");
  EXPECT_EQ(rel.mode, Compression::Mode::Relative);
  EXPECT_DOUBLE_EQ(rel.tolerance, 1e-4);
  EXPECT_DOUBLE_EQ(rel.bound(-2, 8), 1e-3);
  EXPECT_EQ(rel.bound(1, 1), 0);
  const auto abs = Compression::parse("abs=0.25");
  EXPECT_DOUBLE_EQ(abs.bound(-2, 8), 0.25);
  EXPECT_EQ(Compression::parse(abs.str()).tolerance, 0.25);
  EXPECT_EQ(Compression::parse(rel.str()).tolerance, 1e-4);
  const auto z = Compression::parse("abs=0.25:zstd");
  EXPECT_EQ(z.codec, Compression::Codec::Zstd);
  EXPECT_EQ(z.str(), "abs=0.25:zstd");
  EXPECT_EQ(Compression::parse("lossless:zstd").str(), "lossless:zstd");
  EXPECT_EQ(Compression::parse("rel=0.5:deflate").codec, Compression::Codec::Deflate);
  EXPECT_EQ(Compression::parse("rel=0.5:deflate").str(), "rel=0.5");
  EXPECT_EQ(rel.codec, Compression::Codec::Deflate);
  for (const char* bad : {"zstd", "rel", "rel=", "rel=0", "abs=-1", "abs=nan", "abs=inf", "rel=1", "abs=1x", "=1", "rel=0.1:",
                          "rel=0.1:lz4", "lossless:zstd:zstd", ":zstd", "lossless:", "lossless,zstd"})
    EXPECT_THROW(Compression::parse(bad), anabranch::UsageError) << bad;
}

}  // namespace

// A chunk as HDF5 stores it, decoded by the codecs' own libraries (zlib's uncompress,
// ZSTD_decompress) and unshuffled here the plain way: random chunks of every value size,
// across the 64 KiB pieces the shuffle is streamed in, appended after bytes already there.
namespace {
std::vector<unsigned char> decoded(const Compression& c, const std::string& stored, std::size_t bytes) {
  std::vector<unsigned char> out(bytes);
  if (c.codec == Compression::Codec::Zstd) {
#ifdef ANABRANCH_HAVE_ZSTD
    EXPECT_EQ(ZSTD_getFrameContentSize(stored.data(), stored.size()), bytes);  // HDF5's zstd filters size the output by it
    EXPECT_EQ(ZSTD_decompress(out.data(), bytes, stored.data(), stored.size()), bytes);
#endif
  } else {
    uLongf n = static_cast<uLongf>(bytes);
    EXPECT_EQ(uncompress(out.data(), &n, reinterpret_cast<const Bytef*>(stored.data()), static_cast<uLong>(stored.size())), Z_OK);
    EXPECT_EQ(n, bytes);
  }
  return out;
}
}  // namespace

TEST(Compression, ChunksDecodeToTheirValuesShuffled) {
  std::mt19937_64 rng(11);
  for (int trial = 0; trial < 60; ++trial) {
    const int size = std::vector<int>{1, 2, 4, 8}[rng() % 4];
    const std::size_t count = rng() % 3 == 0 ? 1 + rng() % 8 : 1 + rng() % 70000;
    std::vector<unsigned char> values(count * static_cast<std::size_t>(size));
    for (auto& b : values) b = static_cast<unsigned char>(rng() % 7 == 0 ? rng() : b % 3);
    Compression c = Compression::parse(rng() % 2 ? "lossless:zstd" : "lossless");
    if (c.codec == Compression::Codec::Zstd && !anabranch::have_zstd()) continue;
    std::string out = "before";
    anabranch::encode_chunk(c, values.data(), count, size, out);
    ASSERT_EQ(out.substr(0, 6), "before");
    const auto shuffled = decoded(c, out.substr(6), values.size());
    for (std::size_t v = 0; v < count; ++v)
      for (int k = 0; k < size; ++k)
        ASSERT_EQ(shuffled[static_cast<std::size_t>(k) * count + v], values[v * static_cast<std::size_t>(size) + static_cast<std::size_t>(k)])
            << "trial " << trial << " value " << v << " byte " << k;
  }
}
