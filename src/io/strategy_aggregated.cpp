// aggregated (the default) and aggregated-async: a few writers per node (the shared-memory
// split of the communicator) own pieces of a frame's bytes. In rounds bounded by the
// aggregation buffer, the bytes of every rank's runs in a round's pieces reach the writer of
// each piece, laid out in file order (time records and markers are the fixed runs of the
// ranks the layout gives them to); writers write each piece, large and contiguous, in one
// call. No rank ever holds more than its own values plus one round's buffer. A round's
// pieces are spread over the frame (piece k of every round lies in the frame's k-th part):
// where each rank's values sit together (whole blocks), every rank still has values in
// every round, and the ranks encode side by side rather than one after another.
//
// The writers' buffers are MPI shared-memory windows on their node: a rank on the same node
// as a writer copies its values straight to their places in the writer's buffer (one copy,
// done by every rank of the node at once), and only values bound for writers on other
// nodes travel by MPI_Alltoallv and are placed by the writer. The pieces are already large
// and contiguous, so writers write them with independent MPI_File_write_at: measured here,
// MPI_File_write_at_all added Open MPI's own two-phase shuffle on top (2.0 vs 2.4 GB/s at 2
// ranks with 2 writers). Ranks encode their values (precision, byte order) as they copy
// them: one pass from the caller's arrays to the writer's buffer, vectorised over runs of
// consecutive local nodes. The async variant posts MPI_File_iwrite_at from a second buffer
// and returns: the caller computes while the frame goes to disk; wait() (or the next frame)
// completes it (with an MPI whose failed nonblocking writes never complete, MPICH's ROMIO,
// it writes in place like aggregated: see nonblocking_file_writes).
//
// Within a round the node works as a pipeline (write() below): each writer has kPieces
// pieces; a writer writes a piece as soon as every rank of the node has encoded it,
// while the others encode the next pieces, and the node's writers take turns at the file, so that one encodes while the
// other writes instead of both queueing on the file's lock. Waiting is done asleep on
// counters in the node's window (NodeWindow::arrive/wait), not in MPI calls that poll.
//
// Tried and measured (bench, 1,002,501 nodes x 4 variables, 2 to 8 ranks on the 2-core
// machine of the README): writing behind with two buffers per writer and an I/O thread
// doing the pwrite while the ranks fill the other buffer was 5-15% slower into the page
// cache than writing in place (the thread competes with the ranks for the cores, and Open
// MPI binds it to its rank's core), so writers write in place and the overlap comes from
// the pipeline above.

#include <algorithm>
#include <cstring>

#include "core/error.hpp"
#include "parallel/mpi_util.hpp"
#include "io/shared_file.hpp"
#include "io/strategy.hpp"
#include "parallel/topology.hpp"

namespace anabranch::pio {
namespace {

// Pieces of a writer's round: the pipeline's stages.
constexpr int kPieces = 4;

class AggregatedStrategy final : public SharedFileStrategy {
 public:
  explicit AggregatedStrategy(bool async) : async_(async) {}
  const char* name() const override { return async_ ? "aggregated-async" : "aggregated"; }

  void open(const StrategySetup& setup) override {
    s_ = setup;
    MPI_Comm_rank(s_.comm, &rank_);
    MPI_Comm_size(s_.comm, &size_);
    node_comm_ = split_node(s_.comm);
    NodeWriters writers = choose_writers(s_.comm, node_comm_, s_.writers_per_node, s_.final_path, Aggregators::Writers);
    is_writer_ = writers.is_writer;
    windex_ = writers.index;
    writer_ranks_ = std::move(writers.ranks);
    writer_node_rank_ = std::move(writers.node_rank);
    nwriters_ = static_cast<int>(writer_ranks_.size());
    // Each writer's round: what its buffer holds (at most 1 GiB, one write call a piece), and
    // no more than an even share of the frame (so that every writer has one).
    const std::int64_t frame = s_.frame->frame_bytes();
    const std::int64_t chunk = std::max<std::int64_t>(1, std::min({s_.buffer_bytes, std::int64_t{1} << 30, (frame + nwriters_ - 1) / nwriters_}));
    piece_ = (chunk + kPieces - 1) / kPieces;
    const std::int64_t span = piece_ * kPieces * nwriters_;
    rounds_ = std::max<std::int64_t>(1, (frame + span - 1) / span);
    create_windows();
    plan_rounds();
    // Every rank opens the file (the header's mesh records are copied a share per rank);
    // the writers alone write frames.
    fh_ = open_shared_file(s_.comm, s_);
  }

