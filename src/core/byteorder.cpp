#include "core/byteorder.hpp"

#include <cstring>
#include <type_traits>

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

namespace {

// The loop every clone below compiles for its own instruction set: with swap loop-invariant,
// the compiler makes two loops, each a stream of converts, shuffles and stores.
template <class R, class T>
__attribute__((always_inline)) inline void encode_loop(const T* in, std::size_t n, bool swap, unsigned char* out) {
  using Word = std::conditional_t<sizeof(R) == 4, std::uint32_t, std::uint64_t>;
  for (std::size_t i = 0; i < n; ++i) {
    const R r = static_cast<R>(in[i]);
    Word w;
    std::memcpy(&w, &r, sizeof w);
    if (swap) w = sizeof w == 4 ? __builtin_bswap32(static_cast<std::uint32_t>(w)) : __builtin_bswap64(w);
    std::memcpy(out + i * sizeof w, &w, sizeof w);
  }
}

// Its mirror: words in, swapped when asked, converted to the caller's type.
template <class R, class T>
__attribute__((always_inline)) inline void decode_loop(const unsigned char* in, std::size_t n, bool swap, T* out) {
  using Word = std::conditional_t<sizeof(R) == 4, std::uint32_t, std::uint64_t>;
  for (std::size_t i = 0; i < n; ++i) {
    Word w;
    std::memcpy(&w, in + i * sizeof w, sizeof w);
    if (swap) w = sizeof w == 4 ? __builtin_bswap32(static_cast<std::uint32_t>(w)) : __builtin_bswap64(w);
    R r;
    std::memcpy(&r, &w, sizeof r);
    out[i] = static_cast<T>(r);
  }
}

#define AB_DECODE_CLONE(NAME, R, T)                                                                        \
  __attribute__((target_clones("avx2", "ssse3", "default"))) void NAME(const unsigned char* in, std::size_t n, bool swap, \
                                                                         T* out) {                        \
    decode_loop<R, T>(in, n, swap, out);                                                                  \
  }
AB_DECODE_CLONE(decode_f32_f32, float, float)
AB_DECODE_CLONE(decode_f32_f64, float, double)
AB_DECODE_CLONE(decode_f64_f32, double, float)
AB_DECODE_CLONE(decode_f64_f64, double, double)
#undef AB_DECODE_CLONE

#define AB_ENCODE_CLONE(NAME, R, T)                                                                        \
  __attribute__((target_clones("avx2", "ssse3", "default"))) void NAME(const T* in, std::size_t n, bool swap, \
                                                                         unsigned char* out) {            \
    encode_loop<R, T>(in, n, swap, out);                                                                  \
  }
AB_ENCODE_CLONE(encode_f32_f32, float, float)
AB_ENCODE_CLONE(encode_f32_f64, float, double)
AB_ENCODE_CLONE(encode_f64_f32, double, float)
AB_ENCODE_CLONE(encode_f64_f64, double, double)
#undef AB_ENCODE_CLONE

}  // namespace

template <class R, class T>
void encode_words(const T* in, std::size_t n, bool swap, void* out) {
  auto* o = static_cast<unsigned char*>(out);
  if (sizeof(R) == sizeof(T) && !swap)  // the file's form is the caller's: a copy
    std::memcpy(o, in, n * sizeof(T));
  else if constexpr (sizeof(R) == 4 && sizeof(T) == 4)
    encode_f32_f32(in, n, swap, o);
  else if constexpr (sizeof(R) == 4)
    encode_f32_f64(in, n, swap, o);
  else if constexpr (sizeof(T) == 4)
    encode_f64_f32(in, n, swap, o);
  else
    encode_f64_f64(in, n, swap, o);
}
template void encode_words<float, float>(const float*, std::size_t, bool, void*);
template void encode_words<float, double>(const double*, std::size_t, bool, void*);
template void encode_words<double, float>(const float*, std::size_t, bool, void*);
template void encode_words<double, double>(const double*, std::size_t, bool, void*);

template <class R, class T>
void decode_words(const void* in, std::size_t n, bool swap, T* out) {
  const auto* i = static_cast<const unsigned char*>(in);
  if (sizeof(R) == sizeof(T) && !swap)
    std::memcpy(out, i, n * sizeof(T));
  else if constexpr (sizeof(R) == 4 && sizeof(T) == 4)
    decode_f32_f32(i, n, swap, out);
  else if constexpr (sizeof(R) == 4)
    decode_f32_f64(i, n, swap, out);
  else if constexpr (sizeof(T) == 4)
    decode_f64_f32(i, n, swap, out);
  else
    decode_f64_f64(i, n, swap, out);
}
template void decode_words<float, float>(const void*, std::size_t, bool, float*);
template void decode_words<float, double>(const void*, std::size_t, bool, double*);
template void decode_words<double, float>(const void*, std::size_t, bool, float*);
template void decode_words<double, double>(const void*, std::size_t, bool, double*);

}  // namespace anabranch
