// HDF5 files written as bytes, without the HDF5 library: the metadata of a tree of groups,
// attributes and datasets, laid out once from a given file address, each object's children
// written before it (a parent's links need its children's addresses). What it writes is the
// HDF5 file format's newer form (docs/formats/cgns.md, HDF5 File Format Specification 3.0):
// a version 2 superblock, version 2 object headers (checksummed), groups whose links are
// messages in their object header (compact storage, no heaps or B-trees), attributes in the
// object header, datasets contiguous (their values at an address the caller chose, written by
// whoever holds them), compact (small values inside the header) or chunked through filters
// (each chunk's filtered bytes at an address the caller chose: layout version 4, with a
// single-chunk or fixed-array index, which HDF5 reads since 1.10). Every HDF5 reader (the
// library since 1.8, 1.10 for chunked datasets, h5py, CGNS's library, ParaView) reads it. The point: a tree of a million
// objects is a few hundred MB of memcpy, where the HDF5 library takes minutes (its metadata
// cache and free-space bookkeeping per object), and no collective call is needed to know
// where any array is.
//
// Typical use (the children first, post-order):
//   hdf5_bytes::Writer w(first_address);
//   auto x = w.dataset({{"name", "X"}}, hdf5_bytes::Type::f64(), {n}, data_address);
//   auto g = w.group({{"name", "G"}}, {{"x", x}});
//   w.root(g);  ...  w.bytes() go at first_address; w.superblock(eof) at byte 0.
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace anabranch::hdf5_bytes {

// Jenkins' lookup3 hash (hashlittle), as HDF5 checksums its metadata.
std::uint32_t lookup3(const void* data, std::size_t n, std::uint32_t initval = 0);

// An element type: little-endian integers and IEEE reals, or a fixed-size string.
struct Type {
  enum Class { Integer, Real, String } cls = Integer;
  int bytes = 4;
  bool is_signed = true;
  static Type i32() { return {Integer, 4, true}; }
  static Type i64() { return {Integer, 8, true}; }
  static Type i8() { return {Integer, 1, true}; }
  static Type f32() { return {Real, 4, true}; }
  static Type f64() { return {Real, 8, true}; }
  static Type str(int n) { return {String, n, false}; }  // null-terminated, n bytes
  void encode(std::string& out) const;                  // the datatype message's body
};

// An attribute: a name, a type, a shape (empty: scalar) and its value's bytes.
struct Attribute {
  std::string name;
  Type type;
  std::vector<std::uint64_t> dims;
  std::string value;
  static Attribute string(const std::string& name, const std::string& value, int size);  // scalar fixed string
  static Attribute int32(const std::string& name, const std::vector<std::int32_t>& values);
};

// A filter of a chunked dataset's pipeline: HDF5's filter number, its flags (1: optional) and
// client values; `name` is stored for filters numbered 256 and above (registered ones).
struct Filter {
  int id = 0;
  int flags = 0;
  std::vector<std::uint32_t> values;
  std::string name;
};
// Where a chunk's stored (filtered) bytes are.
struct Chunk {
  std::int64_t address = -1, bytes = 0;
};

class Writer {
 public:
  // The metadata goes at file bytes [first, first + bytes().size()).
  explicit Writer(std::int64_t first) : first_(first) {}

  // A group: its attributes and its links (name, object address), in this order; `parents`
  // the hard links that will point to it (more than one: a group shared by several parents).
  // Returns its object header's address.
  std::int64_t group(const std::vector<Attribute>& attributes, const std::vector<std::pair<std::string, std::int64_t>>& links,
                     std::int64_t parents = 1);
  // A dataset of `dims` (C order, slowest first), values contiguous at `address` (written by
  // the caller; -1: none, the dataset is empty of storage). Returns its address.
  std::int64_t dataset(const std::vector<Attribute>& attributes, const Type& type, const std::vector<std::uint64_t>& dims,
                       std::int64_t address);
  // A dataset of `dims` (C order) in chunks of `chunk` (the same rank; a chunk past the
  // dataset's edge stored whole too, its values past the edge any), the chunks in C order of
  // the grid of chunks, chunk k's bytes through `filters` (one or more) at chunks[k] (written
  // by the caller). Returns its address; its index (HDF5's fixed array) goes in these bytes.
  std::int64_t chunked(const std::vector<Attribute>& attributes, const Type& type, const std::vector<std::uint64_t>& dims,
                       const std::vector<std::uint64_t>& chunk, const std::vector<Filter>& filters, const std::vector<Chunk>& chunks);
  // A dataset whose values are in its header (at most a few KiB).
  std::int64_t compact(const std::vector<Attribute>& attributes, const Type& type, const std::vector<std::uint64_t>& dims,
                       const std::string& values);

  const std::string& bytes() const { return out_; }
  // The bytes made since the last take(), handed over (they go at the address end() had then).
  std::string take();
  std::int64_t end() const { return first_ + static_cast<std::int64_t>(out_.size()); }
  // The 48-byte version 2 superblock for byte 0: the root group's address and the file's end.
  static std::string superblock(std::int64_t root, std::int64_t end_of_file);
  static constexpr std::int64_t kSuperblockBytes = 48;

 private:
  std::int64_t object(const std::string& messages);
  std::int64_t first_;
  std::string out_;
};

}  // namespace anabranch::hdf5_bytes
