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

TEST(Crc32, PiecesCombineIntoTheWhole) {
  // Any cut of a buffer into two pieces, checksummed apart, combines into the whole's
  // checksum; lengths past 32 bits as zlib's crc32_combine64 gives them.
  const auto b = random_bytes(5000);
  const std::uint32_t whole = anabranch::crc32(0, b.data(), b.size());
  for (std::size_t cut : {0, 1, 2, 3, 7, 8, 100, 2500, 4999, 5000}) {
    const std::uint32_t a = anabranch::crc32(0, b.data(), cut), c = anabranch::crc32(0, b.data() + cut, b.size() - cut);
    EXPECT_EQ(anabranch::crc32_combine(a, c, static_cast<std::int64_t>(b.size() - cut)), whole) << "cut at " << cut;
  }
  for (std::int64_t n : {std::int64_t{1}, std::int64_t{12345}, std::int64_t{1} << 33, (std::int64_t{1} << 40) + 77})
    EXPECT_EQ(anabranch::crc32_combine(0x12345678u, 0x9abcdef0u, n), ::crc32_combine64(0x12345678u, 0x9abcdef0u, n)) << n;
}
