// aggregated (the default) and aggregated-async: a few writers per node (the shared-memory
// split of the communicator) own contiguous stretches of every variable record. In rounds
// bounded by the aggregation buffer, every rank sends the values of its owned nodes in the
// round's stretch to the writer of that stretch; writers lay them out in file order (the
// time record and markers included) and write large contiguous pieces with collective
// calls among writers only. No rank ever holds more than its own values plus one round's
// buffer. The async variant posts the writes with MPI_File_iwrite_at_all and returns: the
// caller computes while the frame goes to disk; wait() (or the next frame) completes it.
#include <algorithm>
#include <cstring>

#include "core/error.hpp"
#include "pio/mpi_util.hpp"
#include "pio/shared_file.hpp"
#include "pio/strategy.hpp"
#include "pio/topology.hpp"

namespace anabranch::pio {
namespace {

class AggregatedStrategy final : public Strategy {
 public:
  explicit AggregatedStrategy(bool async) : async_(async) {}
  const char* name() const override { return async_ ? "aggregated-async" : "aggregated"; }

  void open(const StrategySetup& setup) override {
    s_ = setup;
    MPI_Comm_rank(s_.comm, &rank_);
    MPI_Comm_size(s_.comm, &size_);
    {
      Topology topo(s_.comm);
      is_writer_ = topo.node_rank < std::max(1, s_.writers_per_node);
    }
    check_mpi(MPI_Comm_split(s_.comm, is_writer_ ? 0 : MPI_UNDEFINED, rank_, &wcomm_), "MPI_Comm_split");
    std::vector<int> flags(static_cast<std::size_t>(size_));
    int me = is_writer_ ? 1 : 0;
    MPI_Allgather(&me, 1, MPI_INT, flags.data(), 1, MPI_INT, s_.comm);
    for (int r = 0; r < size_; ++r)
      if (flags[static_cast<std::size_t>(r)]) writer_ranks_.push_back(r);
    nwriters_ = static_cast<int>(writer_ranks_.size());
    if (is_writer_) MPI_Comm_rank(wcomm_, &windex_);
    const int nvar = s_.layout.nvar, rs = s_.layout.real_bytes;
    entry_bytes_ = std::max<std::int64_t>(1, static_cast<std::int64_t>(nvar) * rs);
    chunk_ = std::max<std::int64_t>(1, s_.buffer_bytes / entry_bytes_);
    const std::int64_t span = chunk_ * nwriters_;
    rounds_ = std::max<std::int64_t>(1, (s_.layout.npoin + span - 1) / span);
    plan_rounds();
    std::exception_ptr error;
    if (is_writer_) {
      try {
        fh_ = open_shared_file(wcomm_, s_);
      } catch (...) {
        error = std::current_exception();
      }
    }
    agree(s_.comm, error);
  }

