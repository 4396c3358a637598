// hdf5: one VTKHDF file (docs/formats/hdf5.md) written with parallel HDF5. Every rank
// sends its owned values to the rank holding their block of the global numbering (rank r:
// nodes [NPOIN*r/P, NPOIN*(r+1)/P)), then each rank writes its block as one contiguous
// hyperslab in a collective H5Dwrite: MPI-IO sees P large sorted requests, never the
// scattered runs of a decomposition. No rank holds more than its own values plus its block.
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <limits>

#include "core/error.hpp"
#include "pio/mpi_util.hpp"
#include "pio/strategy.hpp"
#include "pio/vtkhdf.hpp"

namespace anabranch::pio {
namespace {

class Hdf5Strategy final : public Strategy {
 public:
  const char* name() const override { return "hdf5"; }
  bool serafin_file() const override { return false; }

  void open(const StrategySetup& setup) override {
    s_ = setup;
    MPI_Comm_rank(s_.comm, &rank_);
    MPI_Comm_size(s_.comm, &size_);
    plan_exchange();
    vtkhdf::OutputOptions o;
    o.final_path = s_.final_path;
    o.provenance["strategy"] = "hdf5";
    o.provenance["hints"] = s_.hints.str();
    const auto& e = s_.hints.entries();
    if (auto it = e.find("striping_unit"); it != e.end()) o.alignment = std::atoll(it->second.c_str());
    out_ = std::make_unique<vtkhdf::Output>(s_.comm, s_.path, s_.header, s_.info, o);
    Mesh read;
    const Mesh* mesh = nullptr;
    collective(s_.comm, [&] {
      if (rank_ != 0) return;
      if (s_.mesh) {
        mesh = s_.mesh;
      } else {
        if (s_.geometry.empty()) throw UsageError("rank 0 must give the global mesh or a geometry file");
        read = serafin::Reader(s_.geometry).read_mesh();
        mesh = &read;
      }
    });
    out_->write_mesh(mesh);
  }

  void write(const EncodedFrame& frame) override {
    const int nvar = s_.layout.nvar, rs = s_.layout.real_bytes;
    const auto n = static_cast<std::int64_t>(s_.owned->size());
    // Owned values are sorted by node: each destination's are one segment per variable.
    send_.resize(static_cast<std::size_t>(n * nvar * rs));
    unsigned char* out = send_.data();
    const unsigned char* in = frame.owned_values->data();
    for (int r = 0; r < size_; ++r)
      for (int v = 0; v < nvar; ++v) {
        const std::size_t len = static_cast<std::size_t>(scount_[static_cast<std::size_t>(r)] * rs);
        std::memcpy(out, in + (v * n + sdisp_[static_cast<std::size_t>(r)]) * rs, len);
        out += len;
      }
    std::vector<int> sc(static_cast<std::size_t>(size_)), sd(sc.size()), rc(sc.size()), rd(sc.size());
    for (int r = 0; r < size_; ++r) {
      sc[static_cast<std::size_t>(r)] = static_cast<int>(scount_[static_cast<std::size_t>(r)] * nvar);
      sd[static_cast<std::size_t>(r)] = static_cast<int>(sdisp_[static_cast<std::size_t>(r)] * nvar);
      rc[static_cast<std::size_t>(r)] = static_cast<int>(rcount_[static_cast<std::size_t>(r)] * nvar);
      rd[static_cast<std::size_t>(r)] = static_cast<int>(rdisp_[static_cast<std::size_t>(r)] * nvar);
    }
    recv_.resize(static_cast<std::size_t>(received_ * nvar * rs));
    MPI_Datatype real;
    MPI_Type_contiguous(rs, MPI_BYTE, &real);
    MPI_Type_commit(&real);
    MPI_Alltoallv(send_.data(), sc.data(), sd.data(), real, recv_.data(), rc.data(), rd.data(), real, s_.comm);
    MPI_Type_free(&real);
    // Into block order: variable after variable, node after node.
    const std::int64_t count = block_last_ - block_first_;
    block_.resize(static_cast<std::size_t>(count * nvar * rs));
    const unsigned char* p = recv_.data();
    for (int r = 0; r < size_; ++r) {
      const std::int64_t m = rcount_[static_cast<std::size_t>(r)], d = rdisp_[static_cast<std::size_t>(r)];
      for (int v = 0; v < nvar; ++v)
        for (std::int64_t i = 0; i < m; ++i, p += rs)
          std::memcpy(block_.data() + (v * count + position_[static_cast<std::size_t>(d + i)]) * rs, p, static_cast<std::size_t>(rs));
    }
    out_->write_frame(frame.time, block_first_, count, block_.data());
  }

