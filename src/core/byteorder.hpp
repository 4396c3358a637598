// Byte order of files and in-memory conversion. SERAFIN is big-endian by convention; the
// writers convert in memory and never rely on MPI's external32.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

namespace anabranch {

enum class ByteOrder { Big, Little };

constexpr ByteOrder native_byte_order() {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
  return ByteOrder::Big;
#else
  return ByteOrder::Little;
#endif
}

inline const char* to_string(ByteOrder o) { return o == ByteOrder::Big ? "big" : "little"; }

inline std::uint32_t bswap(std::uint32_t v) { return __builtin_bswap32(v); }
inline std::uint64_t bswap(std::uint64_t v) { return __builtin_bswap64(v); }

// Reverse the bytes of n 4- or 8-byte words in place (vectorised where the CPU allows).
void bswap32_array(void* data, std::size_t n);
void bswap64_array(void* data, std::size_t n);

template <std::size_t W>
inline void bswap_words(void* data, std::size_t n) {
  static_assert(W == 4 || W == 8, "4- or 8-byte words only");
  if constexpr (W == 4)
    bswap32_array(data, n);
  else
    bswap64_array(data, n);
}

// n values to type R (float or double) at out (any alignment), bytes reversed when swap:
// one vectorised pass (the conversion and the byte swap fused). For T, R in {float, double}.
template <class R, class T>
void encode_words(const T* in, std::size_t n, bool swap, void* out);  // instantiated in byteorder.cpp
// The inverse: n values of type R (float or double) at in (any alignment), bytes reversed
// when swap, to the caller's T, in one vectorised pass.
template <class R, class T>
void decode_words(const void* in, std::size_t n, bool swap, T* out);  // instantiated in byteorder.cpp

// Convert n words between native order and `order` (the operation is its own inverse).
template <std::size_t W>
inline void to_order(void* data, std::size_t n, ByteOrder order) {
  if (order != native_byte_order()) bswap_words<W>(data, n);
}

// Read one value of type T (4 or 8 bytes) stored in `order` at p.
template <class T>
inline T load(const void* p, ByteOrder order) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  to_order<sizeof(T)>(&v, 1, order);
  return v;
}

template <class T>
inline void store(void* p, T v, ByteOrder order) {
  to_order<sizeof(T)>(&v, 1, order);
  std::memcpy(p, &v, sizeof(T));
}

}  // namespace anabranch