  void write(const EncodedFrame& frame) override {
    std::exception_ptr error;
    const auto n = static_cast<std::int64_t>(s_.owned->size());
    const int nvar = s_.layout.nvar, rs = s_.layout.real_bytes;
    const unsigned char* values = frame.owned_values->data();
    for (std::int64_t r = 0; r < rounds_; ++r) {
      Round& R = rounds[static_cast<std::size_t>(r)];
      // Each writer's segment of every variable is contiguous in the owned values.
      send_.resize(static_cast<std::size_t>((R.last - R.first) * entry_bytes_));
      unsigned char* out = send_.data();
      for (const auto& seg : R.segments)
        for (int v = 0; v < nvar; ++v) {
          const std::size_t len = static_cast<std::size_t>((seg.i1 - seg.i0) * rs);
          std::memcpy(out, values + (v * n + seg.i0) * rs, len);
          out += len;
        }
      recv_.resize(static_cast<std::size_t>(R.recv_bytes));
      MPI_Alltoallv(send_.data(), R.scount.data(), R.sdisp.data(), MPI_BYTE, recv_.data(), R.rcount.data(), R.rdisp.data(),
                    MPI_BYTE, s_.comm);
      if (!is_writer_) continue;
      // Lay out this writer's stretch of every variable, fixed bytes included, and write.
      const std::int64_t round_start = r * chunk_ * nwriters_;
      const std::int64_t c0 = round_start + windex_ * chunk_;
      const std::int64_t c1 = std::max(c0, std::min(s_.layout.npoin, c0 + chunk_));
      auto& slot = slots_[static_cast<std::size_t>(r % 2)];
      complete(slot);  // its previous writes must be done before the buffers are reused
      try {
        layout_pieces(frame, R, c0, c1, slot);
      } catch (...) {
        if (!error) error = std::current_exception();
        for (auto& p : slot.pieces) p.second.clear();
      }
      for (auto& [offset, bytes] : slot.pieces) {
        MPI_Request req = MPI_REQUEST_NULL;
        int rc;
        if (async_) {
          rc = MPI_File_iwrite_at(fh_, offset, bytes.data(), static_cast<int>(bytes.size()), MPI_BYTE, &req);
          slot.requests.push_back(req);
        } else {
          MPI_Status st;
          rc = MPI_File_write_at(fh_, offset, bytes.data(), static_cast<int>(bytes.size()), MPI_BYTE, &st);
        }
        if (rc != MPI_SUCCESS && !error) {
          try {
            check_mpi(rc, async_ ? "MPI_File_iwrite_at_all" : "MPI_File_write_at_all");
          } catch (...) {
            error = std::current_exception();
          }
        }
      }
    }
    agree(s_.comm, error);
  }

  void wait() override {
    std::exception_ptr error;
    try {
      for (auto& slot : slots_) complete(slot);
    } catch (...) {
      error = std::current_exception();
    }
    agree(s_.comm, error);
  }

  void close() override {
    wait();
    std::exception_ptr error;
    if (is_writer_) {
      try {
        close_shared_file(wcomm_, fh_);
      } catch (...) {
        error = std::current_exception();
      }
      MPI_Comm_free(&wcomm_);
    }
    agree(s_.comm, error);
  }

 private:
  struct Segment {
    int writer;
    std::int64_t i0, i1;  // owned indices sent to it
  };
  struct Run {
    std::int64_t off, len;  // place in the writer's stretch
    std::int64_t at;        // first node of the run in the source's block
  };
  struct Source {
    std::int64_t recv_offset = 0, count = 0;  // its block in the receive buffer, nodes in it
    std::vector<Run> runs;
  };
  struct Round {
    std::int64_t first = 0, last = 0;  // owned indices sent in this round
    std::vector<Segment> segments;
    std::vector<int> scount, sdisp, rcount, rdisp;
    std::int64_t recv_bytes = 0;
    std::vector<Source> sources;  // writers: who sends what
  };
  std::vector<Round> rounds;

  struct Slot {
    std::vector<std::pair<std::int64_t, std::vector<unsigned char>>> pieces;  // (offset, bytes) per variable
    std::vector<MPI_Request> requests;
  };

  void complete(Slot& slot) {
    if (slot.requests.empty()) return;
    std::vector<MPI_Status> st(slot.requests.size());
    const int rc = MPI_Waitall(static_cast<int>(slot.requests.size()), slot.requests.data(), st.data());
    slot.requests.clear();
    check_mpi(rc, "MPI_Waitall (file writes)");
  }

