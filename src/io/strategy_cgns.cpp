// cgns: a mesh result as one CGNS file (docs/formats/cgns.md): one unstructured zone of the
// mesh's elements, a vertex FlowSolution per frame. Every array has its place from the
// header alone: at open each rank writes its share of the mesh (coordinates, IPOBO, the
// elements' nodes, read in shares from the geometry), each frame's values go to their places
// through the aggregated strategy, as into a SERAFIN file; at close rank 0 writes the CGNS
// tree after them (blockformats/cgns.hpp). A 3D result's CoordinateZ is its first frame's
// first variable (TELEMAC-3D's elevation), as in its VTKHDF file.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <nlohmann/json.hpp>
#include <optional>

#include "blockformats/cgns.hpp"
#include "core/error.hpp"
#include "core/io.hpp"
#include "formats/hdf5_bytes.hpp"
#include "h5/vtkhdf.hpp"
#include "io/shared_file.hpp"
#include "io/strategy.hpp"
#include "parallel/mpi_util.hpp"

namespace anabranch::pio {
namespace {

constexpr std::int64_t kData = 4096;  // the arrays from here on; the superblock before

// The runs of a values-only frame's first variable: TELEMAC-3D's elevation, a 3D result's Z.
class FirstVariable final : public FrameLayout {
 public:
  FirstVariable(const FrameLayout& f, std::int64_t bytes) : f_(f), bytes_(bytes) {}
  int value_bytes() const override { return f_.value_bytes(); }
  std::int64_t frame_bytes() const override { return bytes_; }
  std::pair<std::int64_t, std::int64_t> locate(std::int64_t, std::int64_t at) const override { return {at, bytes_ - at}; }
  void for_each_run(const std::function<void(const Run&)>& f) const override {
    f_.for_each_run([&](const Run& r) {
      if (r.array == 0) f(r);
    });
  }

 private:
  const FrameLayout& f_;
  std::int64_t bytes_;
};

class CgnsStrategy final : public Strategy {
 public:
  const char* name() const override { return "cgns"; }
  bool serafin_file() const override { return false; }
  bool written_at_close() const override { return true; }
  PhaseTimes phases() const override { return bytes_ ? bytes_->phases() : done_; }

  void open(const StrategySetup& setup) override {
    s_ = setup;
    MPI_Comm_rank(s_.comm, &rank_);
    MPI_Comm_size(s_.comm, &size_);
    const auto& h = s_.header;
    rs_ = s_.layout.real_bytes;
    array_ = h.npoin * rs_;
    three_d_ = h.nplan() > 1;
    x_ = kData;
    y_ = x_ + array_;
    z_ = three_d_ ? y_ + array_ : -1;
    ipobo_ = (three_d_ ? z_ : y_) + array_;
    conn_ = ipobo_ + h.npoin * 4;
    frames_at_ = conn_ + h.nelem * h.ndp * 4;
    collective(s_.comm, [&] {
      if (h.ndp != 2 && h.ndp != 3 && h.ndp != 4 && h.ndp != 6)
        throw UsageError(s_.final_path + ": CGNS has no element of " + std::to_string(h.ndp) + " nodes for this mesh");
    });
    write_mesh();
    frame_ = std::make_unique<StretchedFrame>(*s_.frame, array_);
    StrategySetup b = s_;
    b.frame = frame_.get();
    b.truncate = false;  // made above, with the mesh in it
    b.write_header = nullptr;
    b.copy_mesh = nullptr;
    bytes_ = make_strategy("aggregated");
    bytes_->open(b);
  }

