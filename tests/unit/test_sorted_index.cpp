#include "core/sorted_index.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

namespace {

using anabranch::SortedIndex;

// Random sorted lists of distinct numbers, dense, sparse and clustered over the int32 range:
// every number's place is std::lower_bound's, and a number not in the list is -1.
TEST(SortedIndex, PlacesAreLowerBoundsAndMissesAreMinusOne) {
  const std::int32_t top = std::numeric_limits<std::int32_t>::max();
  for (unsigned seed = 0; seed < 40; ++seed) {
    std::mt19937 rng(seed);
    const std::size_t n = seed % 5 == 0 ? seed / 5 : std::uniform_int_distribution<std::size_t>(1, 5000)(rng);
    const std::int32_t span = std::vector<std::int32_t>{4, 1000, 100000, top}[seed % 4];
    std::vector<std::int32_t> v;
    for (std::size_t i = 0; i < n; ++i) {
      std::int32_t x = std::uniform_int_distribution<std::int32_t>(0, span - 1)(rng);
      if (seed % 3 == 0 && i % 2) x = std::min(span - 1, x / 97);  // a dense cluster at the start
      v.push_back(x);
    }
    std::sort(v.begin(), v.end());
    v.erase(std::unique(v.begin(), v.end()), v.end());
    const SortedIndex index(v);
    ASSERT_LE(index.table_words(), v.size() / 2 + 3) << "sized by the list, not by the span: seed " << seed;
    for (std::size_t i = 0; i < v.size(); ++i) ASSERT_EQ(index.find(v[i]), static_cast<std::int64_t>(i)) << seed;
    for (int k = 0; k < 2000; ++k) {
      const std::int32_t x = k < 4 ? std::vector<std::int32_t>{0, 1, top - 1, top}[k]
                                   : std::uniform_int_distribution<std::int32_t>(0, span == top ? top : span + 2)(rng);
      const auto it = std::lower_bound(v.begin(), v.end(), x);
      const std::int64_t want = it != v.end() && *it == x ? it - v.begin() : -1;
      ASSERT_EQ(index.find(x), want) << "seed " << seed << " x " << x;
    }
  }
}

}  // namespace