  // A round, pieces and turns. Every rank of the node encodes its bytes of piece k of every writer
  // straight into the buffers of the node's writers, then arrives on the piece's
  // counter: the piece is complete when all have. The node's writers write their pieces in
  // file order, taking turns (piece 0 of writer 0, of writer 1, ..., piece 1 of writer 0,
  // ...) on a turn counter: writes to one file do not run side by side on a local file
  // system (the inode lock, on which a second writer would spin), so a writer whose turn it
  // is not encodes meanwhile; a writer writes its pieces between its own as soon as they
  // are complete and its turn has come. Bytes from other nodes come by MPI after the node's
  // own; the writers then write everything.
  void write(const EncodedFrame& frame) override {
    std::exception_ptr error;
    const int rs = s_.frame->value_bytes();
    s_.frame->fixed_bytes(frame.index, frame.time, fixed_);
    for (std::int64_t r = 0; r < rounds_; ++r) {
      const Round& R = rounds_plan_[static_cast<std::size_t>(r)];
      const int slot = static_cast<int>(uses_ % static_cast<std::int64_t>(slots_.size()));
      Turns turns{static_cast<std::uint64_t>(uses_), window_->node_size, node_writers_, kPieces};
      ++uses_;
      // The slot's previous writes are done before anyone overwrites its buffers. A frame's
      // first round needs no fence when the writes are in place: the writers wrote the last
      // round before the agreement that ended the previous frame (or the open).
      double t = MPI_Wtime();
      if (is_writer_) try {
          complete(slots_[static_cast<std::size_t>(slot)]);
        } catch (...) {
          if (!error) error = std::current_exception();
        }
      if (r > 0 || async_) window_->fence(node_comm_);
      t = lap(t, times_.wait);
      unsigned char* const own = is_writer_ ? buffer_of(windex_, slot) : nullptr;
      std::size_t c = 0;
      int written = 0;  // pieces this writer has written (or passed after an error)
      for (int k = 0; k < kPieces; ++k) {
        for (; c < R.local.size() && R.local[c].piece == k; ++c) {
          const Cut& cut = R.local[c];
          encode_run(runs_[cut.run], cut.from, cut.to, rs, *frame.encoder, fixed_.data(), buffer_of(cut.writer, slot) + cut.dst);
        }
        window_->arrive(k);
        t = lap(t, times_.encode);
        if (is_writer_ && !any_remote_) {
          written = write_pieces(frame, turns, r, own, slot, written, k + 1, error);
          t = lap(t, times_.write);
        }
      }
      // Bytes for writers on other nodes: by MPI, placed by the writer.
      if (any_remote_) {
        send_.resize(static_cast<std::size_t>(R.send_bytes));
        unsigned char* out = send_.data();
        for (const auto& cut : R.remote) {
          encode_run(runs_[cut.run], cut.from, cut.to, rs, *frame.encoder, fixed_.data(), out);
          out += cut.to - cut.from;
        }
        t = lap(t, times_.encode);
        recv_.resize(static_cast<std::size_t>(R.recv_bytes));
        MPI_Alltoallv(send_.data(), R.scount.data(), R.sdisp.data(), MPI_BYTE, recv_.data(), R.rcount.data(), R.rdisp.data(),
                      MPI_BYTE, s_.comm);
        if (is_writer_) try {
            place_remote(R, own);
          } catch (...) {
            if (!error) error = std::current_exception();
          }
        t = lap(t, times_.exchange);
      }
      if (is_writer_) write_pieces(frame, turns, r, own, slot, written, -1, error);
      t = lap(t, times_.write);
      // Until the node's writers are done, asleep (MPI's collectives below would poll, and
      // take the cores from the ranks still encoding or writing).
      window_->wait(kPieces, turns.turn(kPieces, 0));
      lap(t, times_.wait);
    }
    const double t = MPI_Wtime();
    agree(s_.comm, error);
    lap(t, times_.wait);
  }

