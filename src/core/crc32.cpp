#include "core/crc32.hpp"

#include <zlib.h>

#include <cstring>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define AB_CRC_FOLDING 1
#endif

namespace anabranch {
namespace {

std::uint32_t crc32_zlib(std::uint32_t crc, const unsigned char* p, std::size_t n) {
  while (n > 0) {  // zlib takes a uInt length
    const auto step = static_cast<uInt>(n > (std::size_t{1} << 30) ? std::size_t{1} << 30 : n);
    crc = static_cast<std::uint32_t>(::crc32(crc, p, step));
    p += step;
    n -= step;
  }
  return crc;
}

#ifdef AB_CRC_FOLDING
// The message, 128 bits at a time, is folded forward over 4 lanes of 128 bits (512 bits a
// step), then the lanes into one, keeping the remainder modulo the CRC polynomial the same
// (bit-reflected arithmetic over GF(2): the constants are x^(512+32), x^(512-32) and
// x^(128+32), x^(128-32) modulo P, reflected). The last 16-byte remainder and the tail go
// through zlib.
#define AB_FOLDING_TARGET __attribute__((target("pclmul,sse4.1")))
AB_FOLDING_TARGET inline __m128i fold(__m128i x, __m128i k) {
  return _mm_xor_si128(_mm_clmulepi64_si128(x, k, 0x00), _mm_clmulepi64_si128(x, k, 0x11));
}
AB_FOLDING_TARGET inline __m128i load(const unsigned char* q) { return _mm_loadu_si128(reinterpret_cast<const __m128i*>(q)); }

AB_FOLDING_TARGET std::uint32_t crc32_fold(std::uint32_t crc, const unsigned char* p, std::size_t n) {
  const __m128i k512 = _mm_set_epi64x(0x1c6e41596, 0x154442bd4);
  const __m128i k128 = _mm_set_epi64x(0x0ccaa009e, 0x1751997d0);
  __m128i x0 = _mm_xor_si128(load(p), _mm_cvtsi32_si128(static_cast<int>(~crc)));
  __m128i x1 = load(p + 16), x2 = load(p + 32), x3 = load(p + 48);
  p += 64;
  n -= 64;
  for (; n >= 64; p += 64, n -= 64) {
    x0 = _mm_xor_si128(fold(x0, k512), load(p));
    x1 = _mm_xor_si128(fold(x1, k512), load(p + 16));
    x2 = _mm_xor_si128(fold(x2, k512), load(p + 32));
    x3 = _mm_xor_si128(fold(x3, k512), load(p + 48));
  }
  __m128i x = _mm_xor_si128(fold(x0, k128), x1);
  x = _mm_xor_si128(fold(x, k128), x2);
  x = _mm_xor_si128(fold(x, k128), x3);
  for (; n >= 16; p += 16, n -= 16) x = _mm_xor_si128(fold(x, k128), load(p));
  // x holds 16 bytes whose CRC (from a zero register, no inversion) is the message's so far.
  unsigned char rest[16];
  _mm_storeu_si128(reinterpret_cast<__m128i*>(rest), x);
  const std::uint32_t raw = ~crc32_zlib(0xffffffffu, rest, 16);
  return crc32_zlib(~raw, p, n);
}
#endif

}  // namespace

std::uint32_t crc32_combine(std::uint32_t crc_a, std::uint32_t crc_b, std::int64_t length_b) {
  return static_cast<std::uint32_t>(::crc32_combine64(crc_a, crc_b, static_cast<z_off64_t>(length_b)));
}

std::uint32_t crc32(std::uint32_t crc, const void* data, std::size_t n) {
  const auto* p = static_cast<const unsigned char*>(data);
#ifdef AB_CRC_FOLDING
  static const bool folding = __builtin_cpu_supports("pclmul") && __builtin_cpu_supports("sse4.1");
  if (folding && n >= 128) return crc32_fold(crc, p, n);
#endif
  return crc32_zlib(crc, p, n);
}

}  // namespace anabranch