  void write(const EncodedFrame& frame) override {
    std::vector<std::int64_t> at;
    for (int v = 0; v < s_.header.nvar(); ++v) at.push_back(frames_at_ + (frame.index * s_.header.nvar() + v) * array_);
    collective(s_.comm, [&] { check_size_limit(s_.final_path, at.empty() ? frames_at_ : at.back() + array_, "frame " + std::to_string(frame.index)); });
    frame_->set(frame.index, at);
    bytes_->write(frame);
    times_.push_back(frame.time);
    if (three_d_ && frame.index == 0 && s_.header.nvar() > 0) {  // CoordinateZ: the first variable of the first frame
      bytes_->wait();
      const FirstVariable first(*s_.frame, array_);
      StretchedFrame z(first, array_);
      z.set(0, {z_});
      StrategySetup b = s_;
      b.frame = &z;
      b.truncate = false;
      b.write_header = nullptr;
      b.copy_mesh = nullptr;
      auto once = make_strategy("aggregated");
      once->open(b);
      once->write({0, frame.time, frame.encoder, nullptr});
      once->close();
      z_written_ = true;
    }
  }

  void wait() override { bytes_->wait(); }

  void close() override {
    bytes_->close();
    done_ = bytes_->phases();
    bytes_.reset();
    write_tree();
  }

  void abandon() override {
    if (bytes_) try {
        bytes_->abandon();
      } catch (...) {
      }
    bytes_.reset();
  }

 private:
  // Each rank its share of the mesh's arrays, from the geometry; or rank 0 the mesh it holds.
  void write_mesh() {
    const auto& h = s_.header;
    StrategySetup create = s_;
    create.truncate = true;
    MPI_File fh = open_shared_file(s_.comm, create);
    std::optional<serafin::Reader> geometry;
    collective(s_.comm, [&] {
      if (!s_.geometry.empty()) geometry.emplace(vtkhdf::serafin_source(s_.geometry));
      else if (rank_ == 0 && !s_.mesh) throw UsageError("rank 0 must give the global mesh or a geometry file");
    });
    const int share = geometry ? rank_ : 0, shares = geometry ? size_ : 1;
    std::exception_ptr error;
    if (geometry || rank_ == 0) try {
        const std::int64_t n0 = h.npoin * share / shares, n1 = h.npoin * (share + 1) / shares;
        const std::int64_t e0 = h.nelem * share / shares, e1 = h.nelem * (share + 1) / shares;
        std::vector<double> xy(static_cast<std::size_t>(n1 - n0));
        std::vector<unsigned char> bytes;
        for (int c = 0; c < 2; ++c) {
          if (geometry)
            serafin::read_mesh_coordinates(h, *geometry, c == 1, n0, n1 - n0, xy.data());
          else
            std::copy_n((c == 0 ? s_.mesh->x : s_.mesh->y).begin() + n0, n1 - n0, xy.begin());
          bytes.resize(static_cast<std::size_t>((n1 - n0) * rs_));
          serafin::encode_reals(xy.data(), n1 - n0, h.precision, ByteOrder::Little, bytes.data());
          write_at(fh, (c == 0 ? x_ : y_) + n0 * rs_, bytes.data(), static_cast<std::int64_t>(bytes.size()), s_.final_path);
        }
        std::vector<std::int32_t> ints(static_cast<std::size_t>(std::max(n1 - n0, (e1 - e0) * h.ndp)));
        if (geometry)
          serafin::read_mesh_ipobo(h, *geometry, n0, n1 - n0, ints.data());
        else
          std::copy_n(s_.mesh->ipobo.begin() + n0, n1 - n0, ints.begin());
        to_order<4>(reinterpret_cast<unsigned char*>(ints.data()), static_cast<std::size_t>(n1 - n0), ByteOrder::Little);
        write_at(fh, ipobo_ + n0 * 4, ints.data(), (n1 - n0) * 4, s_.final_path);
        if (geometry)
          serafin::read_mesh_rows(h, *geometry, e0, e1 - e0, ints.data());
        else
          std::copy_n(s_.mesh->ikle.begin() + e0 * h.ndp, (e1 - e0) * h.ndp, ints.begin());
        to_order<4>(reinterpret_cast<unsigned char*>(ints.data()), static_cast<std::size_t>((e1 - e0) * h.ndp), ByteOrder::Little);
        write_at(fh, conn_ + e0 * h.ndp * 4, ints.data(), (e1 - e0) * h.ndp * 4, s_.final_path);
      } catch (...) {
        error = std::current_exception();
      }
    agree(s_.comm, error);
    close_shared_file(s_.comm, fh);
  }

