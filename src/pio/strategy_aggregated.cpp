// aggregated (the default) and aggregated-async: a few writers per node (the shared-memory
// split of the communicator) own contiguous stretches of every variable record. In rounds
// bounded by the aggregation buffer, the values of every rank's owned nodes in a round's
// stretch reach the writer of that stretch, laid out in file order (the time record and
// markers included); writers write one large contiguous piece per variable. No rank ever
// holds more than its own values plus one round's buffer.
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
// Within a round the node works as a pipeline (write() below): a writer writes a variable's
// piece as soon as every rank of the node has encoded it, while the others encode the next
// variables, and the node's writers take turns at the file, so that one encodes while the
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
  bool encodes_owned() const override { return true; }

  void open(const StrategySetup& setup) override {
    s_ = setup;
    MPI_Comm_rank(s_.comm, &rank_);
    MPI_Comm_size(s_.comm, &size_);
    node_comm_ = split_node(s_.comm);
    NodeWriters writers = choose_writers(s_.comm, node_comm_, s_.writers_per_node, s_.final_path, Aggregators::WritersTakingTurns);
    is_writer_ = writers.is_writer;
    windex_ = writers.index;
    wcomm_ = writers.comm;
    owns_wcomm_ = writers.owns_comm;
    writer_ranks_ = std::move(writers.ranks);
    nwriters_ = static_cast<int>(writer_ranks_.size());
    const int nvar = s_.layout.nvar, rs = s_.layout.real_bytes;
    entry_bytes_ = std::max<std::int64_t>(1, static_cast<std::int64_t>(nvar) * rs);
    // Each writer's stretch of a round: what its buffer holds, and no more than an even
    // share of the nodes (so that every writer has one).
    chunk_ = std::max<std::int64_t>(1, std::min(s_.buffer_bytes / entry_bytes_, (s_.layout.npoin + nwriters_ - 1) / nwriters_));
    const std::int64_t span = chunk_ * nwriters_;
    rounds_ = std::max<std::int64_t>(1, (s_.layout.npoin + span - 1) / span);
    create_windows();
    plan_rounds();
    std::exception_ptr error;
    if (is_writer_) {
      try {
        StrategySetup writers_only = s_;
        writers_only.copy_mesh = nullptr;  // every rank's share, below
        fh_ = open_shared_file(wcomm_, writers_only);
      } catch (...) {
        error = std::current_exception();
      }
    }
    agree(s_.comm, error);
    if (s_.copy_mesh) copy_mesh();
  }

  // The header's mesh records from the geometry file, a share per rank of the communicator
  // (each reads N/P of it), written by the node's writers: a rank that does not write sends
  // its pieces to one of its node's writers (its node rank modulo their number; the writers
  // are the node's first ranks), which writes its own share, then each sender's in turn.
  void copy_mesh() {
    constexpr int kTag = 0x4d45;  // "ME"
    int node_rank = 0, node_size = 1;
    MPI_Comm_rank(node_comm_, &node_rank);
    MPI_Comm_size(node_comm_, &node_size);
    const std::string& name = s_.final_path.empty() ? s_.path : s_.final_path;
    std::exception_ptr error;
    if (is_writer_) {
      auto write = [&](std::int64_t offset, const void* data, std::size_t n) {
        if (error) return;
        try {
          write_at(fh_, offset, data, static_cast<std::int64_t>(n), name);
        } catch (...) {
          error = std::current_exception();
        }
      };
      try {
        s_.copy_mesh(rank_, size_, write);
      } catch (...) {
        if (!error) error = std::current_exception();
      }
      std::vector<unsigned char> piece;
      for (int from = node_writers_ + node_rank; from < node_size; from += node_writers_)
        for (;;) {  // every piece is received, even after a failure: the sender waits on none
          std::int64_t head[2];  // offset, bytes (-1: the sender's last)
          MPI_Recv(head, 2, MPI_INT64_T, from, kTag, node_comm_, MPI_STATUS_IGNORE);
          if (head[1] < 0) break;
          piece.resize(static_cast<std::size_t>(head[1]));
          MPI_Recv(piece.data(), static_cast<int>(head[1]), MPI_BYTE, from, kTag, node_comm_, MPI_STATUS_IGNORE);
          write(head[0], piece.data(), piece.size());
        }
    } else {
      const int to = node_rank % node_writers_;
      try {
        s_.copy_mesh(rank_, size_, [&](std::int64_t offset, const void* data, std::size_t n) {
          const std::int64_t head[2] = {offset, static_cast<std::int64_t>(n)};
          MPI_Send(head, 2, MPI_INT64_T, to, kTag, node_comm_);
          MPI_Send(data, static_cast<int>(n), MPI_BYTE, to, kTag, node_comm_);
        });
      } catch (...) {
        error = std::current_exception();
      }
      const std::int64_t last[2] = {0, -1};
      MPI_Send(last, 2, MPI_INT64_T, to, kTag, node_comm_);
    }
    agree(s_.comm, error);
  }

  // A round, pieces and turns. Piece v of a round is variable v (the time record alone when
  // there is none). Every rank of the node encodes its values of piece v straight into the
  // buffers of the node's writers, then arrives on the piece's counter: the piece is
  // complete when all have. The node's writers write their stretches of the pieces in file
  // order, taking turns (piece 0 of writer 0, of writer 1, ..., piece 1 of writer 0, ...)
  // on a turn counter: writes to one file do not run side by side on a local file system
  // (the inode lock, on which a second writer would spin), so a writer whose turn it is not
  // encodes meanwhile; a writer writes its pieces between its own variables as soon as
  // they are complete and its turn has come. Values from other nodes come by MPI after
  // the node's own; the writers then write everything.
  void write(const EncodedFrame& frame) override {
    std::exception_ptr error;
    const int nvar = s_.layout.nvar, rs = s_.layout.real_bytes;
    const int pieces = std::max(nvar, 1);
    for (std::int64_t r = 0; r < rounds_; ++r) {
      Round& R = rounds_plan_[static_cast<std::size_t>(r)];
      const int slot = static_cast<int>(uses_ % static_cast<std::int64_t>(slots_.size()));
      Turns turns{static_cast<std::uint64_t>(uses_), window_->node_size, node_writers_, pieces};
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
      Stretch mine;
      unsigned char* const own = is_writer_ ? buffer_of(windex_, slot) : nullptr;
      if (is_writer_) {
        mine = stretch(r, windex_);
        place_fixed(frame, mine, own);
      }
      part_stretch_.clear();  // the stretches this rank encodes into, once per round
      for (const auto& part : R.local) part_stretch_.push_back(stretch(r, part.writer));
      int written = 0;  // pieces this writer has written (or passed after an error)
      for (int v = 0; v < pieces; ++v) {
        for (std::size_t k = 0; k < R.local.size() && v < nvar; ++k) {
          const auto& part = R.local[k];
          unsigned char* dst = buffer_of(part.writer, slot) + part_stretch_[k].value_off[static_cast<std::size_t>(v)];
          for (const auto& run : part.runs) frame.encoder->encode(v, run.at, run.len, dst + run.off * rs);
        }
        window_->arrive(v);
        t = lap(t, times_.encode);
        if (is_writer_ && !any_remote_) {
          written = write_pieces(frame, turns, mine, own, slot, written, v + 1, error);
          t = lap(t, times_.write);
        }
      }
      // Values for writers on other nodes: by MPI, placed by the writer.
      if (any_remote_) {
        send_.resize(static_cast<std::size_t>(R.send_bytes));
        unsigned char* out = send_.data();
        for (const auto& seg : R.segments)
          for (int v = 0; v < nvar; ++v) {
            frame.encoder->encode(v, seg.i0, seg.i1 - seg.i0, out);
            out += (seg.i1 - seg.i0) * rs;
          }
        t = lap(t, times_.encode);
        recv_.resize(static_cast<std::size_t>(R.recv_bytes));
        MPI_Alltoallv(send_.data(), R.scount.data(), R.sdisp.data(), MPI_BYTE, recv_.data(), R.rcount.data(), R.rdisp.data(),
                      MPI_BYTE, s_.comm);
        if (is_writer_) try {
            place_remote(R, mine, own);
          } catch (...) {
            if (!error) error = std::current_exception();
          }
        t = lap(t, times_.exchange);
      }
      if (is_writer_) write_pieces(frame, turns, mine, own, slot, written, -1, error);
      t = lap(t, times_.write);
      // Until the node's writers are done, asleep (MPI's collectives below would poll, and
      // take the cores from the ranks still encoding or writing).
      window_->wait(pieces, turns.turn(pieces, 0));
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

  PhaseTimes phases() const override { return times_; }

  std::map<std::string, std::string> file_hints() const override { return hints_in_use(fh_); }

  void abandon() override {
    for (auto& slot : slots_) try {
        complete(slot);
      } catch (...) {
      }
    if (is_writer_ && fh_ != MPI_FILE_NULL) MPI_File_close(&fh_);
    release();
  }

  void close() override {
    wait();
    const double t = MPI_Wtime();
    std::exception_ptr error;
    if (is_writer_) {
      try {
        close_shared_file(wcomm_, fh_);
      } catch (...) {
        error = std::current_exception();
      }
    }
    release();
    agree(s_.comm, error);
    lap(t, times_.close);
  }

 private:
  struct Segment {
    int writer;
    std::int64_t i0, i1;  // owned indices sent to it
  };
  struct Run {
    std::int64_t off, len;  // place in the writer's stretch (nodes)
    std::int64_t at;        // first owned index (local parts) or position in the source's block (remote)
  };
  struct LocalPart {
    int writer;  // index among the writers
    std::vector<Run> runs;
  };
  struct Source {
    std::int64_t recv_offset = 0, count = 0;  // its block in the receive buffer, nodes in it
    std::vector<Run> runs;
  };
  struct Round {
    std::vector<LocalPart> local;       // for writers on this rank's node
    std::vector<Segment> segments;      // for writers on other nodes
    std::vector<int> scount, sdisp, rcount, rdisp;
    std::int64_t send_bytes = 0, recv_bytes = 0;
    std::vector<Source> sources;  // writers: who sends what from other nodes
  };
  // Writer w's stretch [c0, c1) in a round, and where its bytes go in the writer's buffer:
  // piece v (markers, and the time record before the first variable when c0 = 0) at
  // piece_off[v], its values at value_off[v].
  struct Stretch {
    std::int64_t c0 = 0, c1 = 0;
    std::vector<std::int64_t> piece_off, value_off, head;
    std::int64_t file_offset(const serafin::Layout& L, std::int64_t frame, int v) const {
      return L.values_offset(frame, v) + c0 * L.real_bytes - head[static_cast<std::size_t>(v)];
    }
  };
  struct Slot {
    std::vector<MPI_Request> requests;
    std::vector<std::pair<std::int64_t, std::int64_t>> asked;  // (offset, bytes) of each request
  };

  Stretch stretch(std::int64_t round, int w) const {
    const auto& L = s_.layout;
    const int nvar = L.nvar, rs = L.real_bytes;
    Stretch st;
    st.c0 = round * chunk_ * nwriters_ + w * chunk_;
    st.c1 = std::max(st.c0, std::min(L.npoin, st.c0 + chunk_));
    st.piece_off.assign(static_cast<std::size_t>(nvar) + 1, 0);
    st.value_off.assign(static_cast<std::size_t>(nvar), 0);
    st.head.assign(static_cast<std::size_t>(nvar), 0);
    for (int v = 0; v < nvar; ++v) {
      std::int64_t head = 0, tail = 0, len = 0;
      if (st.c1 > st.c0) {
        if (st.c0 == 0) head = 4 + (v == 0 ? 8 + rs : 0);
        if (st.c1 == L.npoin) tail = 4;
        len = head + (st.c1 - st.c0) * rs + tail;
      }
      st.head[static_cast<std::size_t>(v)] = head;
      st.value_off[static_cast<std::size_t>(v)] = st.piece_off[static_cast<std::size_t>(v)] + head;
      st.piece_off[static_cast<std::size_t>(v) + 1] = st.piece_off[static_cast<std::size_t>(v)] + len;
    }
    return st;
  }

  // Writer w's buffer (w on this node, or w = this writer).
  unsigned char* buffer_of(int w, int slot) const {
    unsigned char* base = w == windex_ && is_writer_ ? own_base_ : local_base_[static_cast<std::size_t>(w)];
    return base + static_cast<std::int64_t>(slot) * slot_bytes_;
  }

  // Where the node's counters must reach in a round (the round's use number u of the
  // window): counter v (v < pieces) counts the ranks that encoded piece v, counter `pieces`
  // the writes done on the node, in turn order.
  struct Turns {
    std::uint64_t use;
    int node_size, writers, pieces;
    std::uint32_t complete() const { return static_cast<std::uint32_t>((use + 1) * static_cast<std::uint64_t>(node_size)); }
    std::uint32_t turn(int v, int writer) const {
      return static_cast<std::uint32_t>(use * static_cast<std::uint64_t>(pieces) * static_cast<std::uint64_t>(writers) +
                                        static_cast<std::uint64_t>(v) * static_cast<std::uint64_t>(writers) + static_cast<std::uint64_t>(writer));
    }
  };

  // Writers: this writer's pieces from `written` on, each once complete and its turn come,
  // then passes the turn on. With `encoded` >= 0 (the pieces this rank has encoded so far),
  // stops before the first piece it has not encoded or whose turn has not come; with -1,
  // writes them all. Returns the pieces written so far. After an error the pieces are passed
  // without writing (the other writers still get their turns).
  int write_pieces(const EncodedFrame& frame, const Turns& turns, const Stretch& mine, const unsigned char* base, int slot,
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
      write_piece(frame, mine, base, slot, written, error);
      window_->arrive(pieces);
    }
    return written;
  }

  // Writers: piece v of this writer's stretch (variable v with its markers, the time record
  // before the first; the time record alone when there is no variable) to the file. After
  // an error (the disk refused an earlier piece) the frame has failed: nothing more is
  // written.
  void write_piece(const EncodedFrame& frame, const Stretch& mine, const unsigned char* base, int slot, int v,
                   std::exception_ptr& error) {
    if (error) return;
    const int nvar = s_.layout.nvar, rs = s_.layout.real_bytes;
    std::int64_t offset = 0, len = 0;
    const unsigned char* from = base;
    if (nvar == 0) {
      offset = s_.layout.frame_offset(frame.index);
      len = windex_ == 0 ? 8 + rs : 0;
    } else {
      offset = mine.file_offset(s_.layout, frame.index, v);
      len = mine.piece_off[static_cast<std::size_t>(v) + 1] - mine.piece_off[static_cast<std::size_t>(v)];
      from = base + mine.piece_off[static_cast<std::size_t>(v)];
    }
    if (len == 0) return;
    try {
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
    } catch (...) {
      error = std::current_exception();
    }
  }

  // Writers: the time record and the markers of this writer's stretch, into its buffer.
  void place_fixed(const EncodedFrame& frame, const Stretch& st, unsigned char* base) const {
    const auto& L = s_.layout;
    const int nvar = L.nvar;
    auto fixed = frame_fixed_pieces(s_.header, L, frame.index, frame.time);  // time, then 2 markers per variable
    if (nvar == 0) {
      if (windex_ == 0) std::memcpy(base, fixed[0].second.data(), fixed[0].second.size());
      return;
    }
    if (st.c1 <= st.c0) return;
    for (int v = 0; v < nvar; ++v) {
      unsigned char* p = base + st.piece_off[static_cast<std::size_t>(v)];
      if (st.c0 == 0) {
        if (v == 0) {
          std::memcpy(p, fixed[0].second.data(), fixed[0].second.size());
          p += fixed[0].second.size();
        }
        std::memcpy(p, fixed[static_cast<std::size_t>(1 + 2 * v)].second.data(), 4);
      }
      if (st.c1 == L.npoin)
        std::memcpy(base + st.piece_off[static_cast<std::size_t>(v) + 1] - 4, fixed[static_cast<std::size_t>(2 + 2 * v)].second.data(), 4);
    }
  }

  // Writers: the values from other nodes, into the buffer.
  void place_remote(const Round& R, const Stretch& st, unsigned char* base) const {
    const int nvar = s_.layout.nvar, rs = s_.layout.real_bytes;
    for (const auto& src : R.sources) {
      const unsigned char* from0 = recv_.data() + src.recv_offset;
      for (int v = 0; v < nvar; ++v) {
        const unsigned char* from = from0 + static_cast<std::int64_t>(v) * src.count * rs;
        unsigned char* dst = base + st.value_off[static_cast<std::size_t>(v)];
        for (const auto& run : src.runs) {
          if (run.off < 0 || run.off + run.len > st.c1 - st.c0) throw MpiError("aggregated strategy: a run falls outside this writer's stretch");
          std::memcpy(dst + run.off * rs, from + run.at * rs, static_cast<std::size_t>(run.len * rs));
        }
      }
    }
  }

  // The writers' buffers: one shared window per node, a buffer (two with async) per writer.
  void create_windows() {
    const auto& L = s_.layout;
    slots_.resize(async_ ? 2 : 1);
    slot_bytes_ = static_cast<std::int64_t>(L.nvar) * (chunk_ * L.real_bytes + 8) + 8 + L.real_bytes;
    const std::int64_t mine = is_writer_ ? slot_bytes_ * static_cast<std::int64_t>(slots_.size()) : 0;
    window_ = std::make_unique<NodeWindow>(s_.comm, node_comm_, mine,
                                           "cannot write " + s_.final_path + ": no room for the aggregation buffers",
                                           std::max(L.nvar, 1) + 1, true);
    own_base_ = window_->mine;
    MPI_Comm_rank(node_comm_, &node_writer_);  // a writer's turn: the node's writers are its first ranks
    // Which writers share this node, and where their buffers are.
    MPI_Group world_group, node_group;
    MPI_Comm_group(s_.comm, &world_group);
    MPI_Comm_group(node_comm_, &node_group);
    local_base_.assign(static_cast<std::size_t>(nwriters_), nullptr);
    std::vector<int> in_node(static_cast<std::size_t>(nwriters_), MPI_UNDEFINED);
    MPI_Group_translate_ranks(world_group, nwriters_, writer_ranks_.data(), node_group, in_node.data());
    int remote = 0;
    node_writers_ = 0;
    for (int w = 0; w < nwriters_; ++w) {
      const int nr = in_node[static_cast<std::size_t>(w)];
      if (nr != MPI_UNDEFINED) ++node_writers_;
      if (nr == MPI_UNDEFINED || !s_.shared_memory) {  // shared_memory=0: everything by MPI
        remote = 1;
        continue;
      }
      local_base_[static_cast<std::size_t>(w)] = window_->of(nr);
    }
    MPI_Group_free(&world_group);
    MPI_Group_free(&node_group);
    MPI_Allreduce(&remote, &any_remote_, 1, MPI_INT, MPI_MAX, s_.comm);
  }

  void release() {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (finalized) return;
    if (window_) window_->free();
    if (owns_wcomm_) MPI_Comm_free(&wcomm_);
    owns_wcomm_ = false;
    if (node_comm_ != MPI_COMM_NULL) MPI_Comm_free(&node_comm_);
  }

  // Adds the time since t to `phase`; returns now.
  static double lap(double t, double& phase) {
    const double now = MPI_Wtime();
    phase += now - t;
    return now;
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

  // Once, at open: for every round, which owned nodes go to which writer: as runs copied
  // straight into the buffers of writers on this node, or as segments sent to writers on
  // other nodes (whose run lists those writers receive once).
  void plan_rounds() {
    const auto& owned = *s_.owned;
    const auto n = static_cast<std::int64_t>(owned.size());
    const std::int64_t npoin = s_.layout.npoin;
    rounds_plan_.resize(static_cast<std::size_t>(rounds_));
    std::int64_t at = 0;
    for (std::int64_t r = 0; r < rounds_; ++r) {
      Round& R = rounds_plan_[static_cast<std::size_t>(r)];
      const std::int64_t round_start = r * chunk_ * nwriters_;
      const std::int64_t round_end = std::min(npoin, round_start + chunk_ * nwriters_);
      R.scount.assign(static_cast<std::size_t>(size_), 0);
      R.sdisp.assign(static_cast<std::size_t>(size_), 0);
      R.rcount.assign(static_cast<std::size_t>(size_), 0);
      R.rdisp.assign(static_cast<std::size_t>(size_), 0);
      // Runs (offset in the writer's stretch, length) sent to each remote writer: 2 ints each.
      std::vector<std::vector<std::int64_t>> runs_to(static_cast<std::size_t>(size_));
      while (at < n && owned[static_cast<std::size_t>(at)] < round_end) {
        const std::int64_t w = (owned[static_cast<std::size_t>(at)] - round_start) / chunk_;
        const std::int64_t c0 = round_start + w * chunk_, c1 = std::min(npoin, c0 + chunk_);
        const std::int64_t i0 = at;
        while (at < n && owned[static_cast<std::size_t>(at)] < c1) ++at;
        if (local_base_[static_cast<std::size_t>(w)]) {
          LocalPart part{static_cast<int>(w), {}};
          for (std::int64_t i = i0; i < at; ++i) {
            const std::int64_t off = owned[static_cast<std::size_t>(i)] - c0;
            if (!part.runs.empty() && part.runs.back().off + part.runs.back().len == off)
              ++part.runs.back().len;
            else
              part.runs.push_back({off, 1, i});
          }
          R.local.push_back(std::move(part));
          continue;
        }
        auto& rl = runs_to[static_cast<std::size_t>(writer_ranks_[static_cast<std::size_t>(w)])];
        for (std::int64_t i = i0; i < at; ++i) {
          const std::int64_t g = owned[static_cast<std::size_t>(i)];
          if (!rl.empty() && rl[rl.size() - 2] + rl.back() == g - c0)
            ++rl.back();
          else {
            rl.push_back(g - c0);
            rl.push_back(1);
          }
        }
        R.scount[static_cast<std::size_t>(writer_ranks_[static_cast<std::size_t>(w)])] += static_cast<int>((at - i0) * entry_bytes_);
        R.segments.push_back({static_cast<int>(w), i0, at});
      }
      if (!any_remote_) continue;
      for (int q = 1; q < size_; ++q)
        R.sdisp[static_cast<std::size_t>(q)] = R.sdisp[static_cast<std::size_t>(q - 1)] + R.scount[static_cast<std::size_t>(q - 1)];
      R.send_bytes = R.sdisp.back() + R.scount.back();
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
  MPI_Comm wcomm_ = MPI_COMM_NULL, node_comm_ = MPI_COMM_NULL;
  bool owns_wcomm_ = false;
  MPI_File fh_ = MPI_FILE_NULL;
  PhaseTimes times_;
  std::unique_ptr<NodeWindow> window_;
  std::vector<int> writer_ranks_;
  std::vector<unsigned char*> local_base_;  // buffers of the writers on this node (null: elsewhere)
  unsigned char* own_base_ = nullptr;       // this writer's buffer
  int nwriters_ = 1, windex_ = 0, any_remote_ = 0;
  int node_writers_ = 1, node_writer_ = 0;  // writers on this node; this writer's turn among them
  std::int64_t entry_bytes_ = 0, chunk_ = 1, rounds_ = 1, slot_bytes_ = 0, uses_ = 0;
  std::vector<Round> rounds_plan_;
  std::vector<Stretch> part_stretch_;  // write(): the stretch of each of the round's local parts
  std::vector<unsigned char> send_, recv_;
  std::vector<Slot> slots_;
};

}  // namespace

std::unique_ptr<Strategy> make_aggregated_strategy(bool async) { return std::make_unique<AggregatedStrategy>(async); }

}  // namespace anabranch::pio