  void wait() override {
    const double t = MPI_Wtime();
    std::exception_ptr error;
    try {
      for (auto& slot : slots_) complete(slot);
    } catch (...) {
      error = std::current_exception();
    }
    agree(s_.comm, error);
    lap(t, times_.wait);
  }

  void abandon() override {
    for (auto& slot : slots_) try {
        complete(slot);
      } catch (...) {
      }
    if (fh_ != MPI_FILE_NULL) MPI_File_close(&fh_);
    release();
  }

  void close() override {
    wait();
    const double t = MPI_Wtime();
    std::exception_ptr error;
    try {
      close_shared_file(s_.comm, fh_);
    } catch (...) {
      error = std::current_exception();
    }
    release();
    if (error) std::rethrow_exception(error);
    lap(t, times_.close);
  }

 private:
  // Bytes [from, to) of run `run`, for writer `writer`'s buffer at byte `dst` (in its piece `piece`).
  struct Cut {
    int writer, piece;
    std::size_t run;
    std::int64_t from, to, dst;
  };
  struct Place {
    std::int64_t at, bytes;  // in the writer's buffer
  };
  struct Round {
    std::vector<Cut> local;   // for writers on this rank's node, by piece
    std::vector<Cut> remote;  // for writers on other nodes, by rank
    std::vector<int> scount, sdisp, rcount, rdisp;
    std::int64_t send_bytes = 0, recv_bytes = 0;
    std::vector<Place> places;  // writers: where what arrives goes, in order
  };
  struct Slot {
    std::vector<MPI_Request> requests;
    std::vector<std::pair<std::int64_t, std::int64_t>> asked;  // (offset, bytes) of each request
  };

  // Piece k of writer w in round r: frame bytes [first, end) (piece_ bytes from byte
  // k * piece_ of the writer's buffer). Frame byte `at` is in the piece of stripe at /
  // piece_: writer = stripe % writers, round = stripe / writers % rounds, k the rest.
  std::pair<std::int64_t, std::int64_t> piece(std::int64_t r, int w, int k) const {
    const std::int64_t first = ((k * rounds_ + r) * nwriters_ + w) * piece_;
    return {first, std::max(first, std::min(s_.frame->frame_bytes(), first + piece_))};
  }

  // Writer w's buffer (w on this node, or w = this writer).
  unsigned char* buffer_of(int w, int slot) const {
    unsigned char* base = w == windex_ && is_writer_ ? own_base_ : local_base_[static_cast<std::size_t>(w)];
    return base + static_cast<std::int64_t>(slot) * piece_ * kPieces;
  }

  // Where the node's counters must reach in a round (the round's use number u of the
  // window): counter k (k < pieces) counts the ranks that encoded piece k, counter `pieces`
  // the writes done on the node, in turn order.
  struct Turns {
    std::uint64_t use;
    int node_size, writers, pieces;
    std::uint32_t complete() const { return static_cast<std::uint32_t>((use + 1) * static_cast<std::uint64_t>(node_size)); }
    std::uint32_t turn(int k, int writer) const {
      return static_cast<std::uint32_t>(use * static_cast<std::uint64_t>(pieces) * static_cast<std::uint64_t>(writers) +
                                        static_cast<std::uint64_t>(k) * static_cast<std::uint64_t>(writers) + static_cast<std::uint64_t>(writer));
    }
  };

  // Writers: this writer's pieces from `written` on, each once complete and its turn come,
  // then passes the turn on. With `encoded` >= 0 (the pieces this rank has encoded so far),
  // stops before the first piece it has not encoded or whose turn has not come; with -1,
  // writes them all. Returns the pieces written so far. After an error the pieces are passed
  // without writing (the other writers still get their turns).
  int write_pieces(const EncodedFrame& frame, const Turns& turns, std::int64_t round, const unsigned char* base, int slot,
                   int written, int encoded, std::exception_ptr& error) {
    const int pieces = turns.pieces;
    for (; written < (encoded < 0 ? pieces : encoded); ++written) {
      const std::uint32_t turn = turns.turn(written, node_writer_);
      // Not this writer's turn yet: it encodes on. Its turn: it has encoded the piece, and
      // with a core per rank the others are at it too: it waits for them. On a node with
      // more ranks than cores, it encodes on while they are not done.
      if (encoded >= 0 && !(window_->done(pieces, turn) && (window_->spin || window_->done(written, turns.complete())))) break;
      double t = MPI_Wtime();
      window_->wait(written, turns.complete());
      window_->wait(pieces, turn);
      lap(t, times_.wait);
      write_piece(frame, round, base, slot, written, error);
      window_->arrive(pieces);
    }
    return written;
  }

