// tecplot: a mesh result as one Tecplot binary file (.plt; docs/formats/tecplot.md): a
// finite-element zone a frame, the frame's time its solution time, one strand. The first
// zone holds X, Y, its variables and the connectivity (0-based; TELEMAC-3D's prisms as
// FEBRICK with the last node of each triangle repeated, Tecplot's convention); the later
// zones hold their variables and share X, Y and the connectivity with it. A 3D result's
// first variable is its elevation Z, so Tecplot's third variable is the vertical axis.
// Every entry's place follows from the header: at open each rank writes its share of the
// mesh (read in shares from the geometry), each frame's values go to their places through
// the aggregated strategy, each zone's min/max is reduced over the ranks (one allreduce a
// frame) and rank 0 writes the entry's first bytes; at close rank 0 writes the header before
// the first entry (io/tecplot_header.hpp). The SERAFIN header's own facts (title, names,
// units, IPARAM, date) ride along as a dataset auxiliary record, so the file converts back
// to the same SERAFIN header.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <cstring>

#include "core/error.hpp"
#include "core/io.hpp"
#include "formats/tecplot.hpp"
#include "io/mesh_source.hpp"
#include "io/shared_file.hpp"
#include "io/strategy.hpp"
#include "io/tecplot_header.hpp"
#include "parallel/mpi_util.hpp"

namespace anabranch::pio {

namespace {

std::string trimmed(const std::string& s) {
  const auto end = s.find_last_not_of(' ');
  return end == std::string::npos ? std::string() : s.substr(0, end + 1);
}

class TecplotStrategy final : public Strategy {
 public:
  const char* name() const override { return "tecplot"; }
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
    const bool three_d = h.nplan() > 1;
    const tecplot::ZoneType type = h.ndp == 2   ? tecplot::ZoneType::FELineSeg
                                   : h.ndp == 3 ? tecplot::ZoneType::FETriangle
                                   : h.ndp == 4 ? (three_d ? tecplot::ZoneType::FETetrahedron : tecplot::ZoneType::FEQuadrilateral)
                                   : h.ndp == 6 ? tecplot::ZoneType::FEBrick
                                                : tecplot::ZoneType::Ordered;
    collective(s_.comm, [&] {
      if (type == tecplot::ZoneType::Ordered)
        throw UsageError(s_.final_path + ": Tecplot has no element of " + std::to_string(h.ndp) + " nodes for this mesh");
    });
    // The zones: the first holds the mesh, the others share it.
    first_.type = later_.type = type;
    first_.nodes = later_.nodes = h.npoin;
    first_.elements = later_.elements = h.nelem;
    first_.formats.assign(static_cast<std::size_t>(2 + h.nvar()), rs_ == 8 ? tecplot::Format::Double : tecplot::Format::Float);
    first_.share.assign(first_.formats.size(), -1);
    later_.formats = first_.formats;
    later_.share = first_.share;
    later_.share[0] = later_.share[1] = 0;
    later_.share_connectivity = 0;
    file_.title = trimmed(h.title.substr(0, std::min<std::size_t>(h.title.size(), 72)));
    file_.variables = {"X", "Y"};
    for (const auto& v : h.variables) file_.variables.push_back(trimmed(v.name));
    // The SERAFIN header's own facts, for a conversion back; the frames written, at close.
    file_.aux = {{"anabranch.serafin", serafin::header_facts(h)}, {tecplot::kFramesAux, tecplot::frames_text(0)}};
    // Room for the frames the caller announced (one at least): their zones' headers.
    const std::int64_t reserved = std::max<std::int64_t>(s_.frames, 1);
    {
      tecplot::File room = file_;
      for (std::int64_t f = 0; f < reserved; ++f) room.zones.push_back(zone(f, 0.0));
      collective(s_.comm, [&] { tecplot::header(room); });  // sizes past Tecplot's 32-bit counts: refused here
      room_ = tecplot::header_bytes(room);
    }
    head_first_ = tecplot::entry_head_bytes(first_);
    head_later_ = tecplot::entry_head_bytes(later_);
    size_first_ = tecplot::entry_bytes(first_);
    size_later_ = tecplot::entry_bytes(later_);
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
    const std::int64_t f = frame.index, entry = entry_at(f);
    const std::int64_t values = entry + (f == 0 ? head_first_ + 2 * array_ : head_later_);
    std::vector<std::int64_t> at;
    for (int v = 0; v < s_.header.nvar(); ++v) at.push_back(values + v * array_);
    collective(s_.comm, [&] { check_size_limit(s_.final_path, entry + (f == 0 ? size_first_ : size_later_), "frame " + std::to_string(f)); });
    const auto minmax = measure(frame);
    frame_->set(f, at);
    bytes_->write(frame);
    times_.push_back(frame.time);
    write_head(f, minmax);
  }