  // The bytes of nodes [c0, c1) of every variable of the frame, with the time record and
  // the markers that border them; one contiguous piece per variable (or the time record
  // alone when there is no variable).
  void layout_pieces(const EncodedFrame& frame, const Round& R, std::int64_t c0, std::int64_t c1, Slot& slot) {
    const auto& L = s_.layout;
    const int nvar = L.nvar, rs = L.real_bytes;
    const std::int64_t npoin = L.npoin;
    auto fixed = frame_fixed_pieces(s_.header, L, frame.index, frame.time);  // time, then 2 markers per variable
    slot.pieces.resize(static_cast<std::size_t>(std::max(nvar, 1)));
    if (nvar == 0) {
      slot.pieces[0] = windex_ == 0 ? fixed[0] : std::make_pair(L.frame_offset(frame.index), std::vector<unsigned char>{});
      return;
    }
    std::vector<unsigned char*> dst(static_cast<std::size_t>(nvar), nullptr);
    for (int v = 0; v < nvar; ++v) {
      auto& [offset, bytes] = slot.pieces[static_cast<std::size_t>(v)];
      bytes.clear();
      offset = L.values_offset(frame.index, v) + c0 * rs;
      if (c1 <= c0) {
        offset = L.values_offset(frame.index, v);
        continue;
      }
      if (c0 == 0) {
        const auto& open = fixed[static_cast<std::size_t>(1 + 2 * v)].second;
        offset -= static_cast<std::int64_t>(open.size());
        if (v == 0) {
          offset -= static_cast<std::int64_t>(fixed[0].second.size());
          bytes.insert(bytes.end(), fixed[0].second.begin(), fixed[0].second.end());
        }
        bytes.insert(bytes.end(), open.begin(), open.end());
      }
      const std::size_t start = bytes.size();
      bytes.resize(start + static_cast<std::size_t>((c1 - c0) * rs));
      if (c1 == npoin) {
        const auto& close = fixed[static_cast<std::size_t>(2 + 2 * v)].second;
        bytes.insert(bytes.end(), close.begin(), close.end());
      }
      dst[static_cast<std::size_t>(v)] = bytes.data() + start;
    }
    if (c1 <= c0) return;
    // Each source sent its nodes variable after variable; its runs say where they go.
    for (std::size_t q = 0; q < R.sources.size(); ++q) {
      const auto& src = R.sources[q];
      const unsigned char* base = recv_.data() + src.recv_offset;
      for (int v = 0; v < nvar; ++v) {
        const unsigned char* from = base + static_cast<std::int64_t>(v) * src.count * rs;
        for (const auto& run : src.runs) {
          if (run.off < 0 || run.off + run.len > c1 - c0) throw MpiError("aggregated strategy: a run falls outside this writer's stretch");
          std::memcpy(dst[static_cast<std::size_t>(v)] + run.off * rs, from + run.at * rs, static_cast<std::size_t>(run.len * rs));
        }
      }
    }
  }

