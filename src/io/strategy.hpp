// The I/O engine: parallel write strategies, one interface, one file per strategy, one
// registry. Every strategy puts the same bytes at the same offsets: the files are
// byte-identical. Formats say what bytes mean; a FrameLayout says where each rank's values
// of a frame go (runs); strategies say how P ranks get them to disk. The same strategies
// write every layout: SERAFIN frames of owned nodes (layouts/writer.cpp), multi-block frames of
// pieces with halos (layouts/block_io.cpp), Fortran records (layouts/records.cpp), and the
// values of a VTKHDF frame in its HDF5 chunks (io/strategy_hdf5.cpp).
#pragma once
#include <mpi.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/byteorder.hpp"
#include "core/compression.hpp"
#include "formats/serafin.hpp"
#include "parallel/hints.hpp"

namespace anabranch::pio {

// A run of one frame: `count` consecutive values of one of the caller's arrays that lie
// one after another in the file. Fixed runs carry bytes the layout makes for each frame
// (time records, record markers).
struct Run {
  static constexpr int kFixed = -1;
  std::int64_t at = 0;     // first byte, counted from the frame's first (the same in every frame)
  std::int64_t count = 0;  // values (fixed runs: bytes)
  int array = 0;           // the caller's array (kFixed: the layout's fixed bytes)
  std::int64_t index = 0;  // first value in that array (fixed runs: first byte)
};
inline std::int64_t run_bytes(const Run& r, int value_bytes) { return r.array == Run::kFixed ? r.count : r.count * value_bytes; }

// Where this rank's bytes of a frame go. A frame is a sequence of bytes (its file segments
// end to end: one segment for SERAFIN and raw blocks, one per dataset for HDF5 blocks);
// every byte of it is in exactly one rank's runs.
class FrameLayout {
 public:
  virtual ~FrameLayout() = default;
  virtual int value_bytes() const = 0;
  virtual std::int64_t frame_bytes() const = 0;
  // This rank's runs, produced on demand (never a list per value): no two overlap, none
  // crosses a segment's end; increasing `at` is fastest.
  virtual void for_each_run(const std::function<void(const Run&)>& f) const = 0;
  // Frame byte `at` of frame `frame`: its offset in the file, and the bytes left in its segment.
  virtual std::pair<std::int64_t, std::int64_t> locate(std::int64_t frame, std::int64_t at) const = 0;
  // The frame as this many equal parts alike, each of whole values (the variables of a
  // SERAFIN frame, an HDF5 block file's datasets): aggregated readers then each read the
  // same share of every part, so that a rank's share of the numbering comes from few
  // readers. 1: the frame is cut as it is.
  virtual std::int64_t parts() const { return 1; }
  // This rank's bytes of a frame.
  std::int64_t own_bytes() const {
    std::int64_t n = 0;
    for_each_run([&](const Run& r) { n += run_bytes(r, value_bytes()); });
    return n;
  }
  // The bytes this rank's fixed runs take from, for one frame.
  virtual void fixed_bytes(std::int64_t /*frame*/, double /*time*/, std::vector<unsigned char>& out) const { out.clear(); }
};

// A layout's frame whose bytes lie in stretches of `stretch` bytes, each at an address of its
// own given for each frame (the chunks of an HDF5 dataset): the layout's runs cut where the
// stretches end.
class StretchedFrame final : public FrameLayout {
 public:
  StretchedFrame(const FrameLayout& frame, std::int64_t stretch) : f_(frame), stretch_(stretch) {}
  // The frame about to be written or read, and its stretches' file offsets, in frame order.
  void set(std::int64_t frame, std::vector<std::int64_t> at) {
    frame_ = frame;
    at_ = std::move(at);
  }
  int value_bytes() const override { return f_.value_bytes(); }
  std::int64_t frame_bytes() const override { return f_.frame_bytes(); }
  std::int64_t parts() const override { return f_.parts(); }
  void for_each_run(const std::function<void(const Run&)>& f) const override;
  std::pair<std::int64_t, std::int64_t> locate(std::int64_t frame, std::int64_t at) const override;