  void wait() override {
    if (bytes_) bytes_->wait();
  }

  void close() override {
    bytes_->close();
    done_ = bytes_->phases();
    bytes_.reset();
    const auto frames = static_cast<std::int64_t>(times_.size());
    if (frames == 0) write_head(0, std::vector<std::pair<double, double>>(static_cast<std::size_t>(s_.header.nvar()), {0.0, 0.0}));
    tecplot::File file = file_;
    file.aux.back().second = tecplot::frames_text(frames);
    for (std::int64_t f = 0; f < std::max<std::int64_t>(frames, 1); ++f) file.zones.push_back(zone(f, frames ? times_[static_cast<std::size_t>(f)] : 0.0));
    const std::int64_t last = std::max<std::int64_t>(frames, 1) - 1;
    write_tecplot_header(s_.comm, s_.path, file, room_, entry_at(last) + (last == 0 ? size_first_ : size_later_));
  }

  void abandon() override {
    if (bytes_) try {
        bytes_->abandon();
      } catch (...) {
      }
    bytes_.reset();
  }

 private:
  // Frame f's zone as the header lists it.
  tecplot::Zone zone(std::int64_t f, double time) const {
    tecplot::Zone z = f == 0 ? first_ : later_;
    char name[32];
    std::snprintf(name, sizeof name, "frame %06lld", static_cast<long long>(f));
    z.name = name;
    z.time = time;
    z.strand = 0;
    return z;
  }
  std::int64_t entry_at(std::int64_t f) const { return f == 0 ? room_ : room_ + size_first_ + (f - 1) * size_later_; }

  // Collective: the min/max of each variable of the frame over every rank's values.
  std::vector<std::pair<double, double>> measure(const EncodedFrame& frame) const {
    const int nvar = s_.header.nvar();
    std::vector<double> lo(static_cast<std::size_t>(nvar), std::numeric_limits<double>::infinity());
    std::vector<double> hi(lo.size(), -std::numeric_limits<double>::infinity());
    std::vector<unsigned char> buf;
    s_.frame->for_each_run([&](const Run& r) {
      if (r.array < 0 || r.array >= nvar) return;
      buf.resize(static_cast<std::size_t>(r.count * rs_));
      frame.encoder->encode(r.array, r.index, r.count, buf.data());
      double& l = lo[static_cast<std::size_t>(r.array)];
      double& h = hi[static_cast<std::size_t>(r.array)];
      for (std::int64_t k = 0; k < r.count; ++k) {
        double v;
        if (rs_ == 8) {
          std::memcpy(&v, buf.data() + 8 * k, 8);
        } else {
          float x;
          std::memcpy(&x, buf.data() + 4 * k, 4);
          v = x;
        }
        if (!std::isfinite(v)) continue;
        l = std::min(l, v);
        h = std::max(h, v);
      }
    });
    return reduce(lo, hi);
  }
  std::vector<std::pair<double, double>> reduce(std::vector<double>& lo, std::vector<double>& hi) const {
    MPI_Allreduce(MPI_IN_PLACE, lo.data(), static_cast<int>(lo.size()), MPI_DOUBLE, MPI_MIN, s_.comm);
    MPI_Allreduce(MPI_IN_PLACE, hi.data(), static_cast<int>(hi.size()), MPI_DOUBLE, MPI_MAX, s_.comm);
    std::vector<std::pair<double, double>> mm(lo.size());
    for (std::size_t i = 0; i < lo.size(); ++i) mm[i] = lo[i] <= hi[i] ? std::make_pair(lo[i], hi[i]) : std::make_pair(0.0, 0.0);
    return mm;
  }

  // Collective: rank 0 writes zone f's entry head (its min/max pairs).
  void write_head(std::int64_t f, const std::vector<std::pair<double, double>>& vars) const {
    collective(s_.comm, [&] {
      if (rank_ != 0) return;
      std::vector<std::pair<double, double>> mm = f == 0 ? xy_ : std::vector<std::pair<double, double>>(2);
      mm.insert(mm.end(), vars.begin(), vars.end());
      const std::string head = tecplot::entry_head(f == 0 ? first_ : later_, mm);
      const int fd = ::open(s_.path.c_str(), O_WRONLY | O_CLOEXEC);
      if (fd < 0) throw IoError::from_errno("cannot open", s_.path);
      try {
        pwrite_all(fd, head.data(), head.size(), entry_at(f), s_.final_path);
      } catch (...) {
        ::close(fd);
        throw;
      }
      if (::close(fd) != 0) throw IoError::from_errno("cannot write", s_.final_path);
    });
  }

