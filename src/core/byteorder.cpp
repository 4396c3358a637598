#include "core/byteorder.hpp"

namespace anabranch {
namespace {
using u32_alias = std::uint32_t __attribute__((may_alias, aligned(1)));
using u64_alias = std::uint64_t __attribute__((may_alias, aligned(1)));
}  // namespace

// One clone per instruction set: the AVX2 one swaps 32 bytes per shuffle; the choice is
// made once, at load time.
__attribute__((target_clones("avx2", "ssse3", "default"))) void bswap32_array(void* data, std::size_t n) {
  auto* p = static_cast<u32_alias*>(data);
  for (std::size_t i = 0; i < n; ++i) p[i] = __builtin_bswap32(p[i]);
}

__attribute__((target_clones("avx2", "ssse3", "default"))) void bswap64_array(void* data, std::size_t n) {
  auto* p = static_cast<u64_alias*>(data);
  for (std::size_t i = 0; i < n; ++i) p[i] = __builtin_bswap64(p[i]);
}

}  // namespace anabranch