  // Writers: piece k of this writer's round to the file, cut where the frame's file
  // segments end. After an error (the disk refused an earlier piece) the frame has failed:
  // nothing more is written.
  void write_piece(const EncodedFrame& frame, std::int64_t round, const unsigned char* base, int slot, int k,
                   std::exception_ptr& error) {
    if (error) return;
    const auto [p0, p1] = piece(round, windex_, k);
    try {
      for (std::int64_t at = p0; at < p1;) {
        const auto [offset, room] = s_.frame->locate(frame.index, at);
        const std::int64_t len = std::min(room, p1 - at);
        const unsigned char* from = base + k * piece_ + (at - p0);
        if (async_ && nonblocking_file_writes()) {
          Slot& S = slots_[static_cast<std::size_t>(slot)];
          MPI_Request req = MPI_REQUEST_NULL;
          check_mpi(MPI_File_iwrite_at(fh_, offset, from, static_cast<int>(len), MPI_BYTE, &req), "MPI_File_iwrite_at");
          S.requests.push_back(req);
          S.asked.emplace_back(offset, len);
        } else {
          MPI_Status st;
          const int rc = MPI_File_write_at(fh_, offset, from, static_cast<int>(len), MPI_BYTE, &st);
          check_written(rc, st, len, s_.final_path, offset, "MPI_File_write_at");
        }
        at += len;
      }
    } catch (...) {
      error = std::current_exception();
    }
  }

  // Writers: the bytes from other nodes, into the buffer.
  void place_remote(const Round& R, unsigned char* base) const {
    const unsigned char* from = recv_.data();
    for (const auto& [at, n] : R.places) {
      if (at < 0 || at + n > piece_ * kPieces) throw MpiError("aggregated strategy: bytes fall outside this writer's buffer");
      std::memcpy(base + at, from, static_cast<std::size_t>(n));
      from += n;
    }
  }

  // The writers' buffers: one shared window per node, a buffer (two with async) per writer.
  void create_windows() {
    slots_.resize(async_ ? 2 : 1);
    const std::int64_t mine = is_writer_ ? piece_ * kPieces * static_cast<std::int64_t>(slots_.size()) : 0;
    window_ = std::make_unique<NodeWindow>(s_.comm, node_comm_, mine,
                                           "cannot write " + s_.final_path + ": no room for the aggregation buffers", kPieces + 1, true);
    own_base_ = window_->mine;
    MPI_Comm_rank(node_comm_, &node_writer_);  // a writer's turn: the node's writers are its first ranks
    // Which writers share this node, and where their buffers are.
    local_base_.assign(static_cast<std::size_t>(nwriters_), nullptr);
    int remote = 0;
    node_writers_ = 0;
    for (int w = 0; w < nwriters_; ++w) {
      const int nr = writer_node_rank_[static_cast<std::size_t>(w)];
      if (nr != MPI_UNDEFINED) ++node_writers_;
      if (nr == MPI_UNDEFINED || !s_.shared_memory) {  // shared_memory=0: everything by MPI
        remote = 1;
        continue;
      }
      local_base_[static_cast<std::size_t>(w)] = window_->of(nr);
    }
    MPI_Allreduce(&remote, &any_remote_, 1, MPI_INT, MPI_MAX, s_.comm);
  }

  void release() {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (finalized) return;
    if (window_) window_->free();
    if (node_comm_ != MPI_COMM_NULL) MPI_Comm_free(&node_comm_);
  }

  // Waits for the slot's file writes and checks that each wrote all its bytes.
  void complete(Slot& slot) {
    std::exception_ptr error;
    for (std::size_t i = 0; i < slot.requests.size(); ++i) {
      MPI_Status st;
      const int rc = wait_file_request(slot.requests[i], st);
      try {
        check_written(rc, st, slot.asked[i].second, s_.final_path, slot.asked[i].first, "MPI_File_iwrite_at");
      } catch (...) {
        if (!error) error = std::current_exception();
      }
    }
    slot.requests.clear();
    slot.asked.clear();
    if (error) std::rethrow_exception(error);
  }

