#include "core/byteorder.hpp"

#include <cstring>

namespace anabranch {

// One clone per instruction set: the AVX2 one swaps 32 bytes per shuffle; the choice is
// made once, at load time. memcpy keeps unaligned words well-defined; compilers turn it
// into plain (vector) loads and stores.
__attribute__((target_clones("avx2", "ssse3", "default"))) void bswap32_array(void* data, std::size_t n) {
  auto* p = static_cast<unsigned char*>(data);
  for (std::size_t i = 0; i < n; ++i) {
    std::uint32_t v;
    std::memcpy(&v, p + 4 * i, 4);
    v = __builtin_bswap32(v);
    std::memcpy(p + 4 * i, &v, 4);
  }
}

__attribute__((target_clones("avx2", "ssse3", "default"))) void bswap64_array(void* data, std::size_t n) {
  auto* p = static_cast<unsigned char*>(data);
  for (std::size_t i = 0; i < n; ++i) {
    std::uint64_t v;
    std::memcpy(&v, p + 8 * i, 8);
    v = __builtin_bswap64(v);
    std::memcpy(p + 8 * i, &v, 8);
  }
}

}  // namespace anabranch
