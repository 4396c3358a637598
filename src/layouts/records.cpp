// Fortran sequential records over the engine. See records.hpp.
#include "layouts/records.hpp"

#include <algorithm>
#include <climits>
#include <cstring>
#include <unistd.h>

#include "core/crc32.hpp"
#include "core/error.hpp"
#include "core/io.hpp"
#include "io/shared_file.hpp"
#include "io/strategy.hpp"
#include "parallel/mpi_util.hpp"

namespace anabranch::pio {

// ---------------------------------------------------------------------------------------
// The layout

void RecordsLayout::add(std::int64_t bytes) {
  if (bytes < 0) throw UsageError("record " + std::to_string(sizes_.size() + 1) + ": a negative size (" + std::to_string(bytes) + " bytes)");
  sizes_.push_back(bytes);
  firsts_.clear();
}

void RecordsLayout::set_form(int marker_bytes, ByteOrder order, std::int64_t max_subrecord) {
  if (marker_bytes != 0 && marker_bytes != 4 && marker_bytes != 8)
    throw UsageError("record markers are 4 or 8 bytes (0: none), not " + std::to_string(marker_bytes));
  if (max_subrecord < 0 || (marker_bytes == 4 && max_subrecord > INT32_MAX))
    throw UsageError("a subrecord holds 1 to " + std::string(marker_bytes == 4 ? "2147483647" : "2^63-1") + " bytes (or 0: the compiler's), not " +
                     std::to_string(max_subrecord));
  marker_bytes_ = marker_bytes;
  order_ = order;
  max_subrecord_ = max_subrecord;
  firsts_.clear();
}

void RecordsLayout::set_offset(std::int64_t offset) {
  if (offset < 0) throw UsageError("a records layout's offset is a byte of the file, not " + std::to_string(offset));
  offset_ = offset;
  firsts_.clear();
}

std::int64_t RecordsLayout::subrecord() const {
  if (max_subrecord_ > 0 && marker_bytes_ > 0) return max_subrecord_;
  return marker_bytes_ == 4 ? 2147483639 : INT64_MAX;  // gfortran's default (-fmax-subrecord-length)
}

std::int64_t RecordsLayout::subrecords(std::int64_t r) const {
  const std::int64_t n = payload(r), s = subrecord();
  return n == 0 ? 1 : (n - 1) / s + 1;
}

std::int64_t RecordsLayout::first(std::int64_t r) const {
  if (r < 0 || r > count()) throw UsageError("record " + std::to_string(r) + " is not one of the layout's " + std::to_string(count()));
  if (firsts_.size() != sizes_.size() + 1) {
    firsts_.assign(1, offset_);
    for (std::int64_t k = 0; k < count(); ++k) firsts_.push_back(firsts_.back() + bytes(k));
  }
  return firsts_[static_cast<std::size_t>(r)];
}

void RecordsLayout::markers(std::int64_t r, std::vector<unsigned char>& out) const {
  if (marker_bytes_ == 0) return;
  const std::int64_t n = payload(r), s = subrecord(), parts = subrecords(r);
  for (std::int64_t i = 0; i < parts; ++i) {
    const std::int64_t len = std::min(s, n - i * s);
    const std::int64_t lead = i + 1 < parts ? -len : len, trail = i > 0 ? -len : len;
    for (const std::int64_t m : {lead, trail}) {
      unsigned char b[8];
      if (marker_bytes_ == 4) store<std::int32_t>(b, static_cast<std::int32_t>(m), order_);
      else store<std::int64_t>(b, m, order_);
      out.insert(out.end(), b, b + marker_bytes_);
    }
  }
}

std::uint32_t RecordsLayout::digest() const {
  const std::int64_t form[4] = {marker_bytes_, order_ == ByteOrder::Big ? 1 : 0, subrecord(), offset_};
  std::uint32_t c = crc32(0, form, sizeof form);
  return crc32(c, sizes_.data(), sizes_.size() * sizeof(std::int64_t));
}

RecordsOptions RecordsOptions::parse(const std::string& text, bool reading) {
  RecordsOptions o;
  o.hints = parse_options(text, [&](const std::string& k, const std::string& v) {
    if (k == "strategy") {
      if (!writes_frame_layouts(v) || (reading && v == "aggregated-async"))
        throw UsageError("strategy=" + v + ": records are " + (reading ? "read" : "written") + " independent, collective, aggregated" +
                         (reading ? "" : " or aggregated-async"));
      o.strategy = v;
    } else if (k == "keep" && !reading) {
      if (v != "0" && v != "1") throw UsageError("keep=" + v + ": expected 1 or 0");
      o.keep = v == "1";
    } else if (k == "buffer_bytes") {
      o.buffer_bytes = option_number(k, v, 4096);
    } else if (k == (reading ? "readers_per_node" : "writers_per_node")) {
      o.writers_per_node = static_cast<int>(std::min<std::int64_t>(option_number(k, v, 1), INT_MAX));
    } else {
      return false;
    }
    return true;
  });
  return o;
}

namespace {

// The records of one write or read call, as the engine's frame: the records some rank gives
// (or asks for) in this call, end to end; its file segments are the runs of consecutive such
// records, so that no byte of another record is written (a file kept, or records written by
// an earlier call) nor read. Each record is its markers (fixed runs, or when reading, runs of
// the array after the caller's, to be checked) around its payload (a run of the caller's
// array k, one byte a value).
class RecordsFrame final : public FrameLayout {
 public:
  // mine: (record, caller's array), increasing records; used: per record of the layout,
  // whether any rank gives (asks for) it in this call.
  RecordsFrame(const RecordsLayout& l, std::vector<std::pair<std::int64_t, int>> mine, const std::vector<int>& used, bool read_markers)
      : l_(l), mine_(std::move(mine)), read_markers_(read_markers) {
    for (const auto& [r, k] : mine_) l_.markers(r, markers_);
    std::int64_t at = 0;
    for (std::int64_t r = 0; r < l.count(); ++r) {
      if (!used[static_cast<std::size_t>(r)]) continue;
      if (r == 0 || !used[static_cast<std::size_t>(r - 1)]) segments_.push_back({at, l.first(r), 0});
      segments_.back().bytes += l.bytes(r);
      at += l.bytes(r);
    }
    frame_bytes_ = at;
  }
  int value_bytes() const override { return 1; }
  std::int64_t frame_bytes() const override { return frame_bytes_; }
  std::pair<std::int64_t, std::int64_t> locate(std::int64_t, std::int64_t at) const override {
    const auto s = std::upper_bound(segments_.begin(), segments_.end(), at, [](std::int64_t a, const Segment& x) { return a < x.at; }) - 1;
    return {s->offset + (at - s->at), s->at + s->bytes - at};
  }
  void fixed_bytes(std::int64_t, double, std::vector<unsigned char>& out) const override {
    if (read_markers_) out.clear();
    else out = markers_;
  }
  void for_each_run(const std::function<void(const Run&)>& f) const override {
    const int m = l_.marker_bytes();
    const int marker_array = read_markers_ ? static_cast<int>(mine_.size()) : Run::kFixed;
    std::int64_t p = 0;  // in markers_
    for (const auto& [r, k] : mine_) {
      const std::int64_t n = l_.payload(r), s = l_.subrecord(), parts = l_.subrecords(r);
      const auto seg = std::upper_bound(segments_.begin(), segments_.end(), l_.first(r),
                                        [](std::int64_t a, const Segment& x) { return a < x.offset; }) - 1;
      std::int64_t at = seg->at + (l_.first(r) - seg->offset);  // the record's first byte in the frame
      for (std::int64_t i = 0; i < parts; ++i) {
        const std::int64_t len = std::min(s, n - i * s);
        if (m > 0) f({at, m, marker_array, p});
        at += m;
        p += m;
        if (len > 0) f({at, len, k, i * s});
        at += len;
        if (m > 0) f({at, m, marker_array, p});
        at += m;
        p += m;
      }
    }
  }
  const std::vector<unsigned char>& markers() const { return markers_; }

