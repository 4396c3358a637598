// hdf5: one VTKHDF file (docs/formats/hdf5.md) written with parallel HDF5 by a few writers
// per node (the shared-memory split, as in aggregated). Every rank sends its owned values to
// the writer holding their block of the global numbering (writer w of W: nodes
// [NPOIN*w/W, NPOIN*(w+1)/W)); each writer writes its block as one contiguous hyperslab in
// a collective H5Dwrite among writers only. HDF5 and MPI-IO see W large sorted requests,
// never the scattered runs of a decomposition, and only writers open the file (HDF5's
// per-frame metadata collectives cost W ranks, not P). A writer holds its block of one
// frame besides its own values.
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <optional>

#include "core/error.hpp"
#include "core/outputs.hpp"
#include "parallel/mpi_util.hpp"

#include "partition/partition_distributed.hpp"
#include "io/strategy.hpp"
#include "parallel/topology.hpp"
#include "h5/vtkhdf.hpp"

namespace anabranch::pio {
namespace {

class Hdf5Strategy final : public Strategy {
 public:
  const char* name() const override { return "hdf5"; }
  bool serafin_file() const override { return false; }

  bool one_file() const override { return !s_.file_per_step; }

  // Abandoned (a write failed): one file per step removes the step it was writing (a single
  // file is the writer's to remove).
  ~Hdf5Strategy() override {
    release_info();
    if (!s_.file_per_step || !out_) return;
    const std::string temp = temp_of(vtkhdf::step_path(s_.final_path, steps_));
    out_.reset();  // closes the abandoned file, collectively over the writers
    if (windex_ == 0) ::unlink(temp.c_str());
    release_temporary(temp);
  }
  int files_created(int) const override { return s_.file_per_step ? static_cast<int>(std::max<std::int64_t>(steps_, 1)) : 1; }

  void open(const StrategySetup& setup) override {
    s_ = setup;
    long long pid = static_cast<long long>(::getpid());
    MPI_Bcast(&pid, 1, MPI_LONG_LONG, 0, s_.comm);
    pid_ = pid;
    MPI_Comm_rank(s_.comm, &rank_);
    MPI_Comm_size(s_.comm, &size_);
    {
      Topology topo(s_.comm);  // rank 0 is node rank 0: a writer, with the mesh
      NodeWriters writers = choose_writers(s_.comm, topo.node_comm, s_.writers_per_node, s_.final_path);
      is_writer_ = writers.is_writer;
      windex_ = writers.index;
      wcomm_ = writers.comm;
      owns_wcomm_ = writers.owns_comm;
      writer_ranks_ = std::move(writers.ranks);
    }
    plan_exchange();
    if (!s_.geometry.empty()) gather_mesh_shares();
    // ROMIO (MPICH) reads a region before writing into it when a write leaves holes (data
    // sieving): HDF5's metadata pieces then cost the writers reads of the file they make.
    // Off unless the hints say otherwise (Open MPI's OMPIO ignores the key).
    if (!s_.hints.entries().count("romio_ds_write")) {
      if (s_.info == MPI_INFO_NULL)
        MPI_Info_create(&info_);
      else
        MPI_Info_dup(s_.info, &info_);
      MPI_Info_set(info_, "romio_ds_write", "disable");
      s_.info = info_;
    }
    std::exception_ptr error;
    if (is_writer_) {
      try {
        vtkhdf::OutputOptions& o = options_;
        o.final_path = s_.final_path;
        o.flush_frames = s_.flush_frames;
        o.provenance["strategy"] = s_.file_per_step ? "hdf5 (one file per step)" : "hdf5";
        o.provenance["hints"] = s_.hints.str();
        o.provenance["ranks"] = std::to_string(size_);
        o.provenance["writers"] = std::to_string(writer_ranks_.size());
        for (const auto& [k, v] : s_.provenance) o.provenance[k] = v;
        const auto& e = s_.hints.entries();
        if (auto it = e.find("striping_unit"); it != e.end()) o.alignment = std::atoll(it->second.c_str());
        // One file per step: the first step's file is created now, with the mesh; the next
        // ones link to its mesh. Each appears under its name when complete.
        if (s_.file_per_step) {
          o.xdmf = false;
          o.final_path = vtkhdf::step_path(s_.final_path, 0);
        }
        if (s_.file_per_step) register_temporary(temp_of(o.final_path));  // created under Writer's guard
        out_ = std::make_unique<vtkhdf::Output>(wcomm_, s_.file_per_step ? temp_of(o.final_path) : s_.path, s_.header, s_.info, o);
        if (!s_.geometry.empty()) {  // every rank read its share of the geometry: each writer writes its own
          out_->write_mesh(mesh_share_);
          mesh_share_ = {};
        } else {
          collective(wcomm_, [&] {
            if (windex_ == 0 && !s_.mesh) throw UsageError("rank 0 must give the global mesh or a geometry file");
          });
          out_->write_mesh(windex_ == 0 ? s_.mesh : nullptr);
        }
      } catch (...) {
        error = std::current_exception();
      }
    }
    agree(s_.comm, error);
  }