  // Once, at open: for every round, which owned nodes go to which writer (senders), and
  // where every source's nodes land in the writer's stretch, as runs (writers).
  void plan_rounds() {
    const auto& owned = *s_.owned;
    const auto n = static_cast<std::int64_t>(owned.size());
    const std::int64_t npoin = s_.layout.npoin;
    rounds.resize(static_cast<std::size_t>(rounds_));
    std::int64_t at = 0;
    for (std::int64_t r = 0; r < rounds_; ++r) {
      Round& R = rounds[static_cast<std::size_t>(r)];
      const std::int64_t round_start = r * chunk_ * nwriters_;
      const std::int64_t round_end = std::min(npoin, round_start + chunk_ * nwriters_);
      R.first = at;
      R.scount.assign(static_cast<std::size_t>(size_), 0);
      R.sdisp.assign(static_cast<std::size_t>(size_), 0);
      R.rcount.assign(static_cast<std::size_t>(size_), 0);
      R.rdisp.assign(static_cast<std::size_t>(size_), 0);
      // Runs (offset in the writer's chunk, length) sent to each writer: 2 ints each.
      std::vector<std::vector<std::int64_t>> runs_to(static_cast<std::size_t>(size_));
      while (at < n && owned[static_cast<std::size_t>(at)] < round_end) {
        const std::int64_t w = (owned[static_cast<std::size_t>(at)] - round_start) / chunk_;
        const std::int64_t c0 = round_start + w * chunk_, c1 = std::min(npoin, c0 + chunk_);
        Segment seg{static_cast<int>(w), at, at};
        auto& rl = runs_to[static_cast<std::size_t>(writer_ranks_[static_cast<std::size_t>(w)])];
        while (at < n && owned[static_cast<std::size_t>(at)] < c1) {
          const std::int64_t g = owned[static_cast<std::size_t>(at)];
          if (!rl.empty() && rl[rl.size() - 2] + rl.back() == g - c0)
            ++rl.back();
          else {
            rl.push_back(g - c0);
            rl.push_back(1);
          }
          ++at;
        }
        seg.i1 = at;
        R.scount[static_cast<std::size_t>(writer_ranks_[static_cast<std::size_t>(w)])] +=
            static_cast<int>((seg.i1 - seg.i0) * entry_bytes_);
        R.segments.push_back(seg);
      }
      R.last = at;
      for (int q = 1; q < size_; ++q)
        R.sdisp[static_cast<std::size_t>(q)] = R.sdisp[static_cast<std::size_t>(q - 1)] + R.scount[static_cast<std::size_t>(q - 1)];
      MPI_Alltoall(R.scount.data(), 1, MPI_INT, R.rcount.data(), 1, MPI_INT, s_.comm);
      for (int q = 1; q < size_; ++q)
        R.rdisp[static_cast<std::size_t>(q)] = R.rdisp[static_cast<std::size_t>(q - 1)] + R.rcount[static_cast<std::size_t>(q - 1)];
      R.recv_bytes = R.rdisp.back() + R.rcount.back();
      // Exchange the run lists once.
      std::vector<int> rs_count(static_cast<std::size_t>(size_)), rr_count(static_cast<std::size_t>(size_)),
          rs_disp(static_cast<std::size_t>(size_), 0), rr_disp(static_cast<std::size_t>(size_), 0);
      std::vector<std::int64_t> flat;
      for (int q = 0; q < size_; ++q) {
        rs_count[static_cast<std::size_t>(q)] = static_cast<int>(runs_to[static_cast<std::size_t>(q)].size());
        flat.insert(flat.end(), runs_to[static_cast<std::size_t>(q)].begin(), runs_to[static_cast<std::size_t>(q)].end());
      }
      MPI_Alltoall(rs_count.data(), 1, MPI_INT, rr_count.data(), 1, MPI_INT, s_.comm);
      for (int q = 1; q < size_; ++q) {
        rs_disp[static_cast<std::size_t>(q)] = rs_disp[static_cast<std::size_t>(q - 1)] + rs_count[static_cast<std::size_t>(q - 1)];
        rr_disp[static_cast<std::size_t>(q)] = rr_disp[static_cast<std::size_t>(q - 1)] + rr_count[static_cast<std::size_t>(q - 1)];
      }
      std::vector<std::int64_t> got(static_cast<std::size_t>(rr_disp.back() + rr_count.back()));
      MPI_Alltoallv(flat.data(), rs_count.data(), rs_disp.data(), MPI_INT64_T, got.data(), rr_count.data(), rr_disp.data(),
                    MPI_INT64_T, s_.comm);
      for (int q = 0; q < size_; ++q) {
        if (R.rcount[static_cast<std::size_t>(q)] == 0) continue;
        Source src;
        src.recv_offset = R.rdisp[static_cast<std::size_t>(q)];
        src.count = R.rcount[static_cast<std::size_t>(q)] / entry_bytes_;
        std::int64_t pos = 0;
        for (int k = rr_disp[static_cast<std::size_t>(q)]; k < rr_disp[static_cast<std::size_t>(q)] + rr_count[static_cast<std::size_t>(q)]; k += 2) {
          src.runs.push_back({got[static_cast<std::size_t>(k)], got[static_cast<std::size_t>(k) + 1], pos});
          pos += got[static_cast<std::size_t>(k) + 1];
        }
        R.sources.push_back(std::move(src));
      }
    }
  }

  bool async_;
  StrategySetup s_;
  int rank_ = 0, size_ = 1;
  bool is_writer_ = false;
  MPI_Comm wcomm_ = MPI_COMM_NULL;
  MPI_File fh_ = MPI_FILE_NULL;
  std::vector<int> writer_ranks_;
  int nwriters_ = 1, windex_ = 0;
  std::int64_t entry_bytes_ = 0, chunk_ = 1, rounds_ = 1;
  std::vector<unsigned char> send_, recv_;
  Slot slots_[2];
};

}  // namespace

std::unique_ptr<Strategy> make_aggregated_strategy(bool async) { return std::make_unique<AggregatedStrategy>(async); }

}  // namespace anabranch::pio