 private:
  const FrameLayout& f_;
  std::int64_t stretch_, frame_ = -1;
  std::vector<std::int64_t> at_;
};

// The caller's values, encoded in the file's precision and byte order straight into a
// strategy's buffer (one pass from the caller's arrays, no intermediate copy).
class ValueEncoder {
 public:
  virtual ~ValueEncoder() = default;
  // Values [index, index + count) of array `array`, encoded, to dst.
  virtual void encode(int array, std::int64_t index, std::int64_t count, unsigned char* dst) const = 0;
};

// Bytes of run r.
// Bytes [from, to) of run r (counted from its first byte), encoded to dst: fixed bytes copied,
// values encoded (a value cut by from or to through a scratch copy).
void encode_run(const Run& r, std::int64_t from, std::int64_t to, int value_bytes, const ValueEncoder& values,
                const unsigned char* fixed, unsigned char* dst);

// The reading mirror: the caller's arrays filled from the file's form.
class ValueDecoder {
 public:
  virtual ~ValueDecoder() = default;
  // count values at src (the file's form), decoded into values [index, index + count) of
  // array `array`.
  virtual void decode(int array, std::int64_t index, std::int64_t count, const unsigned char* src) const = 0;
};

// Where a rank's read time went (seconds): the file's read calls, handing values out
// (decoding, messages), and waiting for other ranks.
struct ReadTimes {
  double read = 0, exchange = 0, wait = 0;
};

// Adds the time since t to `phase`; returns now.
inline double lap(double t, double& phase) {
  const double now = MPI_Wtime();
  phase += now - t;
  return now;
}

// How a RunReader reads, the same on every rank.
struct RunReading {
  // independent: runs that follow one another in the file gathered into one
  // MPI_File_read_at of at most buffer_bytes. collective: rounds of at most buffer_bytes a
  // rank (as many on every rank), each one indexed view and one MPI_File_read_all.
  // aggregated: the writer's mirror (io/read_aggregated.cpp): a few readers per node each
  // read a contiguous stretch of the frame in rounds of buffer_bytes into their node's
  // shared memory, where every rank of the node decodes its values; values for other
  // nodes travel by MPI.
  enum class Mode { Independent, Collective, Aggregated } mode = Mode::Independent;
  std::int64_t buffer_bytes = 0;  // 0: independent 4 MiB, collective 16 MiB, aggregated 4 MiB (16 when values cross nodes)
  int readers_per_node = 0;       // aggregated: 0 auto (parallel/topology.hpp)
  bool shared_memory = true;      // aggregated: false sends every value by MPI
  // For a strategy named "independent", "collective", "aggregated" (also "aggregated-async":
  // a writer's name).
  static RunReading of(const std::string& strategy, std::int64_t buffer_bytes, int readers_per_node, bool shared_memory = true);
};

// The collective strategies' plan (the writer's and RunReader's): a rank's runs of a frame
// in file order (absolute offsets: a frame's segments need not follow one another), cut
// into pieces of at most `most` bytes (a multiple of the value size), in rounds of at most
// `most` bytes, each one indexed file view and one MPI_File_write_all or read_all.
struct ViewRounds {
  struct Piece {
    std::int64_t offset;     // in the file
    Run run;
    std::int64_t from, to;  // bytes [from, to) of the run
  };
  std::vector<Piece> pieces;        // kept from frame to frame (their pages stay mapped)
  std::vector<std::size_t> starts;  // round k: pieces [starts[k], starts[k + 1])
  // values_only: the fixed runs left out (reading).
  void plan(const FrameLayout& layout, std::int64_t frame, std::int64_t most, bool values_only);
  long long rounds() const { return starts.empty() ? 0 : static_cast<long long>(starts.size()) - 1; }
  std::pair<std::size_t, std::size_t> round(long long k) const;  // [first, end) of round k (empty past the last)
  // Collective: round k between buf and the file through the round's file view, one
  // MPI_File_write_all (write) or MPI_File_read_all. A rank whose error is set, or whose
  // pieces overlap or fall before the file (MPI-IO may refuse such a view on one rank
  // alone, inside the collective MPI_File_set_view, and leave the others waiting there),
  // takes part with an empty view, the error kept. Returns the transfer's code; bytes: what
  // it moved at most.
  int transfer(MPI_File fh, long long k, bool write, unsigned char* buf, MPI_Info info, const std::string& path, std::int64_t& bytes,
               MPI_Status& st, std::exception_ptr& error) const;
};

// The caller's arrays (T: float or double) to values of `real_bytes` (4 or 8) bytes, and
// back; bytes reversed when swap. Array k is arrays[k].
template <class T>
class ArrayEncoder final : public ValueEncoder {
 public:
  ArrayEncoder(const T* const* arrays, int real_bytes, bool swap = false) : arrays_(arrays), rs_(real_bytes), swap_(swap) {}
  void encode(int array, std::int64_t index, std::int64_t count, unsigned char* dst) const override {
    if (rs_ == 8) encode_words<double>(arrays_[array] + index, static_cast<std::size_t>(count), swap_, dst);
    else encode_words<float>(arrays_[array] + index, static_cast<std::size_t>(count), swap_, dst);
  }