  void close() override {
    if (out_) out_->close();
  }

 private:
  std::int64_t block_start(int r) const { return s_.layout.npoin * r / size_; }

  // Once: who sends what to whom, and where each received value goes in the block.
  void plan_exchange() {
    const auto& owned = *s_.owned;
    const auto n = static_cast<std::int64_t>(owned.size());
    scount_.assign(static_cast<std::size_t>(size_), 0);
    sdisp_.assign(static_cast<std::size_t>(size_), 0);
    std::int64_t i = 0;
    for (int r = 0; r < size_; ++r) {
      sdisp_[static_cast<std::size_t>(r)] = i;
      const std::int64_t end = block_start(r + 1);
      std::int64_t j = i;
      while (j < n && owned[static_cast<std::size_t>(j)] < end) ++j;
      scount_[static_cast<std::size_t>(r)] = j - i;
      i = j;
    }
    rcount_.assign(static_cast<std::size_t>(size_), 0);
    MPI_Alltoall(scount_.data(), 1, MPI_INT64_T, rcount_.data(), 1, MPI_INT64_T, s_.comm);
    rdisp_.assign(static_cast<std::size_t>(size_), 0);
    received_ = 0;
    for (int r = 0; r < size_; ++r) {
      rdisp_[static_cast<std::size_t>(r)] = received_;
      received_ += rcount_[static_cast<std::size_t>(r)];
    }
    block_first_ = block_start(rank_);
    block_last_ = block_start(rank_ + 1);
    collective(s_.comm, [&] {
      if (received_ != block_last_ - block_first_)
        throw UsageError("the ranks' owned nodes do not cover the block of rank " + std::to_string(rank_));
      if (n * s_.layout.nvar > std::numeric_limits<int>::max() || received_ * s_.layout.nvar > std::numeric_limits<int>::max())
        throw UsageError("more than 2^31 values per rank and frame: use more ranks");
    });
    std::vector<int> sc(static_cast<std::size_t>(size_)), sd(sc.size()), rc(sc.size()), rd(sc.size());
    for (int r = 0; r < size_; ++r) {
      sc[static_cast<std::size_t>(r)] = static_cast<int>(scount_[static_cast<std::size_t>(r)]);
      sd[static_cast<std::size_t>(r)] = static_cast<int>(sdisp_[static_cast<std::size_t>(r)]);
      rc[static_cast<std::size_t>(r)] = static_cast<int>(rcount_[static_cast<std::size_t>(r)]);
      rd[static_cast<std::size_t>(r)] = static_cast<int>(rdisp_[static_cast<std::size_t>(r)]);
    }
    std::vector<std::int64_t> gids(static_cast<std::size_t>(received_));
    MPI_Alltoallv(owned.data(), sc.data(), sd.data(), MPI_INT64_T, gids.data(), rc.data(), rd.data(), MPI_INT64_T, s_.comm);
    position_.resize(gids.size());
    for (std::size_t k = 0; k < gids.size(); ++k) position_[k] = gids[k] - block_first_;
  }

  StrategySetup s_;
  int rank_ = 0, size_ = 1;
  std::unique_ptr<vtkhdf::Output> out_;
  std::vector<std::int64_t> scount_, sdisp_, rcount_, rdisp_, position_;
  std::int64_t received_ = 0, block_first_ = 0, block_last_ = 0;
  std::vector<unsigned char> send_, recv_, block_;
};

}  // namespace

std::unique_ptr<Strategy> make_hdf5_strategy() { return std::make_unique<Hdf5Strategy>(); }

}  // namespace anabranch::pio
