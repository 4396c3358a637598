// Self-describing HDF5 output: the VTKHDF UnstructuredGrid layout ParaView opens directly
// (with the transient "Steps" group), an XDMF sidecar for older readers, everything SERAFIN
// holds (so SERAFIN -> HDF5 -> SERAFIN gives back the same bytes) and provenance.
// Specification: docs/formats/hdf5.md.
//
// HDF5 lives in pio, not in formats: parallel HDF5 is MPI-IO underneath, and every file
// operation here is collective over a communicator (MPI_COMM_SELF for one process).
#pragma once
#include <mpi.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/compression.hpp"
#include "grid/mesh.hpp"
#include "formats/serafin.hpp"

namespace anabranch::pio::vtkhdf {

// True when path is an HDF5 file (signature check; no HDF5 call).
bool is_hdf5(const std::string& path);
// Opens the HDF5 library now, for a command that will use it, before its own reads start:
// opened later, the library's pages are read from the disk behind them (no-op without HDF5).
void load_library();
// Provenance of a parallel run, gathered over comm (hosts, nodes, ranks, MPI and HDF5
// libraries) on top of the process-wide facts; identical on every rank (rank 0's, shared).
// with_inputs false leaves out the inputs' checksums (see provenance::facts).
std::map<std::string, std::string> parallel_facts(MPI_Comm comm, bool with_inputs = true);
// Collective: the size and CRC-32 of the inputs added to the provenance for others to
// checksum (provenance::add_input(path, false)), every rank of comm its share of the bytes;
// every rank then has them. Those already known are left alone.
void checksum_inputs(MPI_Comm comm);
// The XDMF sidecar of an HDF5 file: "<path>.xmf".
std::string xdmf_path(const std::string& path);

// "run_000012.h5" for step 12 of "run.h5" (one file per step).
std::string step_path(const std::string& path, std::int64_t step);

// One frame as the XDMF sidecar refers to it: in which file, at which position.
struct XdmfFrame {
  std::string file;  // the HDF5 file holding it, relative to the sidecar
  std::int64_t index = 0, frames_in_file = 1;
  double time = 0;
};
// Writes an XDMF 3 temporal collection of the frames (mesh from the first frame's file)
// to xmf, under a temporary name renamed when complete.
void write_xdmf(const std::string& xmf, const serafin::Header& header, const std::vector<XdmfFrame>& frames);

struct OutputOptions {
  bool xdmf = true;                                // write the XDMF sidecar at close
  std::string final_path;                          // the name after a rename (sidecar named after it)
  // Not empty: the mesh datasets are HDF5 external links into this file (relative to the
  // output), as each step's file of a one-file-per-step run links to the first step's.
  std::string mesh_link;
  std::int64_t alignment = 0;                      // align datasets to this (the stripe size); 0: none
  bool flush_frames = false;                       // H5Fflush after every frame (a killed run keeps its frames)
  std::int64_t chunk_bytes = 0;                    // the most bytes of a chunk of a variable's frame (0: HDF5's 4 GiB)
  // The frames' values compressed (core/compression.hpp): HDF5's shuffle and its codec on
  // chunks of compress_chunk values (0: a frame), values rounded within a lossy bound
  // first; written by write_frame (not add_frame, whose chunks the engine fills in place).
  Compression compress;
  std::int64_t compress_chunk = 0;
  std::map<std::string, std::string> provenance;  // extra provenance attributes (strategy, hints, ...)
};

class Output {
 public:
  // Collective over comm: creates path (replacing it), the groups, the mesh datasets, the
  // SERAFIN header attributes and the provenance. MPI_COMM_NULL: one process without MPI
  // (HDF5's POSIX driver), the same file.
  Output(MPI_Comm comm, const std::string& path, const serafin::Header& header, MPI_Info info,
         const OutputOptions& options = {});
  ~Output();
  Output(const Output&) = delete;
  Output& operator=(const Output&) = delete;

  // Collective: writes the mesh; rank 0 gives it, the other ranks pass nullptr.
  void write_mesh(const Mesh* mesh);
  // The same from a SERAFIN file holding the header's mesh (or the 2D mesh it extrudes),
  // which every rank gives: each writes its share of the elements and of the nodes, read a
  // piece at a time (O(N/P) each, never the mesh whole).
  void write_mesh(const serafin::Reader* geometry);
  struct MeshPieces;
  // Collective: one frame. Each rank gives nodes [first, first + count) of every variable,
  // nvar blocks of count values in the header's precision and native byte order (count may
  // be 0). In 3D the first frame's first variable (the elevation) becomes the points' Z.
  void write_frame(double time, std::int64_t first, std::int64_t count, const void* values);
  // Collective: one more frame whose values the caller puts into the file itself (the
  // engine's byte path). Each variable's frame is frame_chunks() chunks of chunk_values()
  // values, each contiguous in the file, allocated here: returns their file offsets,
  // variable after variable. Then, once the values are in the file, settle_frame().
  std::vector<std::int64_t> add_frame(double time);
  std::int64_t chunk_values() const;
  std::int64_t frame_chunks() const;
  // Collective, once the frame added last is in the file: in 3D its first frame's elevation
  // becomes the points' Z; flush_frames flushes. settles() says whether there is any work.
  bool settles() const;
  void settle_frame();
  // Collective: closes; rank 0 writes the XDMF sidecar.
  void close();