  // The geometry's mesh records, each rank reading its share (1/P) of IKLE's rows, IPOBO,
  // X and Y and sending the parts of it that each writer's share (1/W) holds to that writer:
  // no rank reads more than its share, and each writer receives the share it writes.
  void gather_mesh_shares() {
    std::optional<serafin::Reader> geo;
    std::vector<std::int32_t> rows, ipobo;
    std::vector<double> xy[2];
    const Slices nodes{s_.header.npoin, size_}, elems{s_.header.nelem, size_};
    int ndp = 3, nplan = 1;
    collective(s_.comm, [&] {
      geo.emplace(s_.geometry);
      serafin::check_mesh_source(s_.header, *geo);  // the header's mesh, or the 2D mesh it extrudes
      ndp = s_.header.ndp;
      nplan = s_.header.nplan();
      const std::int64_t e0 = elems.first(rank_), ne = elems.first(rank_ + 1) - e0;
      const std::int64_t p0 = nodes.first(rank_), np = nodes.first(rank_ + 1) - p0;
      rows.resize(static_cast<std::size_t>(ne * ndp));
      serafin::read_mesh_rows(s_.header, *geo, e0, ne, rows.data());
      ipobo.resize(static_cast<std::size_t>(np));
      serafin::read_mesh_ipobo(s_.header, *geo, p0, np, ipobo.data());
      for (int c = 0; c < 2; ++c) {
        xy[c].resize(static_cast<std::size_t>(np));
        serafin::read_mesh_coordinates(s_.header, *geo, c == 1, p0, np, xy[c].data());
      }
    });
    const int nw = static_cast<int>(writer_ranks_.size());
    const Slices welems{s_.header.nelem, nw}, wnodes{s_.header.npoin, nw};
    if (is_writer_) {
      mesh_share_.nelem = s_.header.nelem;
      mesh_share_.npoin = s_.header.npoin;
      mesh_share_.ndp = ndp;
      mesh_share_.nplan = nplan;
      mesh_share_.ikle.resize(static_cast<std::size_t>((welems.first(windex_ + 1) - welems.first(windex_)) * ndp));
      const auto wn = static_cast<std::size_t>(wnodes.first(windex_ + 1) - wnodes.first(windex_));
      mesh_share_.ipobo.resize(wn);
      mesh_share_.x.resize(wn);
      mesh_share_.y.resize(wn);
    }
    // Record k of 4 (IKLE rows, IPOBO, X, Y): this rank's [a, b) against writer w's [c, d).
    std::vector<MPI_Request> requests;
    auto overlap = [](std::int64_t a, std::int64_t b, std::int64_t c, std::int64_t d) {
      return std::make_pair(std::max(a, c), std::min(b, d));
    };
    for (int k = 0; k < 4; ++k) {
      const Slices& mine = k == 0 ? elems : nodes;
      const Slices& theirs = k == 0 ? welems : wnodes;
      const int per = k == 0 ? ndp : 1;
      const std::int64_t a = mine.first(rank_), b = mine.first(rank_ + 1);
      for (int w = 0; w < nw && a < b; ++w) {
        const auto [lo, hi] = overlap(a, b, theirs.first(w), theirs.first(w + 1));
        if (lo >= hi) continue;
        requests.emplace_back();
        const auto off = static_cast<std::size_t>((lo - a) * per);
        const int n = static_cast<int>((hi - lo) * per);
        if (k < 2)
          MPI_Isend((k == 0 ? rows : ipobo).data() + off, n, MPI_INT32_T, writer_ranks_[static_cast<std::size_t>(w)], k, s_.comm,
                    &requests.back());
        else
          MPI_Isend(xy[k - 2].data() + off, n, MPI_DOUBLE, writer_ranks_[static_cast<std::size_t>(w)], k, s_.comm, &requests.back());
      }
      if (!is_writer_) continue;
      const std::int64_t c = theirs.first(windex_), d = theirs.first(windex_ + 1);
      for (int r = c < d ? mine.owner(c) : size_; r < size_ && mine.first(r) < d; ++r) {
        const auto [lo, hi] = overlap(mine.first(r), mine.first(r + 1), c, d);
        if (lo >= hi) continue;
        const auto off = static_cast<std::size_t>((lo - c) * per);
        const int n = static_cast<int>((hi - lo) * per);
        if (k < 2)
          MPI_Recv((k == 0 ? mesh_share_.ikle : mesh_share_.ipobo).data() + off, n, MPI_INT32_T, r, k, s_.comm, MPI_STATUS_IGNORE);
        else
          MPI_Recv((k == 2 ? mesh_share_.x : mesh_share_.y).data() + off, n, MPI_DOUBLE, r, k, s_.comm, MPI_STATUS_IGNORE);
      }
    }
    MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE);
  }