  // Rank 0: what anabranch reads back (the SERAFIN header's facts, where the arrays are),
  // the tree after the last frame, and the superblock.
  void write_tree() {
    collective(s_.comm, [&] {
      if (rank_ != 0) return;
      const auto& h = s_.header;
      const int fd = ::open(s_.path.c_str(), O_WRONLY);
      if (fd < 0) throw IoError::from_errno("cannot open", s_.path);
      auto put = [&](std::int64_t at, const std::string& bytes) {
        if (::pwrite(fd, bytes.data(), bytes.size(), static_cast<off_t>(at)) != static_cast<ssize_t>(bytes.size())) {
          const int e = errno;
          ::close(fd);
          errno = e;
          throw IoError::from_errno("cannot write the CGNS tree of " + s_.final_path + " at byte " + std::to_string(at), s_.path);
        }
      };
      nlohmann::json index;
      index["format"] = "anabranch-cgns-mesh";
      index["version"] = 1;
      // SERAFIN's text as stored (bytes, which need not be UTF-8): in hexadecimal
      auto hex = [](const std::string& t) {
        static const char* digits = "0123456789abcdef";
        std::string out;
        for (unsigned char c : t) out += {digits[c >> 4], digits[c & 15]};
        return out;
      };
      index["title"] = hex(h.title);
      nlohmann::json vars = nlohmann::json::array();
      for (const auto& v : h.variables) vars.push_back({hex(v.name), hex(v.unit)});
      index["variables"] = vars;
      index["iparam"] = h.iparam;
      if (h.date) index["date"] = *h.date;
      index["sizes"] = {h.nelem, h.npoin, h.ndp, h.sizes4};
      index["precision"] = h.precision == Precision::Double ? "double" : "single";
      index["byte_order"] = h.byte_order == ByteOrder::Big ? "big" : "little";
      index["times"] = times_;
      index["arrays"] = {{"x", x_}, {"y", y_}, {"z", z_written_ ? z_ : -1}, {"ipobo", ipobo_}, {"connectivity", conn_}, {"frames", frames_at_}};
      cgns::MeshFile m;
      m.npoin = h.npoin;
      m.nelem = h.nelem;
      m.ndp = h.ndp;
      m.three_d = three_d_;
      for (const auto& v : h.variables) m.variables.push_back(v.name);
      m.times = times_;
      m.real_bytes = rs_;
      m.x = x_;
      m.y = y_;
      m.z = z_;
      m.connectivity = conn_;
      m.address = [&](std::int64_t f, int v) { return frames_at_ + (f * h.nvar() + v) * array_; };
      m.index = index.dump();
      m.index.insert(1, std::string(cgns::kEndPlaceholder) + ",");
      m.index_address = frames_at_ + static_cast<std::int64_t>(times_.size()) * h.nvar() * array_;
      m.ipobo_address = ipobo_;
      std::int64_t end = 0;
      const std::int64_t root = cgns::write_tree(m, m.index_address + static_cast<std::int64_t>(m.index.size()), put, end);
      cgns::finish_index(m.index, end);
      put(m.index_address, m.index);
      put(0, hdf5_bytes::Writer::superblock(root, end));
      if (::close(fd) != 0) throw IoError::from_errno("cannot close", s_.path);
    });
  }

  StrategySetup s_;
  int rank_ = 0, size_ = 1, rs_ = 4;
  bool three_d_ = false, z_written_ = false;
  std::int64_t array_ = 0, x_ = 0, y_ = 0, z_ = -1, ipobo_ = 0, conn_ = 0, frames_at_ = 0;
  std::unique_ptr<StretchedFrame> frame_;
  std::unique_ptr<Strategy> bytes_;
  PhaseTimes done_;
  std::vector<double> times_;
};

}  // namespace

std::unique_ptr<Strategy> make_cgns_strategy() { return std::make_unique<CgnsStrategy>(); }

}  // namespace anabranch::pio
