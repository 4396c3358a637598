// SERAFIN / SELAFIN, TELEMAC's mesh and result format.
// Specification: docs/formats/serafin.md (records, IPARAM, precision and byte-order detection).
//
// Every record is framed by Fortran's 4-byte length markers. Integers are 4 bytes, reals
// 4 (single) or 8 (double) bytes. The reader detects byte order from the first marker and
// precision from the X record, never from the title. All offsets are 64-bit.
#pragma once
#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/byteorder.hpp"
#include "core/io.hpp"
#include "grid/mesh.hpp"

namespace anabranch::serafin {

// A record length marker is a signed 32-bit integer.
constexpr std::int64_t kMaxRecordBytes = 2147483647;

struct Header {
  std::string title;                      // 80 bytes as stored; the last 8 name the precision
  std::vector<Variable> variables;        // NBV1 names and units
  std::int32_t nbv2 = 0;                  // NBV2, always 0
  std::array<std::int32_t, 10> iparam{};  // IPARAM(1..10) at [0..9]
  std::optional<std::array<std::int32_t, 6>> date;  // year month day hour minute second
  std::int64_t nelem = 0;                 // NELEM
  std::int64_t npoin = 0;                 // NPOIN
  int ndp = 0;                            // NDP
  std::int32_t sizes4 = 1;                // the fourth integer of the sizes record
  Precision precision = Precision::Single;
  ByteOrder byte_order = ByteOrder::Big;

  int nvar() const { return static_cast<int>(variables.size()); }
  // NPLAN = IPARAM(7); 1 for a 2D mesh.
  int nplan() const { return iparam[6] > 1 ? iparam[6] : 1; }
  // Sets the title: text (cut or blank-padded to 72 characters) plus the precision suffix.
  void set_title(const std::string& text);
  // The title with the last 8 characters naming `precision` when they would otherwise
  // mislead readers that trust the suffix (a final 'D' on single, none on double).
  std::string title_for_output() const;
  // Copies counts, NPLAN from a mesh.
  void set_mesh_sizes(const Mesh& mesh);
};

// The header's own facts (title, names and units, IPARAM, date, the sizes record's fourth
// integer, byte order) as JSON text, its texts in hexadecimal (SERAFIN's are bytes), for
// formats that carry a SERAFIN header along (CGNS and Tecplot mesh results); and back into h
// (the keys present; counts and precision are the carrier's).
std::string header_facts(const Header& h);
void read_header_facts(const std::string& json, Header& h);

// Where records and frames lie in the file.
struct Layout {
  std::int64_t header_bytes = 0;  // offset of the first frame
  std::int64_t frame_bytes = 0;   // size of one frame (time + NBV1 value records)
  std::int64_t npoin = 0;
  int real_bytes = 4;
  int nvar = 0;

  static Layout of(const Header& h);
  std::int64_t frame_offset(std::int64_t frame) const { return header_bytes + frame * frame_bytes; }
  // Offset of the first value (after the length marker) of variable `var` in `frame`.
  std::int64_t values_offset(std::int64_t frame, int var) const {
    return frame_offset(frame) + 8 + real_bytes + var * (8 + npoin * real_bytes) + 4;
  }
};

enum class Integrity { Ok, TornFrame, StrayByte };

// The state of a file's tail after its whole frames.
struct IntegrityReport {
  Integrity status = Integrity::Ok;
  std::int64_t trailing_bytes = 0;
  std::string message;  // empty when Ok
};

const char* to_string(Integrity i);

// True when path starts as a SERAFIN file does: the 80-byte title record (its two length
// markers, either byte order). Reads 88 bytes.
bool looks_like_serafin(const std::string& path);

class Reader {
 public:
  // Opens and checks the header records; reads no mesh array and no frame.
  explicit Reader(const std::string& path);
  explicit Reader(std::shared_ptr<const ByteSource> source);

  const Header& header() const { return header_; }
  const Layout& layout() const { return layout_; }
  const std::string& name() const { return source_->name(); }
  std::int64_t file_bytes() const { return source_->size(); }
  const ByteSource& source() const { return *source_; }
  // Offsets of the length markers of the mesh records.
  std::int64_t ikle_offset() const { return ikle_at_; }
  std::int64_t ipobo_offset() const { return ipobo_at_; }
  std::int64_t x_offset() const { return x_at_; }
  std::int64_t y_offset() const { return y_at_; }

