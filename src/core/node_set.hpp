// A set of node numbers in [0, n): a bit per node and a count before every 64 of them, so
// the members come out in increasing order and a member's place among them is found in
// constant time, in n/8 + n/16 bytes. The parallel partitioners use it where a rank needs
// "the nodes my elements use, and where each sits in that list" without sorting every
// reference to them.
#pragma once

#include <cstdint>
#include <vector>

namespace anabranch {

class NodeSet {
 public:
  explicit NodeSet(std::int64_t n) : bits_(static_cast<std::size_t>((n + 63) / 64), 0) {}
  void insert(std::int64_t node) { bits_[static_cast<std::size_t>(node >> 6)] |= std::uint64_t{1} << (node & 63); }
  bool contains(std::int64_t node) const { return (bits_[static_cast<std::size_t>(node >> 6)] >> (node & 63)) & 1u; }
  // Counts the members before every word: call once after the last insert, before place().
  void index() {
    before_.resize(bits_.size());
    std::int64_t total = 0;
    for (std::size_t w = 0; w < bits_.size(); ++w) {
      before_[w] = static_cast<std::uint32_t>(total);
      total += __builtin_popcountll(bits_[w]);
    }
    size_ = total;
  }
  std::int64_t size() const { return size_; }
  // The place of a member among the members (0-based), in increasing order.
  std::int64_t place(std::int64_t node) const {
    const auto w = static_cast<std::size_t>(node >> 6);
    return before_[w] + __builtin_popcountll(bits_[w] & ((std::uint64_t{1} << (node & 63)) - 1));
  }
  // The members, increasing.
  std::vector<std::int32_t> members() const {
    std::vector<std::int32_t> out;
    out.reserve(static_cast<std::size_t>(size_));
    for (std::size_t w = 0; w < bits_.size(); ++w)
      for (std::uint64_t b = bits_[w]; b; b &= b - 1) out.push_back(static_cast<std::int32_t>(w * 64 + static_cast<std::size_t>(__builtin_ctzll(b))));
    return out;
  }

 private:
  std::vector<std::uint64_t> bits_;
  std::vector<std::uint32_t> before_;
  std::int64_t size_ = 0;
};

}  // namespace anabranch
