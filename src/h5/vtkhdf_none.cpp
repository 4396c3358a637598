// Built without HDF5: the one-process HDF5 output (convert and merge run alone) refuses at
// once, saying why, and a mesh is read from SERAFIN only (partition refuses an HDF5 mesh).
#include "core/error.hpp"
#include "core/io.hpp"
#include "h5/cgns_files.hpp"
#include "h5/results.hpp"
#include "h5/vtkhdf.hpp"

namespace anabranch::pio::vtkhdf {

namespace {
[[noreturn]] void refuse(const std::string& path) {
  throw UsageError(path + ": this anabranch was built without HDF5 (install libhdf5-openmpi-dev and reconfigure), "
                          "so it writes SERAFIN (.slf) or VTU (.vtu) only");
}
}  // namespace

void load_library() {}

struct Output::Impl {};
Output::~Output() = default;
void Output::write_mesh(const Mesh*) { refuse("HDF5 output"); }
void Output::write_mesh(const serafin::Reader*) { refuse("HDF5 output"); }
void Output::write_frame(double, std::int64_t, std::int64_t, const void*) { refuse("HDF5 output"); }

LoneOutput::LoneOutput(const std::string& path, const serafin::Header&, const std::map<std::string, std::string>&, const Compression&) {
  refuse(path);
}
LoneOutput::~LoneOutput() = default;
void LoneOutput::commit() {}

std::shared_ptr<const ByteSource> serafin_source(const std::string& path) {
  if (looks_like_hdf5(path)) throw UsageError(path + " is an HDF5 file: this anabranch was built without HDF5");
  return std::make_shared<FileSource>(path);
}

}  // namespace anabranch::pio::vtkhdf

// CGNS files are written without HDF5 (formats/hdf5_bytes); reading them needs it.
namespace anabranch::pio::cgns_files {
bool is_cgns_hdf5(const std::string&) { return false; }
bool describe(const std::string& path, BlockFileInfo&, std::string& why) {
  why = path + ": this anabranch was built without HDF5, which reading CGNS files needs";
  return false;
}
std::unique_ptr<ResultFile> open_mesh(const std::string& path) {
  throw UsageError(path + ": this anabranch was built without HDF5, which reading CGNS files needs");
}
bool is_mesh_result(const std::string&) { return false; }
std::vector<Extent> contiguous_extents(const std::string& path, const std::vector<std::string>&) {
  throw UsageError(path + ": this anabranch was built without HDF5, which finding a CGNS file's arrays needs");
}
}  // namespace anabranch::pio::cgns_files