 private:
  struct Segment {
    std::int64_t at, offset, bytes;  // frame byte, file byte, length
  };
  const RecordsLayout& l_;
  std::vector<std::pair<std::int64_t, int>> mine_;
  bool read_markers_;
  std::vector<unsigned char> markers_;
  std::vector<Segment> segments_;
  std::int64_t frame_bytes_ = 0;
};

// Per record of the layout, how many ranks give (ask for) it in this call: collective.
std::vector<int> used_by_all(MPI_Comm comm, const RecordsLayout& l, const std::vector<std::pair<std::int64_t, int>>& mine) {
  std::vector<int> used(static_cast<std::size_t>(l.count()), 0);
  for (const auto& [r, k] : mine) used[static_cast<std::size_t>(r)] = 1;
  if (!used.empty()) MPI_Allreduce(MPI_IN_PLACE, used.data(), static_cast<int>(used.size()), MPI_INT, MPI_SUM, comm);
  return used;
}

class Payloads final : public ValueEncoder {
 public:
  explicit Payloads(const void* const* data) : data_(data) {}
  void encode(int array, std::int64_t index, std::int64_t count, unsigned char* dst) const override {
    std::memcpy(dst, static_cast<const unsigned char*>(data_[array]) + index, static_cast<std::size_t>(count));
  }

