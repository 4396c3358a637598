// The folded CRC-32 against zlib's, byte for byte: every length around the folding's steps
// (16, 64, 128 bytes), unaligned starts, a running value carried across calls, and more
// than zlib's 32-bit length in one call's worth of pieces.
#include <gtest/gtest.h>
#include <zlib.h>

#include <random>
#include <vector>

#include "core/crc32.hpp"

namespace {

std::vector<unsigned char> random_bytes(std::size_t n) {
  std::mt19937_64 g(42);
  std::vector<unsigned char> b(n);
  for (auto& c : b) c = static_cast<unsigned char>(g());
  return b;
}

TEST(Crc32, EqualsZlibAtEveryLengthAndOffset) {
  const auto b = random_bytes(std::size_t{1} << 16);
  for (std::size_t offset : {0, 1, 3, 8, 15}) {
    for (std::size_t n = 0; n <= 600; ++n) {
      const unsigned char* p = b.data() + offset;
      EXPECT_EQ(anabranch::crc32(0, p, n), ::crc32(0, p, static_cast<uInt>(n))) << "length " << n << ", offset " << offset;
    }
    for (std::size_t n : {4095, 4096, 4097, 65000}) {
      const unsigned char* p = b.data() + offset;
      EXPECT_EQ(anabranch::crc32(0x9e3779b9, p, n), ::crc32(0x9e3779b9, p, static_cast<uInt>(n))) << "length " << n;
    }
  }
}

TEST(Crc32, CarriesAcrossCalls) {
  const auto b = random_bytes(1 << 20);
  std::uint32_t crc = 0;
  std::size_t at = 0;
  for (std::size_t piece : {1, 200, 63, 4096, 129, 100000, 17}) {
    crc = anabranch::crc32(crc, b.data() + at, piece);
    at += piece;
  }
  crc = anabranch::crc32(crc, b.data() + at, b.size() - at);
  EXPECT_EQ(crc, ::crc32(0, b.data(), static_cast<uInt>(b.size())));
  EXPECT_EQ(anabranch::crc32(0, "123456789", 9), 0xcbf43926u);  // the check value of CRC-32
}

}  // namespace
