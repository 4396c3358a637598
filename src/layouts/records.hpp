// Fortran sequential unformatted files written by many ranks at once: the third layout over
// the engine (after SERAFIN frames and block files). A Fortran program's WRITE(unit) makes
// one record: a length marker, the payload, the same marker. A restart file is a list of such
// records (a block's header, its arrays, the next block's...), written today by one process
// that gathers everything. Here every rank writes the records it holds, straight into the one
// file, byte for byte what the serial program writes; any rank reads any record back.
//
// The layout is the list of every record's payload size in file order, the same on every rank
// (cheap: a few numbers a block), and the records' form (marker size, byte order, subrecords).
// Records longer than a subrecord are split as gfortran splits them: subrecords of at most
// max_subrecord bytes, each between its own markers; a leading marker is negative when more
// subrecords follow, a trailing one when subrecords came before.
//
// Typical use (every call collective over comm):
//   RecordsLayout l;  for (auto s : sizes) l.add(s);
//   RecordsWriter w(comm, "restart.bin", l, RecordsOptions::parse("strategy=aggregated"));
//   w.write(my_records, my_payloads);   // this rank's records, any order
//   w.close();
#pragma once
#include <mpi.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/byteorder.hpp"
#include "parallel/hints.hpp"

namespace anabranch::pio {

class RecordsLayout {
 public:
  // A record of `bytes` payload bytes, after the others.
  void add(std::int64_t bytes);
  // marker_bytes 4 or 8; max_subrecord 0: gfortran's (2147483639 bytes with 4-byte markers,
  // no split with 8-byte ones). marker_bytes 0: raw byte ranges, no markers, never split
  // (arrays at addresses another format chose, such as an HDF5 file's contiguous datasets).
  void set_form(int marker_bytes, ByteOrder order, std::int64_t max_subrecord);
  // The file byte where the first record starts.
  void set_offset(std::int64_t offset);

  std::int64_t count() const { return static_cast<std::int64_t>(sizes_.size()); }
  std::int64_t payload(std::int64_t r) const { return sizes_.at(static_cast<std::size_t>(r)); }
  int marker_bytes() const { return marker_bytes_; }
  ByteOrder order() const { return order_; }
  std::int64_t subrecord() const;  // the most payload bytes of one subrecord
  std::int64_t subrecords(std::int64_t r) const;
  // Record r's bytes in the file, markers included: [first(r), end(r)).
  std::int64_t first(std::int64_t r) const;
  std::int64_t end(std::int64_t r) const { return first(r) + bytes(r); }
  std::int64_t begin() const { return offset_; }
  std::int64_t end() const { return first(count()); }
  std::int64_t bytes(std::int64_t r) const { return payload(r) + 2 * marker_bytes_ * subrecords(r); }
  // Record r's markers in file order (leading, trailing, for each subrecord), in the file's form.
  void markers(std::int64_t r, std::vector<unsigned char>& out) const;
  // A digest of the whole layout (every rank must hold the same).
  std::uint32_t digest() const;

 private:
  std::vector<std::int64_t> sizes_;
  mutable std::vector<std::int64_t> firsts_;  // first(r), made on demand
  int marker_bytes_ = 4;
  ByteOrder order_ = native_byte_order();
  std::int64_t max_subrecord_ = 0;
  std::int64_t offset_ = 0;
};

// The same on every rank.
struct RecordsOptions {
  std::string strategy = "independent";  // writer: any frame-layout strategy; reader: independent|collective|aggregated
  bool keep = false;            // writer: write into the existing file, keeping every other byte
  std::int64_t buffer_bytes = 0;  // 0: the strategy's default
  int writers_per_node = 0;     // aggregated: writers (reading: readers) per node, 0 auto
  Hints hints;
  // "strategy=collective keep=1 buffer_bytes=N writers_per_node=N" (reading:
  // readers_per_node=N); other keys are MPI-IO hints.
  static RecordsOptions parse(const std::string& text, bool reading);
};

class RecordsWriter {
 public:
  // Collective. keep=0: the file is made anew (an older, longer one is cut to nothing first).
  RecordsWriter(MPI_Comm comm, const std::string& path, const RecordsLayout& layout, const RecordsOptions& options = {});
  ~RecordsWriter();
  RecordsWriter(const RecordsWriter&) = delete;
  RecordsWriter& operator=(const RecordsWriter&) = delete;
  // Collective: this rank's n records (0-based), data[i] the payload of records[i].
  void write(std::int64_t n, const std::int64_t* records, const void* const* data);
  // Collective: checks that no record was written twice (keep=0: and that every one was).
  void close();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

class RecordsReader {
 public:
  // Collective: checks that the file holds the layout (its size).
  RecordsReader(MPI_Comm comm, const std::string& path, const RecordsLayout& layout, const RecordsOptions& options = {});
  ~RecordsReader();
  RecordsReader(const RecordsReader&) = delete;
  RecordsReader& operator=(const RecordsReader&) = delete;
  // Collective: this rank's n records into data[i] (payload(records[i]) bytes each); every
  // marker read is checked.
  void read(std::int64_t n, const std::int64_t* records, void* const* data);
  void close();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace anabranch::pio
