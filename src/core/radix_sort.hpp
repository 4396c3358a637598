// Stable least-significant-digit radix sort by an unsigned 64-bit key: the partitioners and
// the parallel writer sort tens of millions of keyed records (curve keys, (node, position)
// words, (element, part) pairs), where a comparison sort spends most of the run.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace anabranch {

// Sorts `items` by key(item), stably (equal keys keep their order). 11 bits a pass, up to
// the keys' highest bit (node numbers: two or three passes, not six); a pass whose digit is
// the same for every item is skipped. Uses `other` (resized to items.size()) as its second
// array: a caller's spare array of that size saves fresh memory.
template <class T, class KeyOf>
void radix_sort(std::vector<T>& items, KeyOf key, std::vector<T>& other) {
  constexpr int kBits = 11, kPasses = (64 + kBits - 1) / kBits;
  constexpr std::size_t kBuckets = std::size_t{1} << kBits;
  const std::size_t n = items.size();
  if (n < 1024) {
    std::stable_sort(items.begin(), items.end(), [&](const T& a, const T& b) { return key(a) < key(b); });
    return;
  }
  std::uint64_t any = 0;  // every key's bits
  for (const T& item : items) any |= key(item);
  int passes = 0;
  while (passes < kPasses && (any >> (passes * kBits)) != 0) ++passes;
  std::vector<std::array<std::size_t, kBuckets>> count(static_cast<std::size_t>(passes));
  for (auto& c : count) c.fill(0);
  for (const T& item : items) {
    const std::uint64_t k = key(item);
    for (int p = 0; p < passes; ++p) ++count[static_cast<std::size_t>(p)][(k >> (p * kBits)) & (kBuckets - 1)];
  }
  other.resize(n);
  T* from = items.data();
  T* to = other.data();
  for (int p = 0; p < passes; ++p) {
    auto& c = count[static_cast<std::size_t>(p)];
    if (std::find(c.begin(), c.end(), n) != c.end()) continue;  // one digit for all
    std::size_t at = 0;
    for (auto& b : c) {
      const std::size_t m = b;
      b = at;
      at += m;
    }
    const int shift = p * kBits;
    for (std::size_t i = 0; i < n; ++i) to[c[(key(from[i]) >> shift) & (kBuckets - 1)]++] = from[i];
    std::swap(from, to);
  }
  if (from != items.data()) items.swap(other);
}

// The same with a second array of its own.
template <class T, class KeyOf>
void radix_sort(std::vector<T>& items, KeyOf key) {
  std::vector<T> other;
  radix_sort(items, key, other);
}

// The same for plain keys.
inline void radix_sort(std::vector<std::uint64_t>& keys) {
  radix_sort(keys, [](std::uint64_t k) { return k; });
}

}  // namespace anabranch