  void exchange_and_write(const EncodedFrame& frame) {
    const int nvar = s_.layout.nvar, rs = s_.layout.real_bytes;
    const auto n = static_cast<std::int64_t>(s_.owned->size());
    if (size_ == 1 && n == block_last_ - block_first_) {  // alone (convert, a serial write): owned nodes are the block
      block_.resize(static_cast<std::size_t>(n * nvar * rs));
      for (int v = 0; v < nvar; ++v) frame.encoder->encode(v, 0, n, block_.data() + v * n * rs);
    } else {
      exchange(frame, n, nvar, rs);
      if (!is_writer_) return;
    }
    write_block(frame);
  }

  // Owned values to the writers: each writer's block, variable after variable.
  void exchange(const EncodedFrame& frame, std::int64_t n, int nvar, int rs) {
    // Owned values are sorted by node: each destination's are one segment per variable,
    // encoded straight from the caller's arrays into the send buffer.
    send_.resize(static_cast<std::size_t>(n * nvar * rs));
    unsigned char* out = send_.data();
    for (int r = 0; r < size_; ++r)
      for (int v = 0; v < nvar; ++v) {
        const std::int64_t count = scount_[static_cast<std::size_t>(r)];
        frame.encoder->encode(v, sdisp_[static_cast<std::size_t>(r)], count, out);
        out += count * rs;
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
    if (!is_writer_) return;
    // Into block order: variable after variable, node after node.
    const std::int64_t count = block_last_ - block_first_;
    block_.resize(static_cast<std::size_t>(count * nvar * rs));
    if (rs == 4)
      scatter<std::uint32_t>(nvar, count);
    else
      scatter<std::uint64_t>(nvar, count);
  }

  void write_block(const EncodedFrame& frame) {
    const std::int64_t count = block_last_ - block_first_;
    if (s_.file_per_step && steps_ > 0) {
      vtkhdf::OutputOptions o = options_;
      o.final_path = vtkhdf::step_path(s_.final_path, steps_);
      o.mesh_link = base_name(vtkhdf::step_path(s_.final_path, 0));
      const CreatingTemporary creating;
      register_temporary(temp_of(o.final_path));
      out_ = std::make_unique<vtkhdf::Output>(wcomm_, temp_of(o.final_path), s_.header, s_.info, o);
    }
    out_->write_frame(frame.time, block_first_, count, block_.data());
    if (s_.file_per_step) {
      finish_step(vtkhdf::step_path(s_.final_path, steps_));
      times_.push_back(frame.time);
    }
    ++steps_;
  }

  // Closes the step's file and gives it its name.
  void finish_step(const std::string& target) {
    out_->close();
    out_.reset();
    collective(wcomm_, [&] {
      if (windex_ == 0 && std::rename(temp_of(target).c_str(), target.c_str()) != 0)
        throw IoError::from_errno("cannot rename " + temp_of(target) + " to", target);
    });
    release_temporary(temp_of(target));
  }

  static std::string base_name(const std::string& p) {
    const auto slash = p.rfind('/');
    return slash == std::string::npos ? p : p.substr(slash + 1);
  }
  std::string temp_of(const std::string& p) const { return p + ".tmp." + std::to_string(pid_); }

  void write(const EncodedFrame& frame) override {
    std::exception_ptr error;
    try {
      exchange_and_write(frame);
    } catch (...) {
      error = std::current_exception();
    }
    agree(s_.comm, error);
  }

  void release_info() {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (info_ != MPI_INFO_NULL && !finalized) MPI_Info_free(&info_);
    info_ = MPI_INFO_NULL;
  }

  void close() override {
    std::exception_ptr error;
    try {
      // The provenance's input checksums, every rank its share (the writers alone would
      // read N/W of each input).
      vtkhdf::checksum_inputs(s_.comm);
      if (s_.file_per_step) {
        if (out_ && steps_ == 0) finish_step(vtkhdf::step_path(s_.final_path, 0));  // no frame: the mesh alone
        if (is_writer_ && windex_ == 0) {
          std::vector<vtkhdf::XdmfFrame> frames;
          for (std::size_t k = 0; k < times_.size(); ++k)
            frames.push_back({base_name(vtkhdf::step_path(s_.final_path, static_cast<std::int64_t>(k))), 0, 1, times_[k]});
          vtkhdf::write_xdmf(vtkhdf::xdmf_path(s_.final_path), s_.header, frames);
        }
      } else if (out_) {
        out_->close();
      }
    } catch (...) {
      error = std::current_exception();
    }
    if (owns_wcomm_) MPI_Comm_free(&wcomm_);
    owns_wcomm_ = false;
    agree(s_.comm, error);
  }

 private:
  // Received values (per source: variable after variable) to their places in the block.
  template <class Word>
  void scatter(int nvar, std::int64_t count) {
    const auto* p = reinterpret_cast<const Word*>(recv_.data());
    auto* b = reinterpret_cast<Word*>(block_.data());
    for (int r = 0; r < size_; ++r) {
      const std::int64_t m = rcount_[static_cast<std::size_t>(r)];
      const std::int64_t* pos = position_.data() + rdisp_[static_cast<std::size_t>(r)];
      for (int v = 0; v < nvar; ++v, p += m) {
        Word* bv = b + v * count;
        for (std::int64_t i = 0; i < m; ++i) bv[pos[i]] = p[i];
      }
    }
  }

  // First node of writer w's block.
  std::int64_t block_start(int w) const {
    const auto nw = static_cast<std::int64_t>(writer_ranks_.size());
    return s_.layout.npoin * w / nw;
  }

  // Once: who sends what to whom, and where each received value goes in the block.
  void plan_exchange() {
    const auto& owned = *s_.owned;
    const auto n = static_cast<std::int64_t>(owned.size());
    scount_.assign(static_cast<std::size_t>(size_), 0);
    sdisp_.assign(static_cast<std::size_t>(size_), 0);
    std::int64_t i = 0;
    for (std::size_t w = 0; w < writer_ranks_.size(); ++w) {
      const auto r = static_cast<std::size_t>(writer_ranks_[w]);
      sdisp_[r] = i;
      const std::int64_t end = block_start(static_cast<int>(w) + 1);
      std::int64_t j = i;
      while (j < n && owned[static_cast<std::size_t>(j)] < end) ++j;
      scount_[r] = j - i;
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
    block_first_ = is_writer_ ? block_start(windex_) : 0;
    block_last_ = is_writer_ ? block_start(windex_ + 1) : 0;
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

  vtkhdf::Output::MeshShare mesh_share_;  // writers: their share of the geometry's mesh, until written
  MPI_Info info_ = MPI_INFO_NULL;         // the hints with HDF5's defaults, when made here
  StrategySetup s_;
  int rank_ = 0, size_ = 1;
  bool is_writer_ = false;
  MPI_Comm wcomm_ = MPI_COMM_NULL;
  bool owns_wcomm_ = false;
  int windex_ = 0;
  std::vector<int> writer_ranks_;
  std::unique_ptr<vtkhdf::Output> out_;
  vtkhdf::OutputOptions options_;
  std::int64_t steps_ = 0;
  long long pid_ = 0;
  std::vector<double> times_;  // one file per step: for the XDMF series
  std::vector<std::int64_t> scount_, sdisp_, rcount_, rdisp_, position_;
  std::int64_t received_ = 0, block_first_ = 0, block_last_ = 0;
  std::vector<unsigned char> send_, recv_, block_;
};

}  // namespace

std::unique_ptr<Strategy> make_hdf5_strategy() { return std::make_unique<Hdf5Strategy>(); }

}  // namespace anabranch::pio
