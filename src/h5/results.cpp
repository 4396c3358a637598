#include "h5/results.hpp"

#include <cctype>
#include <cstring>
#include <fstream>
#include <optional>

#include "core/error.hpp"
#include "core/io.hpp"
#ifdef ANABRANCH_HAVE_HDF5
#include "h5/cgns_files.hpp"
#include "h5/vtkhdf.hpp"
#endif

namespace anabranch::pio {

bool looks_like_hdf5(const std::string& path) {
  static const unsigned char sig[8] = {0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n'};
  const FileSource in(path);  // refuses what cannot be read (missing, a folder, a FIFO)
  for (std::int64_t at = 0; at + 8 <= std::min<std::int64_t>(in.size(), (std::int64_t{1} << 20) + 8); at = at == 0 ? 512 : at * 2) {
    unsigned char b[8];
    in.read_at(at, b, 8);
    if (std::memcmp(b, sig, 8) == 0) return true;
  }
  return false;
}

namespace {

class SerafinFile final : public ResultFile {
 public:
  explicit SerafinFile(const std::string& path) : r_(path) {}
  const char* format() const override { return "serafin"; }
  const std::string& name() const override { return r_.name(); }
  std::int64_t file_bytes() const override { return r_.file_bytes(); }
  const serafin::Header& header() const override { return r_.header(); }
  std::int64_t frame_count() const override { return r_.frame_count(); }
  std::vector<double> times() const override { return r_.read_times(); }
  Mesh read_mesh() const override { return r_.read_mesh(); }
  void read_values(std::int64_t frame, int var, std::int64_t first, std::int64_t count, float* out) const override {
    r_.read_values(frame, var, first, count, out);
  }
  void read_values(std::int64_t frame, int var, std::int64_t first, std::int64_t count, double* out) const override {
    r_.read_values(frame, var, first, count, out);
  }
  const serafin::Reader* serafin_reader() const override { return &r_; }

 private:
  serafin::Reader r_;
};

#ifdef ANABRANCH_HAVE_HDF5
class Hdf5File final : public ResultFile {
 public:
  explicit Hdf5File(const std::string& path) : in_(path) {}
  const char* format() const override { return "hdf5"; }
  const std::string& name() const override { return in_.name(); }
  std::int64_t file_bytes() const override { return in_.file_bytes(); }
  const serafin::Header& header() const override { return in_.header(); }
  std::int64_t frame_count() const override { return in_.frame_count(); }
  std::vector<double> times() const override { return in_.times(); }
  Mesh read_mesh() const override { return in_.read_mesh(); }
  void read_values(std::int64_t frame, int var, std::int64_t first, std::int64_t count, float* out) const override {
    in_.read_values(frame, var, first, count, out);
  }
  void read_values(std::int64_t frame, int var, std::int64_t first, std::int64_t count, double* out) const override {
    in_.read_values(frame, var, first, count, out);
  }
  std::map<std::string, std::string> extras() const override {
    std::map<std::string, std::string> e;
    e["vtkhdf_version"] = in_.vtkhdf_version();
    for (const auto& [k, v] : in_.provenance()) e["provenance." + k] = v;
    for (const auto& [k, v] : in_.compression()) e["compression." + k] = v;
    return e;
  }
  std::vector<std::int64_t> in_place(std::int64_t frame, int var) const override { return in_.in_place(frame, var); }
  std::int64_t in_place_bytes() const override {
    return in_.chunk_values() * (in_.header().precision == Precision::Double ? 8 : 4);
  }

 private:
  vtkhdf::Input in_;
};
#endif

}  // namespace

std::unique_ptr<ResultFile> ResultFile::open(const std::string& path) {
  const bool hdf5_bytes = looks_like_hdf5(path);
  if (hdf5_file_name(path) && !hdf5_bytes) {
    throw FormatError(path, "HDF5 signature", 0,
                      "no HDF5 signature (a truncated file, or a run killed before HDF5 first flushed it)");
  }
  if (hdf5_bytes) {
#ifdef ANABRANCH_HAVE_HDF5
    if (cgns_files::is_cgns_hdf5(path)) return cgns_files::open_mesh(path);
    return std::make_unique<Hdf5File>(path);
#else
    throw UsageError(path + " is an HDF5 file: this anabranch was built without HDF5");
#endif
  }
  if (tecplot_file(path) || tecplot_file_name(path)) return open_tecplot_result(path);  // a .plt that is not one: refused naming why
  return std::make_unique<SerafinFile>(path);
}

void write_serafin_copy(const ResultFile& in, const std::string& path) {
  const serafin::Header& h = in.header();
  std::optional<serafin::Writer> opened;
  if (in.format() == std::string("hdf5")) {
    opened.emplace(path, h, serafin::Reader(vtkhdf::serafin_view(in.name())));  // the mesh streamed from its arrays
  } else {
    const Mesh mesh = in.read_mesh();
    opened.emplace(path, h, mesh);
  }
  serafin::Writer& w = *opened;
  const auto times = in.times();
  std::vector<double> buf(static_cast<std::size_t>(h.npoin));
  for (std::int64_t f = 0; f < in.frame_count(); ++f) {
    w.begin_frame(times[static_cast<std::size_t>(f)]);
    for (int v = 0; v < h.nvar(); ++v) {
      in.read_values(f, v, 0, h.npoin, buf.data());
      w.write_variable(buf.data());
    }
  }
  w.close();
}

}  // namespace anabranch::pio