  // Whole frames in the file; a torn last frame or a stray trailing byte is not counted.
  std::int64_t frame_count() const { return frames_; }
  const IntegrityReport& integrity() const { return integrity_; }

  // Mesh arrays. IKLE entries are checked to lie in 1..NPOIN.
  std::vector<std::int32_t> read_ikle() const;
  std::vector<std::int32_t> read_ipobo() const;
  std::vector<double> read_x() const;
  std::vector<double> read_y() const;
  // X or Y in the file's own precision.
  Coordinates read_coordinates(bool y) const;
  // Pieces, for a writer that streams the mesh: IKLE rows [first, first + count) (count *
  // NDP entries, checked as read_ikle checks them), IPOBO entries and X or Y values of
  // nodes [first, first + count).
  void read_ikle_rows(std::int64_t first, std::int64_t count, std::int32_t* out) const;
  void read_ipobo(std::int64_t first, std::int64_t count, std::int32_t* out) const;
  void read_coordinates(bool y, std::int64_t first, std::int64_t count, double* out) const;
  Mesh read_mesh() const;

  double read_time(std::int64_t frame) const;
  std::vector<double> read_times() const;
  // Values of one variable of one frame (T = float or double), converted to native order.
  template <class T>
  void read_values(std::int64_t frame, int var, T* out) const {
    read_values(frame, var, 0, header_.npoin, out);
  }
  // Values of nodes [first, first + count) only.
  template <class T>
  void read_values(std::int64_t frame, int var, std::int64_t first, std::int64_t count, T* out) const;
  // Values of nodes [first, first + count) of one variable of one frame as stored: the
  // file's precision and byte order, count * real_bytes bytes (the opening record marker is
  // checked with the first node, the closing one with the last).
  void read_encoded(std::int64_t frame, int var, std::int64_t first, std::int64_t count, void* out) const;
  // The length markers around variable var's record of frame, checked (two small reads):
  // for readers that take the values through another path.
  void check_markers(std::int64_t frame, int var) const;
  // A whole frame as stored, in one read: layout().frame_bytes bytes into out (the time
  // record, then every variable's record, markers included), every length marker checked.
  // Variable var's values start at out + layout().values_offset(frame, var) - layout().frame_offset(frame).
  void read_frame_encoded(std::int64_t frame, void* out) const;
  // Asks the kernel to start reading frames [first, first + count) (those the file has)
  // in the background.
  void prefetch(std::int64_t first, std::int64_t count) const;
  // The same for nodes [node, node + n) of each variable only (a rank's block).
  void prefetch(std::int64_t first, std::int64_t count, std::int64_t node, std::int64_t n) const;

 private:
  void parse();
  std::int64_t check_record(const ByteSource& src, std::int64_t offset, std::int64_t expected, const std::string& record) const;
  void read_int_record(std::int64_t offset, std::int64_t count, const std::string& record,
                       std::int32_t* out) const;
  std::vector<double> read_real_record(std::int64_t offset, const std::string& record) const;
  void check_frame(std::int64_t frame, int var) const;
  // Checks that the length markers around variable `var` of `frame` hold the payload size.
  void check_value_markers(std::int64_t frame, int var, std::int32_t m1, std::int32_t m2) const;
  // NPOIN reals of the file's precision (T) at offset, to native order.
  template <class T>
  void read_values_at(std::int64_t offset, T* out) const;