 private:
  const void* const* data_;
};

class PayloadsIn final : public ValueDecoder {
 public:
  PayloadsIn(void* const* data, int n, std::vector<unsigned char>& markers) : data_(data), n_(n), markers_(markers) {}
  void decode(int array, std::int64_t index, std::int64_t count, const unsigned char* src) const override {
    unsigned char* dst = array == n_ ? markers_.data() : static_cast<unsigned char*>(data_[array]);
    std::memcpy(dst + index, src, static_cast<std::size_t>(count));
  }

 private:
  void* const* data_;
  int n_;
  std::vector<unsigned char>& markers_;
};

// This rank's records of one call, checked: (record, caller's index) by record.
std::vector<std::pair<std::int64_t, int>> mine_of(const RecordsLayout& l, std::int64_t n, const std::int64_t* records, const void* data,
                                                  const std::string& path) {
  if (n < 0 || n > INT_MAX) throw UsageError(path + ": " + std::to_string(n) + " records in one call");
  if (n > 0 && (!records || !data)) throw UsageError(path + ": the records' list or their data is missing");
  std::vector<std::pair<std::int64_t, int>> mine;
  for (std::int64_t i = 0; i < n; ++i) {
    if (records[i] < 0 || records[i] >= l.count())
      throw UsageError(path + ": record " + std::to_string(records[i]) + " is not one of the layout's " + std::to_string(l.count()) + " (0-based)");
    mine.emplace_back(records[i], static_cast<int>(i));
  }
  std::sort(mine.begin(), mine.end());
  for (std::size_t i = 1; i < mine.size(); ++i)
    if (mine[i].first == mine[i - 1].first) throw UsageError(path + ": record " + std::to_string(mine[i].first) + " given twice in one call");
  return mine;
}

// Every rank the same layout.
void check_same_layout(MPI_Comm comm, const RecordsLayout& l, const std::string& path) {
  long long d[2] = {static_cast<long long>(l.digest()), 0};
  d[1] = -d[0];
  MPI_Allreduce(MPI_IN_PLACE, d, 2, MPI_LONG_LONG, MPI_MAX, comm);
  collective(comm, [&] {
    if (d[0] != -d[1]) throw UsageError(path + ": the ranks hold different records layouts (sizes, form or offset differ)");
  });
}

}  // namespace

// ---------------------------------------------------------------------------------------
// Writer

struct RecordsWriter::Impl {
  MPI_Comm comm = MPI_COMM_NULL;
  int rank = 0;
  std::string path;
  RecordsLayout layout;
  RecordsOptions options;
  MPI_Info info = MPI_INFO_NULL;
  std::vector<int> written;  // per record: this rank wrote it
  bool closed = false;

