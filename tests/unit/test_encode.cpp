// Encoding values for the file: the vectorised conversion and byte swap (encode_words, and
// decode_words back) and
// the writers' gather of owned values through runs of consecutive local positions
// (encode_owned), against a value-by-value reference, for every precision pair, both byte
// orders, odd lengths, unaligned output, and ranges that start and end inside runs.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <numeric>
#include <random>
#include <vector>

#include "core/byteorder.hpp"
#include "io/ownership.hpp"

using namespace anabranch;

namespace {

// The bytes of value v as R, reversed when swap: what a file holds.
template <class R, class T>
std::vector<unsigned char> reference(const std::vector<T>& values, const std::vector<std::int64_t>& at, bool swap) {
  std::vector<unsigned char> out;
  for (auto i : at) {
    const R r = static_cast<R>(values[static_cast<std::size_t>(i)]);
    unsigned char b[sizeof(R)];
    std::memcpy(b, &r, sizeof(R));
    if (swap) std::reverse(b, b + sizeof(R));
    out.insert(out.end(), b, b + sizeof(R));
  }
  return out;
}

template <class T>
std::vector<T> some_values(std::size_t n) {
  std::vector<T> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<T>(0.1 + 1.37 * static_cast<double>(i) - 1e-7 * static_cast<double>(i * i));
  return v;
}

template <class R, class T>
void check_words() {
  const auto values = some_values<T>(300);
  for (bool swap : {false, true})
    for (std::size_t n : {0u, 1u, 3u, 7u, 8u, 15u, 16u, 17u, 31u, 64u, 299u})
      for (std::size_t misalign : {0u, 1u, 3u}) {
        std::vector<std::int64_t> at(n);
        std::iota(at.begin(), at.end(), 1);  // from values[1]: the input unaligned to a vector too
        const auto want = reference<R>(values, at, swap);
        std::vector<unsigned char> got(n * sizeof(R) + misalign + 1, 0xee);
        encode_words<R>(values.data() + 1, n, swap, got.data() + misalign);
        EXPECT_TRUE(std::equal(want.begin(), want.end(), got.begin() + static_cast<std::ptrdiff_t>(misalign)))
            << "n " << n << " swap " << swap << " misalign " << misalign;
        EXPECT_EQ(got[misalign + n * sizeof(R)], 0xee) << "wrote past the end: n " << n;
        if (misalign) {
          EXPECT_EQ(got[misalign - 1], 0xee) << "wrote before the start: n " << n;
        }
        // decode_words, the inverse: the file's bytes (unaligned) back to T, exactly
        // the values R holds, nothing written past the n asked.
        std::vector<T> back(n + 1, static_cast<T>(-5));
        decode_words<R>(got.data() + misalign, n, swap, back.data());
        for (std::size_t i = 0; i < n; ++i)
          EXPECT_EQ(back[i], static_cast<T>(static_cast<R>(values[i + 1]))) << "decoded value " << i << " of " << n << " swap " << swap;
        EXPECT_EQ(back[n], static_cast<T>(-5)) << "decoded past the end: n " << n;
      }
}

}  // namespace

TEST(Encode, WordsInEveryPrecisionAndOrder) {
  check_words<float, float>();
  check_words<float, double>();
  check_words<double, float>();
  check_words<double, double>();
}

TEST(Encode, EncodeRealsFollowsTheFileOrder) {
  const auto values = some_values<double>(40);
  std::vector<std::int64_t> all(values.size());
  std::iota(all.begin(), all.end(), 0);
  for (auto order : {ByteOrder::Big, ByteOrder::Little}) {
    const bool swap = order != native_byte_order();
    std::vector<unsigned char> single(values.size() * 4), dbl(values.size() * 8);
    encode_words<float>(values.data(), values.size(), swap, single.data());
    encode_words<double>(values.data(), values.size(), swap, dbl.data());
    EXPECT_EQ(single, (reference<float>(values, all, swap)));
    EXPECT_EQ(dbl, (reference<double>(values, all, swap)));
    // Read back as the file's order says.
    EXPECT_EQ(load<float>(single.data() + 4 * 7, order), static_cast<float>(values[7]));
    EXPECT_EQ(load<double>(dbl.data() + 8 * 39, order), values[39]);
  }
}

template <class R, class T>
void check_owned(unsigned seed) {
  // Local positions of the owned nodes: runs of every length around the vector threshold,
  // single scattered positions, and a long run, in a shuffled order of runs.
  std::mt19937 rng(seed);
  std::vector<std::vector<std::int64_t>> runs;
  std::int64_t next = 0;
  for (std::int64_t len : {1, 2, 15, 16, 17, 1, 40, 1, 1, 3, 200, 16, 5}) {
    std::vector<std::int64_t> r(static_cast<std::size_t>(len));
    std::iota(r.begin(), r.end(), next);
    next += len + 1 + static_cast<std::int64_t>(rng() % 3);  // a gap: a node this rank holds but does not write
    runs.push_back(r);
  }
  std::shuffle(runs.begin(), runs.end(), rng);
  pio::Owned owned;
  for (const auto& r : runs) owned.local.insert(owned.local.end(), r.begin(), r.end());
  owned.gid = owned.local;  // not read by the encoder
  owned.runs = pio::runs_of(owned.local);
  ASSERT_GE(owned.runs.size(), runs.size() + 1);  // a shuffled neighbour may join two runs
  const auto values = some_values<T>(static_cast<std::size_t>(next));
  const auto n = static_cast<std::int64_t>(owned.local.size());
  for (bool swap : {false, true})
    for (int trial = 0; trial < 60; ++trial) {
      std::int64_t first = static_cast<std::int64_t>(rng() % static_cast<unsigned>(n + 1));
      std::int64_t count = static_cast<std::int64_t>(rng() % static_cast<unsigned>(n - first + 1));
      if (trial == 0) first = 0, count = n;
      const std::vector<std::int64_t> at(owned.local.begin() + first, owned.local.begin() + first + count);
      const auto want = reference<R>(values, at, swap);
      std::vector<unsigned char> got(static_cast<std::size_t>(count) * sizeof(R) + 1, 0xee);
      pio::encode_owned<R>(values.data(), owned, first, count, swap, got.data());
      EXPECT_TRUE(std::equal(want.begin(), want.end(), got.begin())) << "first " << first << " count " << count << " swap " << swap;
      EXPECT_EQ(got.back(), 0xee) << "wrote past the end: first " << first << " count " << count;
    }
}

TEST(Encode, OwnedValuesThroughRuns) {
  check_owned<float, float>(1);
  check_owned<float, double>(2);
  check_owned<double, float>(3);
  check_owned<double, double>(4);
}

TEST(Encode, RunsOfLocalPositions) {
  EXPECT_EQ(pio::runs_of({}), (std::vector<std::int64_t>{0}));
  EXPECT_EQ(pio::runs_of({5}), (std::vector<std::int64_t>{0, 1}));
  EXPECT_EQ(pio::runs_of({3, 4, 5, 9, 10, 2, 7}), (std::vector<std::int64_t>{0, 3, 5, 6, 7}));
}