  // Once, at open: this rank's runs cut where pieces end, each cut copied
  // straight into the buffer of a writer on this node, or sent to a writer on another node
  // (which receives where each goes once).
  void plan_rounds() {
    rounds_plan_.resize(static_cast<std::size_t>(rounds_));
    const int rs = s_.frame->value_bytes();
    const std::int64_t frame = s_.frame->frame_bytes();
    collective(s_.comm, [&] {
      s_.frame->for_each_run([&](const Run& run) {
        const std::size_t index = runs_.size();
        runs_.push_back(run);
        const std::int64_t n = run_bytes(run, rs);
        if (run.at < 0 || run.at + n > frame)
          throw MpiError("aggregated strategy: a run of bytes [" + std::to_string(run.at) + ", " + std::to_string(run.at + n) +
                         ") falls outside the frame's " + std::to_string(frame) + " bytes (an internal error)");
        for (std::int64_t b = 0; b < n;) {
          const std::int64_t at = run.at + b, stripe = at / piece_;
          const int w = static_cast<int>(stripe % nwriters_);
          const std::int64_t r = stripe / nwriters_ % rounds_;
          const int k = static_cast<int>(stripe / nwriters_ / rounds_);
          const std::int64_t dst = k * piece_ + at % piece_;
          const std::int64_t len = std::min(n - b, piece_ - at % piece_);
          const Cut cut{w, k, index, b, b + len, dst};
          Round& R = rounds_plan_[static_cast<std::size_t>(r)];
          (local_base_[static_cast<std::size_t>(w)] ? R.local : R.remote).push_back(cut);
          b += len;
        }
      });
    });
    for (auto& R : rounds_plan_) {
      std::stable_sort(R.local.begin(), R.local.end(), [](const Cut& a, const Cut& b) { return a.piece < b.piece; });
      std::stable_sort(R.remote.begin(), R.remote.end(), [](const Cut& a, const Cut& b) { return a.writer < b.writer; });
    }
    if (!any_remote_) return;
    const auto P = static_cast<std::size_t>(size_);
    for (auto& R : rounds_plan_) {  // each writer learns where the bytes from each rank go
      R.scount.assign(P, 0);
      R.rcount.assign(P, 0);
      std::vector<int> cuts(P, 0), from;
      std::vector<Place> places;  // by rank
      for (const auto& cut : R.remote) {
        const auto to = static_cast<std::size_t>(writer_ranks_[static_cast<std::size_t>(cut.writer)]);
        R.scount[to] += static_cast<int>(cut.to - cut.from);
        ++cuts[to];
        places.push_back({cut.dst, cut.to - cut.from});
      }
      R.places = exchange(s_.comm, places, cuts, &from);
      for (std::size_t q = 0, k = 0; q < P; ++q)
        for (int c = 0; c < from[q]; ++c) R.rcount[q] += static_cast<int>(R.places[k++].bytes);
      R.sdisp = displacements(R.scount, R.send_bytes);
      R.rdisp = displacements(R.rcount, R.recv_bytes);
    }
  }

  bool async_;
  int rank_ = 0, size_ = 1;
  bool is_writer_ = false;
  MPI_Comm node_comm_ = MPI_COMM_NULL;
  std::unique_ptr<NodeWindow> window_;
  std::vector<int> writer_ranks_, writer_node_rank_;  // comm ranks of the writers; their ranks on this node, or MPI_UNDEFINED
  std::vector<unsigned char*> local_base_;  // buffers of the writers on this node (null: elsewhere)
  unsigned char* own_base_ = nullptr;       // this writer's buffer
  int nwriters_ = 1, windex_ = 0, any_remote_ = 0;
  int node_writers_ = 1, node_writer_ = 0;  // writers on this node; this writer's turn among them
  std::int64_t piece_ = 1, rounds_ = 1, uses_ = 0;
  std::vector<Run> runs_;
  std::vector<Round> rounds_plan_;
  std::vector<unsigned char> send_, recv_, fixed_;
  std::vector<Slot> slots_;
};

}  // namespace

std::unique_ptr<Strategy> make_aggregated_strategy(bool async) { return std::make_unique<AggregatedStrategy>(async); }

}  // namespace anabranch::pio