  StrategySetup setup(const FrameLayout& frame) const {
    StrategySetup s;
    s.comm = comm;
    s.path = path;
    s.final_path = path;
    s.frame = &frame;
    s.truncate = false;
    s.info = info;
    s.writers_per_node = options.writers_per_node;
    const int mib = options.strategy == "independent" ? 1 : options.strategy == "collective" ? 8 : 4;
    s.buffer_bytes = options.buffer_bytes > 0 ? options.buffer_bytes : std::int64_t{mib} << 20;
    s.hints = options.hints;
    return s;
  }
  // After a failure every rank saw: a file made anew is removed (it is not the records).
  void abandon() {
    closed = true;
    if (!options.keep && rank == 0) ::unlink(path.c_str());
  }
};

RecordsWriter::RecordsWriter(MPI_Comm comm, const std::string& path, const RecordsLayout& layout, const RecordsOptions& options)
    : impl_(std::make_unique<Impl>()) {
  Impl& m = *impl_;
  m.comm = comm;
  MPI_Comm_rank(comm, &m.rank);
  m.path = path;
  m.layout = layout;
  m.options = options;
  m.written.assign(static_cast<std::size_t>(layout.count()), 0);
  check_same_layout(comm, layout, path);
  collective(comm, [&] {
    if (m.rank == 0) refuse_open_input(path);
  });
  Hints hints = Hints::from_environment();
  hints.merge(options.hints);
  m.options.hints = hints;
  m.info = hints.to_info();
  if (!options.keep) {  // made anew: created, an older file cut to nothing
    const RecordsFrame none(layout, {}, std::vector<int>(static_cast<std::size_t>(layout.count()), 0), false);
    StrategySetup s = m.setup(none);
    s.truncate = true;
    MPI_File fh = open_shared_file(comm, s);
    close_shared_file(comm, fh);
  }
}

RecordsWriter::~RecordsWriter() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized && impl_->info != MPI_INFO_NULL) MPI_Info_free(&impl_->info);
}

void RecordsWriter::write(std::int64_t n, const std::int64_t* records, const void* const* data) {
  Impl& m = *impl_;
  std::vector<std::pair<std::int64_t, int>> mine;
  collective(m.comm, [&] {
    if (m.closed) throw UsageError("write after close: " + m.path);
    mine = mine_of(m.layout, n, records, data, m.path);
  });
  std::int64_t end = 0;
  for (const auto& [r, k] : mine) {
    m.written[static_cast<std::size_t>(r)] += 1;
    end = std::max(end, m.layout.end(r));
  }
  const std::vector<int> used = used_by_all(m.comm, m.layout, mine);
  const RecordsFrame frame(m.layout, std::move(mine), used, false);
  const Payloads payloads(data);
  std::unique_ptr<Strategy> strategy;
  try {
    strategy = make_strategy(m.options.strategy);
    strategy->open(m.setup(frame));
    strategy->write({0, 0.0, &payloads, nullptr});
    strategy->close();
    // MPI-IO may report a failed write on one rank only, or not at all: every byte written
    // must be in the file.
    long long last = end;
    MPI_Allreduce(MPI_IN_PLACE, &last, 1, MPI_LONG_LONG, MPI_MAX, m.comm);
    collective(m.comm, [&] {
      if (m.rank != 0) return;
      const std::int64_t bytes = file_size(m.path);
      if (bytes < last)
        throw IoError("cannot write " + m.path + ": its records end at byte " + std::to_string(last) + " but the file holds " +
                      std::to_string(bytes) + " (" + write_failure_reason(m.path, last) + ")");
    });
  } catch (...) {
    if (strategy) try {
        strategy->abandon();
      } catch (...) {
      }
    m.abandon();
    throw;
  }
}

void RecordsWriter::close() {
  Impl& m = *impl_;
  if (m.closed) return;
  m.closed = true;
  std::vector<int> count = m.written;
  if (!count.empty()) MPI_Allreduce(MPI_IN_PLACE, count.data(), static_cast<int>(count.size()), MPI_INT, MPI_SUM, m.comm);
  try {
    collective(m.comm, [&] {
      for (std::size_t r = 0; r < count.size(); ++r) {
        if (count[r] > 1)
          throw UsageError(m.path + ": record " + std::to_string(r) + " (at byte " + std::to_string(m.layout.first(static_cast<std::int64_t>(r))) +
                           ") was written " + std::to_string(count[r]) + " times");
        if (count[r] == 0 && !m.options.keep)
          throw UsageError(m.path + ": record " + std::to_string(r) + " (at byte " + std::to_string(m.layout.first(static_cast<std::int64_t>(r))) +
                           ") was not written (every record of a file made anew is written by one rank; keep=1 writes some)");
      }
    });
  } catch (...) {
    m.closed = false;
    m.abandon();
    throw;
  }
}

// ---------------------------------------------------------------------------------------
// Reader

struct RecordsReader::Impl {
  MPI_Comm comm = MPI_COMM_NULL;
  std::string path;
  RecordsLayout layout;
  RecordsOptions options;
  MPI_File fh = MPI_FILE_NULL;
  std::unique_ptr<FileSource> input;  // the file counts as an input: no output may replace it
};

