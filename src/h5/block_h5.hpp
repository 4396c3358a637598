// The HDF5 side of the block file (layouts/block_io.hpp): HDF5 creates the objects and the
// block table; the values are written through MPI-IO at the offsets it gives. Compressed
// (compress=SPEC), the arrays are chunked datasets through HDF5's shuffle and the codec,
// written by HDF5's collective filtered writes (write()), each rank its pieces' runs.
#pragma once
#include <mpi.h>

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/compression.hpp"
#include "grid/block_layout.hpp"
#include "blockformats/block_file.hpp"

namespace anabranch::pio::block_h5 {

class File {
 public:
  // Collective over comm: creates path (replacing it) with the block table, the variable
  // names, the precision and the provenance (rank 0's facts, shared).
  File(MPI_Comm comm, const std::string& path, const std::string& name, const std::vector<BlockShape>& blocks,
       const std::vector<std::string>& variables, int real_bytes, MPI_Info info,
       const std::map<std::string, std::string>& provenance, const Compression& compress = {});
  ~File();
  File(const File&) = delete;
  File& operator=(const File&) = delete;
  // Collective: creates frame f's group (with its time) and one contiguous dataset per
  // variable; returns the datasets' byte offsets in the file (compressed: chunked
  // datasets, no offsets).
  std::vector<std::int64_t> add_frame(std::int64_t frame, double time);
  // Collective: throws IoError when `bytes` more would take the file past the file-size limit.
  void check_room(std::int64_t bytes, const std::string& what);
  // Collective, after a failure every rank saw: empties the file (giving a full disk its
  // space back, so that HDF5's closing writes succeed on every rank and no rank is left
  // waiting inside HDF5) and closes it, errors ignored. The caller removes it.
  void abandon();
  // Collective: the grid's x, y, z datasets; their byte offsets (compressed: none).
  std::vector<std::int64_t> add_grid();
  // Collective, compressed: this rank's values of frame f's variable `var` (-1, -2, -3: the
  // grid's x, y, z), runs of the dataset (first point, count; increasing, apart) and their
  // values one after another in the file's precision.
  void write(std::int64_t frame, int var, const std::vector<std::array<std::int64_t, 2>>& runs, const void* values);
  // Collective: flushes and closes.
  void close();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Serial: the description of an anabranch block HDF5 file.
BlockFileInfo describe(const std::string& path);
// Writes "<final>.xmf" describing every block of every frame (under a temporary name).
void write_xdmf(const std::string& final_path, const BlockFileInfo& info);
// True when path is an HDF5 file holding a block table.
bool is_block_h5(const std::string& path);

}  // namespace anabranch::pio::block_h5
