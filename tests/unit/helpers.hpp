// Shared helpers for the unit tests: temporary folders, tiny meshes, fixture paths.
#pragma once
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "grid/mesh.hpp"
#include "formats/serafin.hpp"

namespace abtest {

namespace fs = std::filesystem;

// A temporary folder removed at the end of the test.
class TempDir {
 public:
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "abtest-XXXXXX").string();
    path_ = ::mkdtemp(tmpl.data());
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  std::string file(const std::string& name) const { return (fs::path(path_) / name).string(); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

inline std::vector<unsigned char> read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

inline void write_bytes(const std::string& path, const std::vector<unsigned char>& b) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
}

inline std::string telemac_data() { return AB_TELEMAC_DATA; }

inline bool have_telemac_data() { return fs::exists(fs::path(telemac_data()) / "geo_gouttedo.slf"); }

#define AB_REQUIRE_TELEMAC_DATA()                                                                 \
  do {                                                                                            \
    if (!abtest::have_telemac_data()) GTEST_SKIP() << "TELEMAC fixtures absent: " << abtest::telemac_data(); \
  } while (0)

inline std::vector<std::string> telemac_slf_files() {
  std::vector<std::string> out;
  if (!have_telemac_data()) return out;
  for (auto& e : fs::directory_iterator(telemac_data()))
    if (e.path().extension() == ".slf") out.push_back(e.path().string());
  std::sort(out.begin(), out.end());
  return out;
}

// Two triangles on a unit square: nodes 1 (0,0), 2 (1,0), 3 (1,1), 4 (0,1).
inline anabranch::Mesh square_mesh() {
  anabranch::Mesh m;
  m.nelem = 2;
  m.npoin = 4;
  m.ndp = 3;
  m.ikle = {1, 2, 3, 1, 3, 4};
  m.ipobo = {1, 2, 3, 4};
  m.x = {0, 1, 1, 0};
  m.y = {0, 0, 1, 1};
  return m;
}

inline anabranch::serafin::Header header_for(const anabranch::Mesh& m, int nvar, anabranch::Precision p,
                                             anabranch::ByteOrder o) {
  anabranch::serafin::Header h;
  h.precision = p;
  h.byte_order = o;
  h.set_title("unit test mesh");
  for (int v = 0; v < nvar; ++v) h.variables.push_back({"VAR " + std::to_string(v + 1), "M"});
  h.iparam[0] = 1;
  h.set_mesh_sizes(m);
  return h;
}

// A complete small SERAFIN file in memory (header + frames with values v*100 + node + t).
inline std::vector<unsigned char> small_file(anabranch::Precision p, anabranch::ByteOrder o, int nframes, int nvar = 2) {
  auto m = square_mesh();
  auto h = header_for(m, nvar, p, o);
  h.date = std::array<std::int32_t, 6>{2024, 5, 17, 12, 30, 0};
  anabranch::MemorySink sink;
  anabranch::serafin::write_header(sink, h, m);
  const int rs = anabranch::real_size(p);
  for (int f = 0; f < nframes; ++f) {
    std::vector<unsigned char> rec(static_cast<std::size_t>(4 * m.npoin * rs + 16));
    double t = f * 0.5;
    unsigned char b[16];
    anabranch::store<std::int32_t>(b, rs, o);
    anabranch::serafin::encode_reals(&t, 1, p, o, b + 4);
    anabranch::store<std::int32_t>(b + 4 + rs, rs, o);
    sink.write(b, static_cast<std::size_t>(8 + rs));
    for (int v = 0; v < nvar; ++v) {
      std::vector<double> vals(static_cast<std::size_t>(m.npoin));
      for (int k = 0; k < m.npoin; ++k) vals[static_cast<std::size_t>(k)] = v * 100 + k + t;
      anabranch::store<std::int32_t>(b, static_cast<std::int32_t>(m.npoin * rs), o);
      sink.write(b, 4);
      std::vector<unsigned char> enc(static_cast<std::size_t>(m.npoin * rs));
      anabranch::serafin::encode_reals(vals.data(), m.npoin, p, o, enc.data());
      sink.write(enc.data(), enc.size());
      sink.write(b, 4);
    }
  }
  return sink.bytes;
}

}  // namespace abtest