  // Each rank its share of the mesh's arrays (X, Y, the connectivity), from the geometry; or
  // rank 0 the mesh it holds. X's and Y's min/max reduced over the ranks.
  void write_mesh() {
    const auto& h = s_.header;
    StrategySetup create = s_;
    create.truncate = true;
    create.write_header = nullptr;
    MPI_File fh = open_shared_file(s_.comm, create);
    const MeshSource mesh(s_, rank_);
    const int share = mesh.shared() ? rank_ : 0, shares = mesh.shared() ? size_ : 1;
    const int npe = tecplot::nodes_per_element(first_.type);
    const std::int64_t x = room_ + head_first_, conn = x + (2 + h.nvar()) * array_;
    std::vector<double> lo(2, std::numeric_limits<double>::infinity()), hi(2, -std::numeric_limits<double>::infinity());
    std::exception_ptr error;
    if (mesh.shared() || rank_ == 0) try {
        const std::int64_t n0 = h.npoin * share / shares, n1 = h.npoin * (share + 1) / shares;
        const std::int64_t e0 = h.nelem * share / shares, e1 = h.nelem * (share + 1) / shares;
        std::vector<double> xy(static_cast<std::size_t>(n1 - n0));
        std::vector<unsigned char> bytes;
        for (int c = 0; c < 2; ++c) {
          mesh.coordinates(c, n0, n1 - n0, xy.data());
          for (double v : xy)
            if (std::isfinite(v)) lo[static_cast<std::size_t>(c)] = std::min(lo[static_cast<std::size_t>(c)], v), hi[static_cast<std::size_t>(c)] = std::max(hi[static_cast<std::size_t>(c)], v);
          bytes.resize(static_cast<std::size_t>((n1 - n0) * rs_));
          serafin::encode_reals(xy.data(), n1 - n0, h.precision, ByteOrder::Little, bytes.data());
          write_at(fh, x + c * array_ + n0 * rs_, bytes.data(), static_cast<std::int64_t>(bytes.size()), s_.final_path);
        }
        std::vector<std::int32_t> rows(static_cast<std::size_t>((e1 - e0) * h.ndp)), out(static_cast<std::size_t>((e1 - e0) * npe));
        mesh.rows(e0, e1 - e0, rows.data());
        for (std::int64_t e = 0; e < e1 - e0; ++e) {
          const std::int32_t* r = rows.data() + e * h.ndp;
          std::int32_t* o = out.data() + e * npe;
          if (h.ndp == 6) {  // a prism: the brick's 4th and 8th nodes repeat the 3rd and 7th
            const int from[8] = {0, 1, 2, 2, 3, 4, 5, 5};
            for (int k = 0; k < 8; ++k) o[k] = r[from[k]] - 1;
          } else {
            for (int k = 0; k < h.ndp; ++k) o[k] = r[k] - 1;
          }
        }
        to_order<4>(reinterpret_cast<unsigned char*>(out.data()), out.size(), ByteOrder::Little);
        write_at(fh, conn + e0 * npe * 4, out.data(), static_cast<std::int64_t>(out.size()) * 4, s_.final_path);
      } catch (...) {
        error = std::current_exception();
      }
    agree(s_.comm, error);
    close_shared_file(s_.comm, fh);
    xy_ = reduce(lo, hi);
  }

  StrategySetup s_;
  int rank_ = 0, size_ = 1, rs_ = 4;
  std::int64_t array_ = 0, room_ = 0, head_first_ = 0, head_later_ = 0, size_first_ = 0, size_later_ = 0;
  tecplot::File file_;             // the title, variables and auxiliary data (the zones at close)
  tecplot::Zone first_, later_;    // the first frame's zone (the mesh) and a later one
  std::vector<std::pair<double, double>> xy_;  // X's and Y's min/max
  std::unique_ptr<StretchedFrame> frame_;
  std::unique_ptr<Strategy> bytes_;
  PhaseTimes done_;
  std::vector<double> times_;
};

}  // namespace

std::unique_ptr<Strategy> make_tecplot_strategy() { return std::make_unique<TecplotStrategy>(); }

}  // namespace anabranch::pio