  std::int64_t frames() const { return frames_; }
  // Seconds spent in H5Fcreate (+ layout) and in H5Fclose (seed 004's finding: measure them).
  double open_seconds() const { return open_seconds_; }
  double close_seconds() const { return close_seconds_; }

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::int64_t frames_ = 0;
  double open_seconds_ = 0, close_seconds_ = 0;
};

// One process writing an HDF5 file without MPI (HDF5's POSIX driver): under a temporary
// name, renamed by commit() with its XDMF sidecar; destroyed before commit() (an exception,
// a failed check), or ended by a signal, it leaves nothing.
class LoneOutput {
 public:
  LoneOutput(const std::string& path, const serafin::Header& header, const std::map<std::string, std::string>& provenance,
             const Compression& compress = {});
  ~LoneOutput();
  LoneOutput(const LoneOutput&) = delete;
  LoneOutput& operator=(const LoneOutput&) = delete;
  Output& out() { return *out_; }
  void commit();

 private:
  std::string path_, temp_, sidecar_;
  std::unique_ptr<Output> out_;
  bool closing_ = false, committed_ = false;
};

class Input {
 public:
  // Opens an anabranch HDF5 file. With a communicator, collective over it (MPI-IO driver);
  // with MPI_COMM_NULL, serial (works without MPI).
  explicit Input(const std::string& path, MPI_Comm comm = MPI_COMM_NULL);
  ~Input();
  Input(const Input&) = delete;
  Input& operator=(const Input&) = delete;

  const std::string& name() const;
  std::int64_t file_bytes() const;
  // The SERAFIN header the file holds (title, variables, IPARAM, date, sizes, precision,
  // byte order of the SERAFIN it came from or goes to).
  const serafin::Header& header() const;
  std::int64_t frame_count() const;
  std::vector<double> times() const;
  double read_time(std::int64_t frame) const;
  std::string vtkhdf_version() const;
  std::vector<std::string> point_data_names() const;
  std::map<std::string, std::string> provenance() const;
  // Each variable stored through filters: its filters, the bound it was written within
  // (compress=SPEC) and the bytes it takes against its values' ("shuffle+deflate, rel=0.0001,
  // 3.21x (113,288 of 363,720 bytes)"); empty when no variable is filtered.
  std::map<std::string, std::string> compression() const;

  Mesh read_mesh() const;
  // Pieces of the mesh, as SERAFIN holds them: IKLE of elements [first, first + count)
  // (1-based, ndp per element, SERAFIN's node order), IPOBO and the X (column 0) or Y
  // (column 1) of nodes [first, first + count).
  void read_ikle(std::int64_t first, std::int64_t count, std::int32_t* out) const;
  void read_ipobo(std::int64_t first, std::int64_t count, std::int32_t* out) const;
  void read_coordinates(int column, std::int64_t first, std::int64_t count, double* out) const;
  // Values of nodes [first, first + count) of one variable of one frame.
  template <class T>
  void read_values(std::int64_t frame, int var, std::int64_t first, std::int64_t count, T* out) const;
  // Values of the listed nodes (0-based, increasing): a rank reads its own nodes only.
  template <class T>
  void read_nodes(std::int64_t frame, int var, const std::int64_t* nodes, std::int64_t n, T* out) const;
  // The values of a frame's variable as stored, for the engine to read in place: the chunks'
  // addresses (chunk_values() values each), in node order; empty when a chunk is filtered or
  // not allocated. chunk_values(): 0 when the datasets are not chunked so that a frame is
  // whole chunks, unfiltered (another tool's copy: HDF5's own reads).
  std::vector<std::int64_t> in_place(std::int64_t frame, int var) const;
  std::int64_t chunk_values() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The SERAFIN file an anabranch HDF5 file holds (its header, mesh and frames), as bytes
// made on demand from the datasets, a range of elements or nodes at a time: serafin::Reader
// and everything built on it (partition, split, merge...) read the HDF5 file through it
// without converting it first. Reads are serialised (this HDF5 is not thread-safe). The
// file is held as an input (no output may replace it).
std::shared_ptr<const ByteSource> serafin_view(const std::string& path);

// The SERAFIN bytes of path (for serafin::Reader): the file itself, or the SERAFIN an
// anabranch HDF5 file holds.
std::shared_ptr<const ByteSource> serafin_source(const std::string& path);

}  // namespace anabranch::pio::vtkhdf