 private:
  const T* const* arrays_;
  int rs_;
  bool swap_;
};
template <class T>
class ArrayDecoder final : public ValueDecoder {
 public:
  ArrayDecoder(T* const* arrays, int real_bytes, bool swap = false) : arrays_(arrays), rs_(real_bytes), swap_(swap) {}
  void decode(int array, std::int64_t index, std::int64_t count, const unsigned char* src) const override {
    if (rs_ == 8) decode_words<double>(src, static_cast<std::size_t>(count), swap_, arrays_[array] + index);
    else decode_words<float>(src, static_cast<std::size_t>(count), swap_, arrays_[array] + index);
  }

 private:
  T* const* arrays_;
  int rs_;
  bool swap_;
};

// Fails (FormatError naming path, frame and byte) when a read of `asked` bytes at `offset`
// got fewer; an MpiError when the call failed.
void check_read(int rc, MPI_Status& st, std::int64_t asked, const std::string& path, std::int64_t frame, std::int64_t offset,
                const char* call);

// Reads this rank's runs of a layout's frames (fixed runs skipped) into the caller's arrays,
// collective over comm (fh's ranks). Its buffers and plan stay from frame to frame.
class RunReader {
 public:
  RunReader(MPI_Comm comm, MPI_File fh, std::string path, const FrameLayout& layout, const RunReading& how);
  ~RunReader();
  RunReader(const RunReader&) = delete;
  RunReader& operator=(const RunReader&) = delete;
  // Collective: frame `frame`. FormatError naming the file, the frame and the byte where the
  // file ends too early, on every rank.
  void read(std::int64_t frame, const ValueDecoder& values);
  // Collective: the layout's runs changed (aggregated plans them once otherwise).
  void relayout();
  ReadTimes times() const { return times_; }

 private:
  void read_independent(std::int64_t frame, const ValueDecoder& values);
  void read_collective(std::int64_t frame, const ValueDecoder& values);
  void read_aggregated(std::int64_t frame, const ValueDecoder& values);  // io/read_aggregated.cpp
  struct Aggregated;

