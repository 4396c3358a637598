#include "formats/plot3d.hpp"

#include <algorithm>
#include <cstring>
#include <fstream>

#include "core/byteorder.hpp"
#include "core/error.hpp"
#include "core/io.hpp"

namespace anabranch::plot3d {
namespace {

std::uint32_t u32(const unsigned char* p, bool big) {
  return big ? (std::uint32_t{p[0]} << 24 | std::uint32_t{p[1]} << 16 | std::uint32_t{p[2]} << 8 | p[3])
             : (std::uint32_t{p[3]} << 24 | std::uint32_t{p[2]} << 16 | std::uint32_t{p[1]} << 8 | p[0]);
}

// Tries one reading of the header; fills g and returns "" when the file's size agrees.
std::string try_layout(const std::vector<unsigned char>& head, std::int64_t size, bool big, bool records, bool multi, int dims, Grid& g) {
  auto word = [&](std::int64_t at) -> std::int64_t {
    if (at + 4 > static_cast<std::int64_t>(head.size())) return -1;
    return static_cast<std::int64_t>(u32(head.data() + at, big));
  };
  std::int64_t at = 0, nblocks = 1;
  if (multi) {
    if (records && word(0) != 4) return "first record";
    nblocks = word(records ? 4 : 0);
    if (nblocks < 1 || nblocks > 10000000) return "block count";
    at = records ? 12 : 4;
  }
  if (records && word(at) != nblocks * dims * 4) return "dimensions record";
  at += records ? 4 : 0;
  if (at + nblocks * dims * 4 > static_cast<std::int64_t>(head.size())) return "dimensions beyond the header read";
  std::vector<BlockShape> blocks;
  std::int64_t points = 0;
  for (std::int64_t b = 0; b < nblocks; ++b) {
    BlockShape s;
    s.id = b + 1;
    for (int a = 0; a < dims; ++a) {
      s.dims[static_cast<std::size_t>(a)] = word(at + (b * dims + a) * 4);
      if (s.dims[static_cast<std::size_t>(a)] < 1 || s.dims[static_cast<std::size_t>(a)] > (1 << 24)) return "block dimensions";
    }
    if (dims == 2) s.dims[2] = 1;
    points += s.points();
    blocks.push_back(s);
  }
  at += nblocks * dims * 4 + (records ? 4 : 0);
  const std::int64_t data = size - at;
  for (int rb : {8, 4})
    for (bool iblank : {false, true}) {
      std::int64_t need = 0;
      for (const auto& s : blocks) need += s.points() * (dims * rb + (iblank ? 4 : 0)) + (records ? 8 : 0);
      if (need != data) continue;
      if (records) {  // the first block's record length must agree too
        const std::int64_t m = word(at);
        if (m >= 0 && m != blocks[0].points() * (dims * rb + (iblank ? 4 : 0))) continue;
      }
      g.blocks = blocks;
      g.real_bytes = rb;
      g.big_endian = big;
      g.records = records;
      g.iblank = iblank;
      g.multi = multi;
      g.dimensions = dims;
      g.coords_at.clear();
      std::int64_t p = at;
      for (const auto& s : blocks) {
        g.coords_at.push_back(p + (records ? 4 : 0));
        p += s.points() * (dims * rb + (iblank ? 4 : 0)) + (records ? 8 : 0);
      }
      return "";
    }
  return "size";
}

}  // namespace

Grid read_header(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw IoError::from_errno("cannot open", path);
  in.seekg(0, std::ios::end);
  const std::int64_t size = in.tellg();
  in.seekg(0);
  // Enough for the dimensions of a million blocks.
  std::vector<unsigned char> head(static_cast<std::size_t>(std::min<std::int64_t>(size, 16 + 12 * std::int64_t{1000000} + 8)));
  in.read(reinterpret_cast<char*>(head.data()), static_cast<std::streamsize>(head.size()));
  Grid g;
  g.path = path;
  for (bool records : {true, false})
    for (bool big : {false, true})
      for (bool multi : {true, false})
        for (int dims : {3, 2})
          if (try_layout(head, size, big, records, multi, dims, g).empty()) return g;
  throw FormatError(path, "PLOT3D header", 0,
                    "not a PLOT3D grid: no reading (multi- or single-grid, 3D or 2D, single or double, with or without IBLANK, "
                    "either byte order, Fortran records or C binary) gives the file's " + std::to_string(size) + " bytes");
}

bool is_plot3d(const std::string& path) {
  try {
    read_header(path);
    return true;
  } catch (const Error&) {
    return false;
  }
}

void read_coordinate(const Grid& g, std::size_t b, int c, std::vector<double>& out) {
  const std::int64_t n = g.blocks[b].points();
  out.assign(static_cast<std::size_t>(n), 0.0);
  if (c >= g.dimensions) return;
  std::ifstream in(g.path, std::ios::binary);
  if (!in) throw IoError::from_errno("cannot open", g.path);
  const std::int64_t at = g.coords_at[b] + c * n * g.real_bytes;
  std::vector<unsigned char> raw(static_cast<std::size_t>(n * g.real_bytes));
  in.seekg(at);
  in.read(reinterpret_cast<char*>(raw.data()), static_cast<std::streamsize>(raw.size()));
  if (!in) throw FormatError(g.path, "block " + std::to_string(b + 1) + " coordinates", at, "the file ends inside them");
  const bool swap = g.big_endian != (native_byte_order() == ByteOrder::Big);
  for (std::int64_t i = 0; i < n; ++i) {
    unsigned char* p = raw.data() + i * g.real_bytes;
    if (swap) std::reverse(p, p + g.real_bytes);
    if (g.real_bytes == 8) {
      double d;
      std::memcpy(&d, p, 8);
      out[static_cast<std::size_t>(i)] = d;
    } else {
      float f;
      std::memcpy(&f, p, 4);
      out[static_cast<std::size_t>(i)] = f;
    }
  }
}

void write(const std::string& path, const std::vector<BlockShape>& blocks, bool big_endian,
           const std::function<void(std::size_t b, int c, std::vector<double>& out)>& xyz) {
  AtomicFileSink sink(path);
  const bool swap = big_endian != (native_byte_order() == ByteOrder::Big);
  auto i32 = [&](std::int64_t v) {
    auto x = static_cast<std::uint32_t>(v);
    if (swap) x = __builtin_bswap32(x);
    sink.write(&x, 4);
  };
  i32(4);
  i32(static_cast<std::int64_t>(blocks.size()));
  i32(4);
  i32(static_cast<std::int64_t>(blocks.size()) * 12);
  for (const auto& b : blocks)
    for (auto d : b.dims) i32(d);
  i32(static_cast<std::int64_t>(blocks.size()) * 12);
  std::vector<double> v;
  for (std::size_t b = 0; b < blocks.size(); ++b) {
    const std::int64_t bytes = blocks[b].points() * 3 * 8;
    if (bytes > 0x7fffffffLL) throw UsageError("block " + std::to_string(blocks[b].id) + ": its coordinates (" + std::to_string(bytes) + " bytes) are past a Fortran record's 2^31-1 bytes");
    i32(bytes);
    for (int c = 0; c < 3; ++c) {
      xyz(b, c, v);
      if (swap)
        for (auto& d : v) {
          std::uint64_t u;
          std::memcpy(&u, &d, 8);
          u = __builtin_bswap64(u);
          std::memcpy(&d, &u, 8);
        }
      sink.write(v.data(), v.size() * 8);
    }
    i32(bytes);
  }
  sink.commit();
}

}  // namespace anabranch::plot3d
