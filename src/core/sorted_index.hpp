// Where a number sits in a sorted list of distinct numbers, in about constant time: a table
// of where each range of 2^shift numbers starts in the list, sized by the list (a word for
// two to four members), not by the numbers' span. The parallel partitioner looks up millions
// of node numbers among a rank's nodes (its parts' nodes, the boundary points), which are
// spread over the whole mesh's numbering. A range holds two to four members where the
// numbers are spread evenly, found by a short scan: a binary search over ranges of eight
// cost those lookups 1.5 times as long (a mispredicted branch at each step), and a word a
// member would save a little more time for 3 MiB more a rank at the partitioner's peak.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

namespace anabranch {

class SortedIndex {
 public:
  SortedIndex() = default;
  // `sorted`: increasing, each once; kept by reference (it must outlive the index).
  explicit SortedIndex(const std::vector<std::int32_t>& sorted) : v_(&sorted) {
    if (sorted.empty()) return;
    lo_ = sorted.front();
    const std::uint64_t span = static_cast<std::uint64_t>(sorted.back() - lo_) + 1;
    while ((span >> shift_) > sorted.size() / 2 + 1) ++shift_;
    start_.assign(static_cast<std::size_t>(((span - 1) >> shift_) + 2), 0);
    for (auto n : sorted) ++start_[bucket(n) + 1];
    for (std::size_t b = 1; b < start_.size(); ++b) start_[b] += start_[b - 1];
  }
  // The place of n in the list, or -1 when it is not there.
  std::int64_t find(std::int32_t n) const {
    if (start_.empty() || n < lo_ || n > v_->back()) return -1;
    const std::size_t b = bucket(n);
    const auto first = v_->begin() + start_[b], last = v_->begin() + start_[b + 1];
    auto it = first;
    if (last - first > 8)  // a crowded range (numbers bunched together)
      it = std::lower_bound(first, last, n);
    else
      while (it != last && *it < n) ++it;
    return it != last && *it == n ? it - v_->begin() : -1;
  }
  // The table's words: at most half the list's size + 3, whatever the numbers' span.
  std::size_t table_words() const { return start_.size(); }

 private:
  std::size_t bucket(std::int32_t n) const { return static_cast<std::size_t>(static_cast<std::uint64_t>(n - lo_) >> shift_); }
  const std::vector<std::int32_t>* v_ = nullptr;
  std::int32_t lo_ = 0;
  int shift_ = 0;
  std::vector<std::uint32_t> start_;
};

}  // namespace anabranch