  std::shared_ptr<const ByteSource> source_;
  Header header_;
  Layout layout_;
  std::int64_t frames_ = 0;
  IntegrityReport integrity_;
  std::int64_t ikle_at_ = 0, ipobo_at_ = 0, x_at_ = 0, y_at_ = 0;  // offsets of the markers
};

struct WriteOptions {
  // Largest record payload accepted (SERAFIN's limit; lowered in tests).
  std::int64_t max_record_bytes = kMaxRecordBytes;
  // false: write under the final name at once and flush after every frame (a solver's
  // output stays readable up to its last complete frame); true: temporary name, renamed
  // by close().
  bool atomic = true;
};

// The records before the mesh (title through the sizes) to a sink, in header.byte_order.
void write_header_records(ByteSink& sink, const Header& header, const WriteOptions& options = {});
// Header records (title through Y) to a sink, in header.precision and header.byte_order.
// Throws UsageError, naming the record and what to use instead, when a record would
// exceed the record limit.
void write_header(ByteSink& sink, const Header& header, const Mesh& mesh, const WriteOptions& options = {});
// The same, with the mesh records (IKLE, IPOBO, X, Y) streamed from `mesh_file` in
// pieces (converted to header's precision and byte order): the mesh is never held whole.
// mesh_file holds header's mesh, or the 2D mesh it extrudes (extrudes() below).
void write_header(ByteSink& sink, const Header& header, const Reader& mesh_file, const WriteOptions& options = {});
// Where the mesh records (IKLE's length marker) start in a file with this header.
std::int64_t mesh_records_offset(const Header& header);
// Share `share` of `shares` of the mesh records of a file with this header, copied from
// mesh_file (converted to header's precision and byte order) and handed to
// write_at(offset in the file, bytes, count) in pieces of about a MiB: each record's items
// cut into `shares` runs, share 0 with the records' length markers. Shares written by
// different processes together make the records; one share gives them in the file's order.
void copy_mesh_records(const Header& header, const Reader& mesh_file, int share, int shares,
                       const std::function<void(std::int64_t, const void*, std::size_t)>& write_at);
// Whether `header`'s mesh is `geometry`'s triangles extruded to header.nplan() planes of
// prisms (TELEMAC-3D's result on its 2D geometry, as gretel writes it: extrude() in
// grid/mesh.hpp), which the functions below then make from the geometry's records.
bool extrudes(const Header& header, const Header& geometry);
// Throws UsageError unless mesh_file holds header's mesh: the same sizes, or extruded.
void check_mesh_source(const Header& header, const Reader& mesh_file);
// Pieces of header's mesh records made from mesh_file's (its own, or extruded): IKLE's
// rows [first, first + count); IPOBO's and a coordinate's nodes [first, first + count).
// An extruded piece reads only the geometry's rows and nodes it is made of.
void read_mesh_rows(const Header& header, const Reader& mesh_file, std::int64_t first, std::int64_t count, std::int32_t* out);
void read_mesh_ipobo(const Header& header, const Reader& mesh_file, std::int64_t first, std::int64_t count, std::int32_t* out);
void read_mesh_coordinates(const Header& header, const Reader& mesh_file, bool y, std::int64_t first, std::int64_t count,
                           double* out);
// Checks the record limit without writing.
void check_record_limits(const Header& header, const WriteOptions& options = {});

// Encodes n values as SERAFIN reals of the given precision and byte order into out
// (n * real_size bytes).
template <class T>
void encode_reals(const T* values, std::int64_t n, Precision precision, ByteOrder order, void* out);

// Streams a SERAFIN file: header at construction, then frames, then close(), which renames
// the temporary file to the final name. Destroyed without close(): nothing is left.
class Writer {
 public:
  Writer(const std::string& path, const Header& header, const Mesh& mesh, const WriteOptions& options = {});
  // The mesh records streamed from a file with the header's sizes.
  Writer(const std::string& path, const Header& header, const Reader& mesh_file, const WriteOptions& options = {});
  ~Writer();
  Writer(const Writer&) = delete;
  Writer& operator=(const Writer&) = delete;

  // A whole frame: values[v] points at NPOIN values of variable v.
  template <class T>
  void write_frame(double time, const std::vector<const T*>& values);
  // Or piece by piece: the time, then each variable in order.
  void begin_frame(double time);
  template <class T>
  void write_variable(const T* values);
  // A variable already encoded in the file's precision and byte order (NPOIN reals).
  void write_variable_encoded(const void* bytes);
  void close();

  const Header& header() const { return header_; }
  std::int64_t frames_written() const { return frames_; }
  std::int64_t bytes_written() const { return sink_.position(); }

 private:
  Header header_;
  Layout layout_;
  AtomicFileSink sink_;
  std::vector<unsigned char> scratch_;
  std::int64_t frames_ = 0;
  int next_var_ = -1;  // -1: between frames
  bool flush_frames_ = false;
  void end_variable();
};

}  // namespace anabranch::serafin
