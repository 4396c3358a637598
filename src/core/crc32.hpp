// CRC-32 with the zlib / PNG polynomial (what zlib's crc32() and Python's zlib.crc32 give),
// folded with carry-less multiplication (PCLMULQDQ) where the processor has it: about 5x
// zlib's table-driven speed, so a checksum of a multi-GB input costs less than reading it.
#pragma once
#include <cstddef>
#include <cstdint>

namespace anabranch {

// crc: the value of the bytes before (0 for none), as zlib's crc32(crc, data, n) takes it.
std::uint32_t crc32(std::uint32_t crc, const void* data, std::size_t n);

// The CRC-32 of A then B from crc_a (A's), crc_b (B's) and B's length: what zlib's
// crc32_combine gives. Pieces checksummed apart (by several processes) make the whole's.
std::uint32_t crc32_combine(std::uint32_t crc_a, std::uint32_t crc_b, std::int64_t length_b);

}  // namespace anabranch