  MPI_Comm comm_;
  MPI_File fh_;
  std::string path_;
  const FrameLayout& layout_;
  RunReading how_;
  std::int64_t most_ = 0;  // independent, collective: the buffer's bytes
  std::vector<unsigned char> buf_;
  std::vector<std::pair<std::int64_t, Run>> pending_;  // independent: (file offset, run)
  ViewRounds rounds_;                                  // collective
  std::unique_ptr<Aggregated> agg_;
  ReadTimes times_;
};

// What a strategy is given at open.
struct StrategySetup {
  MPI_Comm comm = MPI_COMM_WORLD;
  std::string path;                 // the shared file (file-per-process: the base name)
  std::string final_path;           // its name after close (differs when written atomically)
  const FrameLayout* frame = nullptr;  // where this rank's values go (the byte strategies)
  bool truncate = true;             // false: the file exists already (made by HDF5): kept as it is
  // SERAFIN's and VTKHDF's own (hdf5, file-per-process).
  serafin::Header header;           // global header
  serafin::Layout layout;           // byte layout of the shared file
  const std::vector<std::int64_t>* owned = nullptr;  // nodes this rank writes, increasing, 0-based
  MPI_Info info = MPI_INFO_NULL;    // MPI-IO hints
  int writers_per_node = 0;         // aggregated strategies and hdf5; 0: auto
  bool shared_memory = true;        // aggregated: ranks copy into their node's writer buffers
  std::int64_t buffer_bytes = std::int64_t{16} << 20;  // aggregation buffer per writer
  // Writes the global header (rank 0 only; other ranks get an empty function).
  std::function<void(ByteSink&)> write_header;
  // When the mesh comes from a geometry file, on every rank: copies share `share` of
  // `shares` of the header's mesh records into the file (write_at: offset, bytes, count),
  // which write_header then leaves out. The ranks opening the file copy one share each.
  std::function<void(int share, int shares, const std::function<void(std::int64_t, const void*, std::size_t)>& write_at)>
      copy_mesh;
  // file-per-process: this rank's own SERAFIN file (header + local mesh); the frames
  // are its local values, in local order.
  const serafin::Header* local_header = nullptr;
  const Mesh* local_mesh = nullptr;
  // Formats that store the mesh arrays rather than SERAFIN bytes (hdf5): rank 0's global
  // mesh (rank 0 only), or, on every rank, the SERAFIN file to read it from (each writer
  // writes a share).
  const Mesh* mesh = nullptr;
  std::string geometry;
  // The hints as given (for provenance and stripe alignment).
  Hints hints;
  bool file_per_step = false;  // hdf5: one file per frame
  bool flush_frames = false;   // hdf5: flush after every frame
  std::int64_t chunk_bytes = 0;  // hdf5: the most bytes of a chunk (0: HDF5's limit)
  Compression compress;          // hdf5: the frames' values compressed (core/compression.hpp)
  std::map<std::string, std::string> provenance;  // extra facts for self-describing formats
  bool atomic = false;         // files appear under their names only when complete
  std::int64_t frames = 0;     // tecplot: the frames the header has room for (0: one; more cost a move at close)
};

// One frame.
struct EncodedFrame {
  std::int64_t index = 0;  // frame number (0-based)
  double time = 0;
  // The caller's values: the runs' arrays (the SERAFIN and VTKHDF writers: array v is
  // variable v, index i the i-th owned node).
  const ValueEncoder* encoder = nullptr;
  // file-per-process: all local values, variable after variable, encoded.
  const std::vector<unsigned char>* local_values = nullptr;
};

// Where a rank's time went since open (seconds): encoding its values into buffers,
// exchanging them (MPI messages and placing what arrived), waiting (for other ranks at
// barriers and collective calls), the file's write calls, and close (flush, completion).
struct PhaseTimes {
  double encode = 0, exchange = 0, wait = 0, write = 0, close = 0;
};

class Strategy {
 public:
  virtual ~Strategy() = default;
  virtual const char* name() const = 0;
  // Collective: creates the file and writes the header once.
  virtual void open(const StrategySetup& setup) = 0;
  // Collective: puts one frame into the file. May return before the bytes are on disk
  // (aggregated-async); the frame's buffers must then stay untouched until wait().
  virtual void write(const EncodedFrame& frame) = 0;
  // Collective: completes pending writes.
  virtual void wait() {}
  // This rank's time per phase since open (zeros where a strategy does not measure).
  virtual PhaseTimes phases() const { return {}; }
  // Collective: completes, flushes and closes.
  virtual void close() = 0;
  // Collective, after a failure every rank saw (full disk): lets the file go without
  // completing it (pending writes, file handles), errors ignored, so that its space returns
  // once its name is removed. The destructor alone is not collective.
  virtual void abandon() {}
  // true: the file is SERAFIN (frames encoded in the header's byte order, SERAFIN's record
  // limits apply); false: another format (HDF5), frames encoded in native byte order.
  virtual bool serafin_file() const { return true; }
  // false: the strategy needs EncodedFrame::local_values (file-per-process), not the encoder.
  virtual bool encodes_owned() const { return true; }
  // true: everything goes to the one file setup.path (the writer may rename it at close).
  virtual bool one_file() const { return true; }
  // true: the file is whole only once closed (cgns: its tree comes last): the writer makes it
  // under a temporary name, renamed at close.
  virtual bool written_at_close() const { return false; }
  // The hints the MPI-IO library holds for the open shared file (MPI_File_get_info), on
  // ranks that have it open; empty elsewhere and for strategies without an MPI file.
  virtual std::map<std::string, std::string> file_hints() const { return {}; }
  // Files this strategy creates (1 for a shared file, P for file-per-process).
  virtual int files_created(int nranks) const { return nranks > 0 ? 1 : 0; }
};

// The registry: every strategy anabranch knows, compiled in or not.
struct StrategyInfo {
  std::string name;
  std::string description;
  bool available;             // false: compiled out (make() throws, saying why)
  std::string unavailable_reason;
};
const std::vector<StrategyInfo>& strategies();
std::unique_ptr<Strategy> make_strategy(const std::string& name);

// The byte strategies' registry entries (the layouts' writers refuse the others).
bool writes_frame_layouts(const std::string& strategy);

// A ByteSink over an MPI file (used by rank 0 to write the header).
class MpiFileSink final : public ByteSink {
 public:
  // path: the file's name in error messages.
  MpiFileSink(MPI_File fh, std::string path, std::int64_t offset = 0, std::size_t buffer_bytes = 8u << 20);
  ~MpiFileSink() override;
  void write(const void* data, std::size_t n) override;
  std::int64_t position() const override { return offset_ + static_cast<std::int64_t>(used_); }
  void flush();

 private:
  MPI_File fh_;
  std::string path_;
  std::int64_t offset_;
  std::vector<unsigned char> buffer_;
  std::size_t used_ = 0;
};


}  // namespace anabranch::pio
