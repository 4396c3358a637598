#include "core/radix_sort.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <utility>
#include <vector>

namespace {

using anabranch::radix_sort;

// Records with few distinct keys over the whole 64-bit range: a stable sort keeps each
// key's records in the order they came.
TEST(RadixSort, StableByKeyOverEveryDigit) {
  for (std::size_t n : {0u, 1u, 7u, 1023u, 1024u, 100000u}) {
    std::mt19937_64 rng(n);
    std::vector<std::uint64_t> distinct(37);
    for (auto& d : distinct) d = rng();
    distinct[0] = 0, distinct[1] = ~std::uint64_t{0};
    std::vector<std::pair<std::uint64_t, std::size_t>> items(n);
    for (std::size_t i = 0; i < n; ++i) items[i] = {distinct[rng() % distinct.size()], i};
    auto want = items;
    std::stable_sort(want.begin(), want.end(), [](auto& a, auto& b) { return a.first < b.first; });
    radix_sort(items, [](const auto& r) { return r.first; });
    EXPECT_EQ(items, want) << n;
  }
}

// Keys whose high digits are all zero (the passes skipped) and whose low ones are not.
TEST(RadixSort, SmallKeysAndPlainWords) {
  std::mt19937_64 rng(7);
  std::vector<std::uint64_t> keys(50000);
  for (auto& k : keys) k = rng() % 5000;
  auto want = keys;
  std::sort(want.begin(), want.end());
  radix_sort(keys);
  EXPECT_EQ(keys, want);
  for (auto& k : keys) k = rng();
  want = keys;
  std::sort(want.begin(), want.end());
  radix_sort(keys);
  EXPECT_EQ(keys, want);
}

// Sorting by the high half only keeps the low halves in the order they came: the
// (node, position) words of the partitioners.
TEST(RadixSort, ByHighHalfKeepsPositions) {
  std::mt19937_64 rng(3);
  std::vector<std::uint64_t> words(30000);
  for (std::size_t i = 0; i < words.size(); ++i) words[i] = ((rng() % 3000) << 32) | i;
  auto want = words;
  std::sort(want.begin(), want.end());  // positions are distinct and increasing: the same order
  radix_sort(words, [](std::uint64_t w) { return w >> 32; });
  EXPECT_EQ(words, want);
}

// A caller's second array, of any size and content beforehand (a spare array from an
// exchange): the same order, the items' own storage kept.
TEST(RadixSort, CallersSecondArrayOfAnySize) {
  std::mt19937_64 rng(11);
  for (std::size_t spare : {0u, 10u, 4999u, 5000u, 80000u}) {
    std::vector<std::uint64_t> keys(5000), other(spare, 0x5a5a5a5a5a5a5a5aull);
    for (auto& k : keys) k = rng();
    auto want = keys;
    std::sort(want.begin(), want.end());
    radix_sort(keys, [](std::uint64_t k) { return k; }, other);
    EXPECT_EQ(keys, want) << spare;
  }
}

}  // namespace
