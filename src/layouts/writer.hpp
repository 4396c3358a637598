// The parallel shared-file writer: every rank of a communicator gives the values of the
// global nodes it holds; one SERAFIN file receives each global frame, each node written
// exactly once (by the lowest rank holding it), through the chosen strategy.
//
// Typical use (every call collective over comm):
//   pio::Writer w(comm, "T2DRES", out, global_ids, nlocal, options);
//   for (step...) w.write_frame(time, values);     // values[v][i]: variable v, local node i
//   w.close();
#pragma once
#include <mpi.h>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "grid/mesh.hpp"
#include "formats/serafin.hpp"
#include "parallel/hints.hpp"
#include "io/ownership.hpp"
#include "io/shared_file.hpp"
#include "io/strategy.hpp"

namespace anabranch::pio {

struct WriterOptions {
  std::string strategy;  // empty: by the file's name (.h5, .hdf5, .hdf, .vtkhdf: hdf5; .cgns: cgns; .plt: tecplot), else aggregated
  int writers_per_node = 0;  // aggregated strategies and hdf5; 0: auto (parallel/topology.hpp)
  bool shared_memory = true;  // aggregated: node-local values through shared memory (0: all by MPI messages)
  std::int64_t buffer_bytes = std::int64_t{16} << 20;  // aggregation buffer per writer and round
  Hints hints;                                        // MPI-IO hints (merged over ANABRANCH_MPIIO_HINTS)
  bool atomic = false;  // true: temporary name renamed by close() (tools); false: solver output
  bool file_per_step = false;  // hdf5: one file per frame ("run_000012.h5") instead of one per run
  bool flush_frames = false;   // hdf5: flush the file after every frame (a killed run keeps its frames; costs a sync)
  std::int64_t chunk_bytes = 0;  // hdf5, cgns compressed: the most bytes of one chunk of a variable's frame (0: HDF5's 4 GiB limit; cgns 256 MiB)
  bool owner_highest = false;  // "owner=highest": a node held by several ranks is written by the highest (gretel's rule)
  Compression compress;        // hdf5, cgns: "compress=lossless", "compress=rel=1e-4", "compress=abs=0.001"
  std::int64_t frames = 0;     // tecplot: the frames its header has room for (0: one; more frames cost a move of the values at close)
  // Facts recorded in self-describing outputs (hdf5): partition_method, partition_parts.
  std::map<std::string, std::string> provenance;

  // "strategy=collective writers_per_node=2 buffer_bytes=8388608 atomic=1 file_per_step=1
  // flush_frames=1 chunk_bytes=1073741824 shared_memory=0 owner=highest compress=rel=1e-4
  // frames=100 partition_method=metis partition_parts=64 cb_nodes=4 ...": the keys above, anything
  // else is an MPI-IO hint.
  static WriterOptions parse(const std::string& text);
};

// What the file holds. The header (title, variables, sizes, precision, byte order, date)
// must be the same on every rank; the global mesh arrays are needed on rank 0 only, given
// directly or read from a geometry file.
struct OutputDescription {
  serafin::Header header;
  const Mesh* mesh = nullptr;  // rank 0: IKLE, IPOBO, X, Y of the global mesh
  std::string geometry;        // or a SERAFIN or HDF5 result file to take them from (each rank its share)
  // file-per-process only: this rank's own elements and coordinates (IKLE in local
  // numbering); its IPOBO slot receives KNOLG, the global ids.
  const Mesh* local_mesh = nullptr;
};

class Writer {
 public:
  // Collective. global_ids: 1-based global node number of each of the nlocal local nodes
  // (KNOLG); a node may be held by several ranks.
  Writer(MPI_Comm comm, const std::string& path, const OutputDescription& out, const std::int32_t* global_ids,
         std::int64_t nlocal, const WriterOptions& options = {});
  // Collective only through close(): destroying an open writer abandons the file.
  ~Writer();
  Writer(const Writer&) = delete;
  Writer& operator=(const Writer&) = delete;

  // Collective: one frame; values[v] points at nlocal values of variable v. Returns when
  // the frame is written.
  template <class T>
  void write_frame(double time, const T* const* values);
  // Collective: starts a frame and returns as soon as the values are copied; with
  // aggregated-async the bytes go to disk while the caller computes. end_frame()
  // (collective) completes it; the next begin_frame or close() also does.
  template <class T>
  void begin_frame(double time, const T* const* values);
  void end_frame();
  // Collective: completes, closes (and with atomic, renames).
  void close();

  const std::string& path() const { return path_; }
  std::string strategy() const { return strategy_->name(); }
  std::int64_t frames() const { return frames_; }
  std::int64_t owned_nodes() const { return static_cast<std::int64_t>(owned_.gid.size()); }
  int files_created() const;
  // This rank's time per phase so far (the strategy's, plus the writer's own encoding).
  PhaseTimes phases() const;
  const serafin::Layout& layout() const { return layout_; }
  // While open: the MPI-IO hints the library holds for the shared file (on ranks that have
  // it open), to check what reached it.
  std::map<std::string, std::string> file_hints() const { return strategy_->file_hints(); }

 private:
  template <class T>
  void encode_local(const T* const* values);

  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0, size_ = 1;
  std::string path_;
  std::optional<OutputName> name_;  // where the file is written (a temporary: atomic)
  serafin::Header header_;
  serafin::Layout layout_;
  Owned owned_;
  std::int64_t nlocal_ = 0;
  std::unique_ptr<Strategy> strategy_;
  WriterOptions options_;
  MPI_Info info_ = MPI_INFO_NULL;
  serafin::Header local_header_;
  Mesh local_mesh_;
  std::unique_ptr<FrameLayout> frame_;  // where this rank's values go (the byte strategies)
  std::vector<unsigned char> local_values_;
  std::int64_t frames_ = 0;
  double encode_seconds_ = 0;
  bool pending_ = false, closed_ = false;
  bool failed_ = false;  // a collective step failed on every rank: destruction abandons collectively
};

}  // namespace anabranch::pio
