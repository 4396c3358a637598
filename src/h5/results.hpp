// A result file of either format (SERAFIN or anabranch's HDF5), read the same way: the
// commands and bindings that only read (info, convert, Python's read) take this.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "grid/mesh.hpp"
#include "formats/serafin.hpp"

namespace anabranch::pio {

// True when the file starts with the HDF5 signature (at 0, 512, 1024, ... as HDF5 allows).
bool looks_like_hdf5(const std::string& path);
// True when the file starts as Tecplot's binary files do ("#!TDV").
bool tecplot_file(const std::string& path);

class ResultFile {
 public:
  // Opens path, choosing the format by its first bytes (HDF5 signature, Tecplot's or SERAFIN).
  static std::unique_ptr<ResultFile> open(const std::string& path);
  virtual ~ResultFile() = default;

  virtual const char* format() const = 0;  // "serafin", "hdf5", "cgns" or "tecplot"
  virtual const std::string& name() const = 0;
  virtual std::int64_t file_bytes() const = 0;
  virtual const serafin::Header& header() const = 0;
  virtual std::int64_t frame_count() const = 0;
  virtual std::vector<double> times() const = 0;
  virtual Mesh read_mesh() const = 0;
  // Values of nodes [first, first + count) of variable var in frame.
  virtual void read_values(std::int64_t frame, int var, std::int64_t first, std::int64_t count, float* out) const = 0;
  virtual void read_values(std::int64_t frame, int var, std::int64_t first, std::int64_t count, double* out) const = 0;
  // Format-specific facts (HDF5: VTKHDF version, provenance), as name -> text.
  virtual std::map<std::string, std::string> extras() const { return {}; }
  // The SERAFIN reader behind, when format() is "serafin" (integrity, offsets).
  virtual const serafin::Reader* serafin_reader() const { return nullptr; }
  // Where the values of `var` in `frame` lie when the engine reads them in place (an HDF5
  // file's unfiltered chunks, a CGNS file's arrays): the file offsets of equal pieces of
  // in_place_bytes() bytes each, in node order, little-endian; empty when they are not there
  // as they are (compressed: HDF5's own reads).
  virtual std::vector<std::int64_t> in_place(std::int64_t /*frame*/, int /*var*/) const { return {}; }
  virtual std::int64_t in_place_bytes() const { return 0; }
};

// A Tecplot file of finite-element zones (h5/tecplot_results.cpp); FormatError naming the
// zone when it is not one mesh's frames.
std::unique_ptr<ResultFile> open_tecplot_result(const std::string& path);

// Writes the whole of `in` as a SERAFIN file (serially, streaming one variable of one frame
// at a time), under a temporary name renamed when complete.
void write_serafin_copy(const ResultFile& in, const std::string& path);

}  // namespace anabranch::pio
