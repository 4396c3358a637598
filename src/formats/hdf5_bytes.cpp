// HDF5 metadata as bytes. See hdf5_bytes.hpp; the layouts are those of the HDF5 File Format
// Specification 3.0 (superblock version 2, object header version 2, message versions noted
// below). Every number is little-endian.
#include "formats/hdf5_bytes.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>

namespace anabranch::hdf5_bytes {
namespace {

constexpr std::uint64_t kUndefined = ~std::uint64_t{0};

void put(std::string& out, std::uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

// A message of an object header (version 2): type, size, flags, then its body.
void message(std::string& out, int type, const std::string& body) {
  if (body.size() > 0xffff) throw std::length_error("an HDF5 message over 64 KiB");
  put(out, static_cast<std::uint64_t>(type), 1);
  put(out, body.size(), 2);
  put(out, 0, 1);
  out += body;
}

// Dataspace (type 1, version 2): scalar (no dims) or simple.
std::string dataspace(const std::vector<std::uint64_t>& dims) {
  std::string s;
  put(s, 2, 1);
  put(s, dims.size(), 1);
  put(s, 0, 1);                    // no maximum dimensions
  put(s, dims.empty() ? 0 : 1, 1);  // scalar or simple
  for (auto d : dims) put(s, d, 8);
  return s;
}

std::uint64_t count(const std::vector<std::uint64_t>& dims) {
  std::uint64_t n = 1;
  for (auto d : dims) n *= d;
  return n;
}

// Attribute message (type 12, version 3).
std::string attribute(const Attribute& a) {
  std::string type, space = dataspace(a.dims), s;
  a.type.encode(type);
  if (a.value.size() != count(a.dims) * static_cast<std::uint64_t>(a.type.bytes))
    throw std::logic_error("attribute " + a.name + ": " + std::to_string(a.value.size()) + " bytes for its shape");
  put(s, 3, 1);
  put(s, 0, 1);
  put(s, a.name.size() + 1, 2);
  put(s, type.size(), 2);
  put(s, space.size(), 2);
  put(s, 0, 1);  // ASCII name
  s += a.name;
  s.push_back('\0');
  s += type;
  s += space;
  s += a.value;
  return s;
}

void attributes(std::string& m, const std::vector<Attribute>& as) {
  for (const auto& a : as) message(m, 0x0C, attribute(a));
}

// Datatype (3), fill value (5, version 3), filter pipeline (11, if any) and layout (8) of a dataset.
void dataset_messages(std::string& m, const Type& type, const std::vector<std::uint64_t>& dims, int fill_flags,
                      const std::string& layout, const std::string& pipeline = {}) {
  message(m, 0x01, dataspace(dims));
  std::string t;
  type.encode(t);
  message(m, 0x03, t);
  std::string fill;
  put(fill, 3, 1);
  put(fill, static_cast<std::uint64_t>(fill_flags), 1);
  message(m, 0x05, fill);
  if (!pipeline.empty()) message(m, 0x0B, pipeline);
  message(m, 0x08, layout);
}

}  // namespace

std::uint32_t lookup3(const void* data, std::size_t n, std::uint32_t initval) {
  const auto* k = static_cast<const unsigned char*>(data);
  auto rot = [](std::uint32_t x, int r) { return (x << r) | (x >> (32 - r)); };
  std::uint32_t a, b, c;
  a = b = c = 0xdeadbeefu + static_cast<std::uint32_t>(n) + initval;
  auto word = [&](const unsigned char* p) {
    return std::uint32_t{p[0]} | std::uint32_t{p[1]} << 8 | std::uint32_t{p[2]} << 16 | std::uint32_t{p[3]} << 24;
  };
  while (n > 12) {
    a += word(k);
    b += word(k + 4);
    c += word(k + 8);
    a -= c; a ^= rot(c, 4);  c += b;
    b -= a; b ^= rot(a, 6);  a += c;
    c -= b; c ^= rot(b, 8);  b += a;
    a -= c; a ^= rot(c, 16); c += b;
    b -= a; b ^= rot(a, 19); a += c;
    c -= b; c ^= rot(b, 4);  b += a;
    n -= 12;
    k += 12;
  }
  if (n == 0) return c;
  unsigned char tail[12] = {};
  std::memcpy(tail, k, n);
  a += word(tail);
  b += word(tail + 4);
  c += word(tail + 8);
  c ^= b; c -= rot(b, 14);
  a ^= c; a -= rot(c, 11);
  b ^= a; b -= rot(a, 25);
  c ^= b; c -= rot(b, 16);
  a ^= c; a -= rot(c, 4);
  b ^= a; b -= rot(a, 14);
  c ^= b; c -= rot(b, 24);
  return c;
}

void Type::encode(std::string& out) const {
  const int cls_code = cls == Integer ? 0 : cls == Real ? 1 : 3;
  put(out, static_cast<std::uint64_t>(0x10 | cls_code), 1);  // version 1
  if (cls == Integer) {
    put(out, is_signed ? 0x08 : 0x00, 1);  // little-endian, zero padding, signed
    put(out, 0, 2);
    put(out, static_cast<std::uint64_t>(bytes), 4);
    put(out, 0, 2);                                      // bit offset
    put(out, static_cast<std::uint64_t>(8 * bytes), 2);  // precision
  } else if (cls == Real) {
    const bool d = bytes == 8;
    put(out, 0x20, 1);          // little-endian, mantissa normalised with an implied leading bit
    put(out, d ? 63 : 31, 1);   // the sign bit
    put(out, 0, 1);
    put(out, static_cast<std::uint64_t>(bytes), 4);
    put(out, 0, 2);
    put(out, d ? 64 : 32, 2);
    put(out, d ? 52 : 23, 1);   // exponent location and size
    put(out, d ? 11 : 8, 1);
    put(out, 0, 1);             // mantissa location and size
    put(out, d ? 52 : 23, 1);
    put(out, d ? 1023 : 127, 4);
  } else {
    put(out, 0, 3);  // null-terminated, ASCII
    put(out, static_cast<std::uint64_t>(bytes), 4);
  }
}

Attribute Attribute::string(const std::string& name, const std::string& value, int size) {
  std::string v = value.substr(0, static_cast<std::size_t>(size - 1));
  v.resize(static_cast<std::size_t>(size), '\0');
  return {name, Type::str(size), {}, v};
}

Attribute Attribute::int32(const std::string& name, const std::vector<std::int32_t>& values) {
  std::string v;
  for (auto x : values) put(v, static_cast<std::uint32_t>(x), 4);
  return {name, Type::i32(), {values.size()}, v};
}

std::int64_t Writer::object(const std::string& messages) {
  const std::int64_t at = end();
  const std::uint64_t n = messages.size();
  const int width = n <= 0xff ? 0 : n <= 0xffff ? 1 : 2;
  std::string h = "OHDR";
  put(h, 2, 1);
  put(h, static_cast<std::uint64_t>(width), 1);  // chunk 0's size field width; no times, default attribute storage
  put(h, n, 1 << width);
  h += messages;
  put(h, lookup3(h.data(), h.size()), 4);
  out_ += h;
  return at;
}

std::int64_t Writer::group(const std::vector<Attribute>& attrs, const std::vector<std::pair<std::string, std::int64_t>>& links,
                           std::int64_t parents) {
  std::string m;
  if (parents > 1) {  // object reference count (22, version 0)
    std::string c;
    put(c, 0, 1);
    put(c, static_cast<std::uint64_t>(parents), 4);
    message(m, 0x16, c);
  }
  // Link info (2, version 0): the links' creation order tracked and indexed (as CGNS's own
  // files have it: its library lists a node's children in that order), stored compactly in
  // this header (no fractal heap, no B-trees).
  std::string info;
  put(info, 0, 1);
  put(info, 3, 1);
  put(info, links.empty() ? 0 : links.size() - 1, 8);  // the largest creation order given
  put(info, kUndefined, 8);
  put(info, kUndefined, 8);
  put(info, kUndefined, 8);
  message(m, 0x02, info);
  message(m, 0x0A, std::string(2, '\0'));  // group info (version 0), defaults
  std::uint64_t order = 0;
  for (const auto& [name, address] : links) {
    std::string l;  // link (6, version 1): a hard link, with its creation order
    put(l, 1, 1);
    const bool wide = name.size() > 0xff;
    put(l, (wide ? 1 : 0) | 0x04, 1);
    put(l, order++, 8);
    put(l, name.size(), wide ? 2 : 1);
    l += name;
    put(l, static_cast<std::uint64_t>(address), 8);
    message(m, 0x06, l);
  }
  attributes(m, attrs);
  return object(m);
}

std::int64_t Writer::dataset(const std::vector<Attribute>& attrs, const Type& type, const std::vector<std::uint64_t>& dims,
                             std::int64_t address) {
  std::string layout;  // contiguous
  put(layout, 3, 1);
  put(layout, 1, 1);
  put(layout, address < 0 ? kUndefined : static_cast<std::uint64_t>(address), 8);
  put(layout, count(dims) * static_cast<std::uint64_t>(type.bytes), 8);
  std::string m;
  // space allocated early and never filled; without storage, allocated late
  dataset_messages(m, type, dims, address < 0 ? 0x0A : 0x05, layout);
  attributes(m, attrs);
  return object(m);
}

std::int64_t Writer::chunked(const std::vector<Attribute>& attrs, const Type& type, const std::vector<std::uint64_t>& dims,
                             const std::vector<std::uint64_t>& chunk, const std::vector<Filter>& filters, const std::vector<Chunk>& chunks) {
  std::uint64_t grid = 1, values = 1, most = 0;  // chunks, values a chunk, the largest dimension
  bool single = dims.size() == chunk.size();
  for (std::size_t a = 0; a < dims.size() && a < chunk.size(); ++a) {
    if (chunk[a] == 0) grid = 0;
    else grid *= (dims[a] + chunk[a] - 1) / chunk[a];
    values *= chunk[a];
    most = std::max(most, chunk[a]);
    single = single && chunk[a] == dims[a];
  }
  if (dims.size() != chunk.size() || dims.empty() || chunks.empty() || chunks.size() != grid) throw std::logic_error("chunked dataset: chunks for its shape");
  if (filters.empty()) throw std::logic_error("chunked dataset: no filter");
  std::string pipeline;  // filter pipeline (version 2): names of registered filters only
  put(pipeline, 2, 1);
  put(pipeline, filters.size(), 1);
  for (const auto& f : filters) {
    const bool named = f.id >= 256;
    put(pipeline, static_cast<std::uint64_t>(f.id), 2);
    if (named) put(pipeline, f.name.size() + 1, 2);
    put(pipeline, static_cast<std::uint64_t>(f.flags), 2);
    put(pipeline, f.values.size(), 2);
    if (named) {
      pipeline += f.name;
      pipeline.push_back('\0');
    }
    for (auto v : f.values) put(pipeline, v, 4);
  }
  auto bytes_for = [](std::uint64_t v) {
    int b = 1;
    while (b < 8 && (v >> (8 * b)) != 0) ++b;
    return b;
  };
  auto log2 = [](std::uint64_t v) {
    int b = 0;
    while (v >>= 1) ++b;
    return b;
  };
  const auto element = static_cast<std::uint64_t>(type.bytes);
  const int enc = bytes_for(std::max(most, element));
  std::string layout;  // layout (version 4), chunked
  put(layout, 4, 1);
  put(layout, 2, 1);
  put(layout, single ? 0x02 : 0x00, 1);  // a single chunk's filtered size in the message
  put(layout, dims.size() + 1, 1);  // dimensionality: the dimensions and the element
  put(layout, static_cast<std::uint64_t>(enc), 1);
  for (auto c : chunk) put(layout, c, enc);
  put(layout, element, enc);
  if (single) {
    put(layout, 1, 1);  // single-chunk index
    put(layout, static_cast<std::uint64_t>(chunks[0].bytes), 8);
    put(layout, 0, 4);  // every filter applied
    put(layout, static_cast<std::uint64_t>(chunks[0].address), 8);
  } else {
    // A fixed array of the chunks: its header (FAHD), then its one data block (FADB) of every
    // entry, unpaged (page bits enough for them all). A filtered entry: address, stored size
    // (in one byte more than the chunk's size needs) and filter mask.
    const int bits = std::max(10, log2(chunks.size() - 1) + 1);
    const int size_bytes = std::min(8, 1 + (log2(values * element) + 8) / 8);
    const int entry = 8 + size_bytes + 4;
    const std::int64_t header = end(), block = header + 28;
    std::string h = "FAHD";
    put(h, 0, 1);
    put(h, 1, 1);  // client: filtered chunks
    put(h, static_cast<std::uint64_t>(entry), 1);
    put(h, static_cast<std::uint64_t>(bits), 1);
    put(h, chunks.size(), 8);
    put(h, static_cast<std::uint64_t>(block), 8);
    put(h, lookup3(h.data(), h.size()), 4);
    std::string d = "FADB";
    put(d, 0, 1);
    put(d, 1, 1);
    put(d, static_cast<std::uint64_t>(header), 8);
    for (const auto& c : chunks) {
      put(d, static_cast<std::uint64_t>(c.address), 8);
      put(d, static_cast<std::uint64_t>(c.bytes), size_bytes);
      put(d, 0, 4);
    }
    put(d, lookup3(d.data(), d.size()), 4);
    out_ += h;
    out_ += d;
    put(layout, 3, 1);  // fixed-array index
    put(layout, static_cast<std::uint64_t>(bits), 1);
    put(layout, static_cast<std::uint64_t>(header), 8);
  }
  std::string m;
  dataset_messages(m, type, dims, 0x0B, layout, pipeline);  // allocated as written, filled if a fill value is set
  attributes(m, attrs);
  return object(m);
}

std::int64_t Writer::compact(const std::vector<Attribute>& attrs, const Type& type, const std::vector<std::uint64_t>& dims,
                             const std::string& values) {
  if (values.size() != count(dims) * static_cast<std::uint64_t>(type.bytes)) throw std::logic_error("compact dataset: bytes for its shape");
  std::string layout;
  put(layout, 3, 1);
  put(layout, 0, 1);
  put(layout, values.size(), 2);
  layout += values;
  std::string m;
  dataset_messages(m, type, dims, 0x09, layout);  // allocated early, filled if a fill value is set
  attributes(m, attrs);
  return object(m);
}

std::string Writer::take() {
  std::string piece;
  piece.swap(out_);
  first_ += static_cast<std::int64_t>(piece.size());
  return piece;
}

std::string Writer::superblock(std::int64_t root, std::int64_t end_of_file) {
  std::string s("\x89HDF\r\n\x1a\n", 8);
  put(s, 2, 1);  // version
  put(s, 8, 1);  // size of offsets
  put(s, 8, 1);  // size of lengths
  put(s, 0, 1);  // file consistency flags
  put(s, 0, 8);  // base address
  put(s, kUndefined, 8);  // no superblock extension
  put(s, static_cast<std::uint64_t>(end_of_file), 8);
  put(s, static_cast<std::uint64_t>(root), 8);
  put(s, lookup3(s.data(), s.size()), 4);
  return s;
}

}  // namespace anabranch::hdf5_bytes