RecordsReader::RecordsReader(MPI_Comm comm, const std::string& path, const RecordsLayout& layout, const RecordsOptions& options)
    : impl_(std::make_unique<Impl>()) {
  Impl& m = *impl_;
  m.comm = comm;
  m.path = path;
  m.layout = layout;
  m.options = options;
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  check_same_layout(comm, layout, path);
  collective(comm, [&] {
    m.input = std::make_unique<FileSource>(path);
    if (rank != 0) return;
    const std::int64_t size = m.input->size();
    if (size >= layout.end()) return;
    std::int64_t r = 0;
    while (layout.end(r) <= size) ++r;
    throw FormatError(path + ": record " + std::to_string(r) + " ends at byte " + std::to_string(layout.end(r)) + " but the file ends at byte " +
                      std::to_string(size) + " (the layout's " + std::to_string(layout.count()) + " records need " +
                      std::to_string(layout.end()) + ")");
  });
  m.fh = open_input_file(comm, path, options.hints);
}

RecordsReader::~RecordsReader() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized && impl_->fh != MPI_FILE_NULL) MPI_File_close(&impl_->fh);
}

void RecordsReader::read(std::int64_t n, const std::int64_t* records, void* const* data) {
  Impl& m = *impl_;
  std::vector<std::pair<std::int64_t, int>> mine;
  collective(m.comm, [&] {
    if (m.fh == MPI_FILE_NULL) throw UsageError("read after close: " + m.path);
    mine = mine_of(m.layout, n, records, data, m.path);
  });
  const RecordsFrame frame(m.layout, mine, used_by_all(m.comm, m.layout, mine), true);
  std::vector<unsigned char> got(frame.markers().size());
  const PayloadsIn payloads(data, static_cast<int>(n), got);
  RunReader reader(m.comm, m.fh, m.path, frame, RunReading::of(m.options.strategy, m.options.buffer_bytes, m.options.writers_per_node));
  reader.read(0, payloads);
  collective(m.comm, [&] {
    if (got == frame.markers()) return;
    // The first record whose markers differ, named with the marker's byte and both lengths.
    const int mb = m.layout.marker_bytes();
    std::size_t p = 0;
    for (const auto& [r, k] : mine) {
      const std::int64_t parts = m.layout.subrecords(r);
      std::int64_t at = m.layout.first(r);
      for (std::int64_t i = 0; i < parts; ++i) {
        const std::int64_t len = std::min(m.layout.subrecord(), m.layout.payload(r) - i * m.layout.subrecord());
        for (int side = 0; side < 2; ++side, p += static_cast<std::size_t>(mb)) {
          const std::int64_t where = at + side * (mb + len);
          if (std::memcmp(got.data() + p, frame.markers().data() + p, static_cast<std::size_t>(mb)) == 0) continue;
          const std::int64_t said = mb == 4 ? load<std::int32_t>(got.data() + p, m.layout.order()) : load<std::int64_t>(got.data() + p, m.layout.order());
          const std::int64_t want = mb == 4 ? load<std::int32_t>(frame.markers().data() + p, m.layout.order())
                                            : load<std::int64_t>(frame.markers().data() + p, m.layout.order());
          const ByteOrder other = m.layout.order() == ByteOrder::Big ? ByteOrder::Little : ByteOrder::Big;
          const std::int64_t swapped = mb == 4 ? load<std::int32_t>(got.data() + p, other) : load<std::int64_t>(got.data() + p, other);
          throw FormatError(m.path + ": record " + std::to_string(r) + ", its " + (side == 0 ? "leading" : "trailing") + " marker at byte " +
                            std::to_string(where) + " says " + std::to_string(said) + ", the layout " + std::to_string(want) +
                            (swapped == want ? std::string(" (the file is ") + to_string(other) + "-endian)"
                                             : " (a different record layout, byte order or marker size)"));
        }
        at += 2 * mb + len;
      }
    }
  });
}

void RecordsReader::close() {
  Impl& m = *impl_;
  if (m.fh == MPI_FILE_NULL) return;
  const int rc = MPI_File_close(&m.fh);
  collective(m.comm, [&] { check_mpi(rc, "MPI_File_close"); });
  m.input.reset();
}

}  // namespace anabranch::pio
