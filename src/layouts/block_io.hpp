// One file for a multi-block structured grid, written by all ranks and read back at any
// process count. Each rank gives the pieces it holds (BlockLayout: whole blocks or index
// ranges of split blocks, in its own Fortran-order arrays with halos); the interiors go
// into one shared file without a copy of the whole field.
//
// Four formats, one byte path:
//   raw   the blocks one after another, each block's variables one after another, each
//         variable one Fortran-order array, frame after frame, optionally framed as Fortran
//         sequential records; a JSON sidecar describes it (blockformats/block_raw.hpp).
//   hdf5  one dataset per variable and frame holding every block concatenated, a small
//         block table (/blocks), the grid once (/grid), provenance, an XDMF sidecar that
//         shows every block as a curvilinear grid in ParaView. HDF5 creates the file's
//         objects; the values go to the datasets' bytes through the same MPI-IO path as the
//         raw format (contiguous datasets, located with H5Dget_offset), so the file's
//         metadata does not grow with the block count and both formats write at the same
//         speed. Specification: docs/formats/blocks-hdf5.md.
//   cgns  the grid's and the frames' arrays from byte 4096 on, CGNS's tree after them,
//         written by rank 0 at close (docs/formats/cgns.md).
//   tecplot  Tecplot's binary .plt: an ordered zone a block and a frame, the header at close
//         (layouts/block_tecplot.hpp, docs/formats/tecplot.md).
// The values go through the engine's strategies (io/strategy.hpp), as SERAFIN frames do:
// the pieces' runs (one per grid line of a piece, plus the record markers) are the layout.
// `independent` (the default: each rank writes its contiguous runs through one staging
// buffer; on one node and for blocks of thousands of points or more, the fastest),
// `collective` (one indexed file view and one MPI_File_write_all per frame: MPI-IO's
// two-phase aggregation, for many ranks holding small or split pieces on a parallel file
// system), `aggregated` (a few writers per node own stretches of the frame; the node's ranks
// copy their values into the writers' shared buffers: few clients for the file system) and
// `aggregated-async` (aggregated, the writes overlapped with the caller's next step:
// begin_frame/end_frame). Every strategy and every rank count write the same bytes. The
// reader reads `independent`, `collective` or `aggregated` (a few readers per node read
// contiguous stretches of the frame into node shared memory: io/read_aggregated.cpp).
//
// Typical use (every call collective over comm):
//   pio::BlockWriter w(comm, "run.h5", layout, {"rho", "u", "v", "w", "p"});
//   w.write_grid(xyz);                          // xyz[3 * piece + c], hdf5
//   for (step...) w.write_frame(time, q);        // q[piece * nvar + var]
//   w.close();
#pragma once
#include <mpi.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/compression.hpp"
#include "grid/block_layout.hpp"
#include "h5/block_files.hpp"
#include "parallel/hints.hpp"

namespace anabranch::pio {

struct BlockFileOptions {
  std::string format;                   // "raw", "hdf5", "cgns" or "tecplot"; empty: from the name (.h5/.hdf5/.hdf, .cgns, .plt), raw otherwise
  std::string strategy = "independent";  // or "collective", "aggregated", "aggregated-async" (see above; bench/blocks.py compares them)
  int real_bytes = 8;                   // the file's precision: 4 or 8
  bool records = false;                 // raw: Fortran sequential records around each array
  bool atomic = false;                  // written under a temporary name, renamed by close()
  bool xdmf = true;                     // hdf5: the XDMF sidecar "<file>.xmf"
  // independent: the staging buffer; collective: a rank's bytes per round; aggregated:
  // each writer's buffer per round. 0: 1 MiB for independent, 8 MiB for collective, 4 MiB
  // for aggregated (copied into while they are still in the caches, then written: 16 MiB
  // wrote 200 MB frames half as fast here; collective's rounds each cost MPI-IO's exchange:
  // 4 MiB was 0.7x the former subarray writes, 8 MiB 1.0x).
  std::int64_t buffer_bytes = 0;
  int writers_per_node = 0;             // aggregated: writers (reading: readers) per node, 0 auto (parallel/topology.hpp)
  Hints hints;                          // MPI-IO hints
  // cgns, hdf5: the arrays compressed (core/compression.hpp: lossless, abs=TOL, rel=TOL,
  // then :deflate or :zstd); cgns: each rank its own chunks (layouts/block_compressed.hpp);
  // hdf5: HDF5's collective filtered writes (h5/block_h5.hpp).
  Compression compress;
  // tecplot: the frames the file's header has room for (0: one). More frames than that cost a
  // move of every value at close (layouts/block_tecplot.hpp): give the count when it is known.
  std::int64_t frames = 0;

  // "format=raw strategy=independent precision=4 records=fortran atomic=1 xdmf=0
  // buffer_bytes=N writers_per_node=N compress=SPEC frames=N", anything else an MPI-IO hint. Throws
  // UsageError on a bad value.
  static BlockFileOptions parse(const std::string& text);
};

class BlockWriter {
 public:
  // Collective. Checks that the ranks' pieces cover every point of every block exactly once.
  BlockWriter(MPI_Comm comm, const std::string& path, const BlockLayout& layout, const std::vector<std::string>& variables,
              const BlockFileOptions& options = {});
  // Collective only through close(): destroying an open writer lets the file go (a tool's
  // temporary file is removed; a solver's output keeps its complete frames).
  ~BlockWriter();
  BlockWriter(const BlockWriter&) = delete;
  BlockWriter& operator=(const BlockWriter&) = delete;

  // Collective, hdf5 only, at most once: the grid coordinates, xyz[3 * p + c] the caller's
  // array (halos included) of coordinate c of piece p.
  template <class T>
  void write_grid(const T* const* xyz);
  // Collective: one frame; values[p * nvar + v] the caller's array of variable v of piece p.
  template <class T>
  void write_frame(double time, const T* const* values);
  // Collective: starts a frame and returns once the values are copied (the arrays may change);
  // with aggregated-async the bytes go to disk while the caller computes. end_frame()
  // (collective) completes it; the next begin_frame or close() also does.
  template <class T>
  void begin_frame(double time, const T* const* values);
  void end_frame();
  // Collective: completes and closes (renames when atomic; writes the sidecars).
  void close();

  std::int64_t frames() const;
  const std::string& path() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

class BlockReader {
 public:
  // Collective. layout: this rank's pieces and halo; its blocks must be the file's (or
  // empty: the file's are taken). The pieces need not be the writer's: any process count,
  // any assignment.
  BlockReader(MPI_Comm comm, const std::string& path, const BlockLayout& layout, const BlockFileOptions& options = {});
  ~BlockReader();
  BlockReader(const BlockReader&) = delete;
  BlockReader& operator=(const BlockReader&) = delete;

  const BlockFileInfo& info() const;
  // Collective: fills the interior of values[p * nvar + v] (halos untouched).
  template <class T>
  void read_frame(std::int64_t frame, T* const* values);
  // Collective: the grid, into xyz[3 * p + c]; FormatError when the file has none.
  template <class T>
  void read_grid(T* const* xyz);
  void close();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace anabranch::pio
