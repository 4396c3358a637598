// aggregated reading, the mirror of aggregated writing, for every layout: readers (the first
// ranks of every node; rank 0 is always one; how many per node: auto_per_node) each own a
// share of the frame's bytes and read it in rounds of at most buffer_bytes into node shared
// memory. A frame of equal parts (FrameLayout::parts: the variables of a SERAFIN frame)
// gives reader w of R the values [n*w/R, n*(w+1)/R) of each part, so that a rank holding a
// stretch of the numbering takes its values from one reader or two; any other frame is cut
// into R contiguous stretches. Each rank decodes its values straight from the buffers of its
// node's readers (one pass from the file's form to the caller's arrays); values held by
// readers on other nodes come by one all-to-all a round, for which each rank told those
// readers once, at the first read, which bytes of which round it needs. A value belongs to
// the round holding its first byte; a reader also reads the few bytes after its round (the
// rest of a value cut there, when the frame is cut as it is). Readers and ranks meet point
// to point, not at barriers, on counters in the node's window: each reader counts the
// rounds it has filled, each rank the rounds it is done with. A rank waits only for the
// readers whose values it takes; a reader, which has two round buffers, waits before
// filling one again until every rank of the node is done with the round it held. Tried
// and left out: asking the kernel for each reader's next round (posix_fadvise WILLNEED)
// while the node decodes: at 2 ranks on 2M triangles, page cache dropped, the readers'
// read calls took 0.09 s instead of 0.05 and the whole read 30% longer; the kernel's own
// read-ahead of a sequential reader does it better (docs/benchmarks.md).
#include <algorithm>
#include <cstring>

#include "core/error.hpp"
#include "io/strategy.hpp"
#include "parallel/mpi_util.hpp"
#include "parallel/topology.hpp"

namespace anabranch::pio {

struct RunReader::Aggregated {
  MPI_Comm node_comm = MPI_COMM_NULL;
  int size = 1, index = 0, node_size = 1, node_me = 0;
  bool is_reader = false;
  std::vector<int> reader_ranks;         // comm ranks of the readers, increasing
  std::vector<int> node_rank;            // per reader: its rank on this node (MPI_UNDEFINED: elsewhere, or no shared memory)
  std::unique_ptr<NodeWindow> window;    // the readers' round buffers, one window per node; counters below
  std::vector<unsigned char> own;        // a reader's buffers without shared memory
  std::int64_t slot_bytes = 0;           // one round's buffer: a round, plus a value's rest
  int any_remote = 0;                    // some rank takes values from a reader on another node
  std::uint32_t uses = 0;                // rounds so far (all frames): the counters' targets
  // The plan, made at the first read after a relayout.
  bool planned = false;
  std::int64_t parts = 1, part = 0;      // the frame's parts and their bytes
  std::int64_t piece = 1, rounds = 0;
  std::vector<std::int64_t> starts;      // reader w's share of each part: bytes [starts[w], starts[w + 1])
  struct Cut {
    std::int64_t round;
    int reader, array;
    std::int64_t index, count, at;  // count values of array from index, at byte `at` of the reader's round
  };
  std::vector<Cut> local, remote;        // by round, then by reader
  struct Ask {
    std::int64_t round, at, bytes;  // bytes from byte `at` of the reader's round
  };
  std::vector<Ask> asked;                // reader: what each rank asked, by rank, rounds increasing
  std::vector<std::int64_t> asked_first;  // where each rank's asks start, then their count
  std::vector<unsigned char> send, recv;
  std::vector<int> scount, sdispl, rcount, rdispl;

  std::int64_t share(std::size_t w) const { return starts[w + 1] - starts[w]; }
  // Reader w's bytes in its rounds, one after another: the frame byte of its byte `pos`.
  std::int64_t frame_byte(std::size_t w, std::int64_t pos) const {
    return parts == 1 ? starts[w] + pos : pos / share(w) * part + starts[w] + pos % share(w);
  }
  unsigned char* buffer(int w, std::uint32_t use) {
    unsigned char* b = node_rank[static_cast<std::size_t>(w)] != MPI_UNDEFINED ? window->of(node_rank[static_cast<std::size_t>(w)]) : own.data();
    return b + (use % 2) * slot_bytes;
  }
};

RunReader::RunReader(MPI_Comm comm, MPI_File fh, std::string path, const FrameLayout& layout, const RunReading& how)
    : comm_(comm), fh_(fh), path_(std::move(path)), layout_(layout), how_(how) {
  // Where this MPI's collective reads lose overlapping bytes, the same runs read independently.
  if (how_.mode == RunReading::Mode::Collective && !collective_reads_safe(comm_)) how_.mode = RunReading::Mode::Independent;
  if (how_.mode != RunReading::Mode::Aggregated) return;
  agg_ = std::make_unique<Aggregated>();
  Aggregated& a = *agg_;
  MPI_Comm_size(comm_, &a.size);
  a.node_comm = split_node(comm_);
  NodeWriters readers = choose_writers(comm_, a.node_comm, how_.readers_per_node, path_, Aggregators::Readers);
  a.is_reader = readers.is_writer;
  a.index = readers.index;
  a.reader_ranks = std::move(readers.ranks);
  const auto nr = static_cast<std::int64_t>(a.reader_ranks.size());
  int node_size = 1;
  MPI_Comm_size(a.node_comm, &node_size);
  a.any_remote = how_.shared_memory && node_size == a.size ? 0 : 1;  // every rank knows it without asking
  const std::int64_t asked = how_.buffer_bytes > 0 ? how_.buffer_bytes : std::int64_t{a.any_remote ? 16 : 4} << 20;
  a.slot_bytes = std::max<std::int64_t>(1, std::min(asked, (layout_.frame_bytes() + nr - 1) / nr)) + 8;
  const std::int64_t mine = a.is_reader ? 2 * a.slot_bytes : 0;
  a.node_rank.assign(a.reader_ranks.size(), MPI_UNDEFINED);  // without shared memory: every reader by MPI
  if (!how_.shared_memory) {
    a.own.resize(static_cast<std::size_t>(mine));
    return;
  }
  a.node_size = node_size;
  MPI_Comm_rank(a.node_comm, &a.node_me);
  a.window = std::make_unique<NodeWindow>(comm_, a.node_comm, mine, "cannot read " + path_ + ": no room for the readers' buffers",
                                          2 * node_size);
  a.node_rank = std::move(readers.node_rank);
}

RunReader::~RunReader() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!agg_ || finalized) return;
  if (agg_->window) agg_->window->free();
  if (agg_->node_comm != MPI_COMM_NULL) MPI_Comm_free(&agg_->node_comm);
}

void RunReader::relayout() {
  if (agg_) agg_->planned = false;
}

void RunReader::read_aggregated(std::int64_t frame, const ValueDecoder& values) {
  Aggregated& a = *agg_;
  const int rs = layout_.value_bytes();
  const std::int64_t F = layout_.frame_bytes();
  const auto nr = a.reader_ranks.size();
  const auto P = static_cast<std::size_t>(a.size);
  if (!a.planned) {
    // The readers' shares; this rank's runs cut by the readers' rounds.
    a.parts = layout_.parts();
    if (a.parts < 1 || F % a.parts != 0 || F / a.parts % rs != 0) a.parts = 1;
    a.part = F / a.parts;
    a.starts.resize(nr + 1);
    const std::int64_t unit = a.parts == 1 ? 1 : rs;  // shares of a part's values, of a frame's bytes
    for (std::size_t w = 0; w <= nr; ++w) a.starts[w] = a.part / unit * static_cast<std::int64_t>(w) / static_cast<std::int64_t>(nr) * unit;
    std::int64_t largest = 0;
    for (std::size_t w = 0; w < nr; ++w) largest = std::max(largest, a.parts * a.share(w));
    a.piece = std::max<std::int64_t>(unit, std::min(a.slot_bytes - 8, largest) / unit * unit);
    a.rounds = (largest + a.piece - 1) / a.piece;
    a.local.clear();
    a.remote.clear();
    collective(comm_, [&] {
      layout_.for_each_run([&](const Run& run) {
        if (run.array == Run::kFixed) return;
        for (std::int64_t i = 0; i < run.count;) {
          const std::int64_t b = run.at + i * rs, k = b / std::max<std::int64_t>(a.part, 1), in = b - k * a.part;
          if (b < 0 || b + rs > F)
            throw MpiError("aggregated reading: a value at frame byte " + std::to_string(b) + " falls outside the frame's " +
                           std::to_string(F) + " bytes (an internal error)");
          const auto w = static_cast<std::size_t>(std::upper_bound(a.starts.begin(), a.starts.end(), in) - a.starts.begin()) - 1;
          const std::int64_t pos = k * a.share(w) + in - a.starts[w], r = pos / a.piece;
          const std::int64_t end = std::min((r + 1) * a.piece, (k + 1) * a.share(w));  // the round's or the share's end
          const std::int64_t m = std::min(run.count - i, (end - pos + rs - 1) / rs);
          (a.node_rank[w] != MPI_UNDEFINED ? a.local : a.remote).push_back({r, static_cast<int>(w), run.array, run.index + i, m, pos - r * a.piece});
          i += m;
        }
      });
    });
    const auto by_round = [](const Aggregated::Cut& x, const Aggregated::Cut& y) {
      return x.round < y.round || (x.round == y.round && x.reader < y.reader);
    };
    std::stable_sort(a.local.begin(), a.local.end(), by_round);
    std::stable_sort(a.remote.begin(), a.remote.end(), by_round);
    a.scount.assign(P, 0);
    a.rcount.assign(P, 0);
    a.asked.clear();
    a.asked_first.assign(P + 1, 0);
    if (a.any_remote) {  // each reader learns what each rank needs of it (the readers' ranks increase with w)
      std::vector<std::vector<Aggregated::Ask>> to(nr);
      for (const auto& c : a.remote) to[static_cast<std::size_t>(c.reader)].push_back({c.round, c.at, c.count * rs});
      std::vector<Aggregated::Ask> out;
      std::vector<int> n(P, 0), m;
      for (std::size_t w = 0; w < nr; ++w) {
        n[static_cast<std::size_t>(a.reader_ranks[w])] = static_cast<int>(to[w].size());
        out.insert(out.end(), to[w].begin(), to[w].end());
      }
      a.asked = exchange(comm_, out, n, &m);
      for (std::size_t j = 1; j <= P; ++j) a.asked_first[j] = a.asked_first[j - 1] + m[j - 1];
    }
    a.planned = true;
  }
  const auto self = static_cast<std::size_t>(a.index);
  const int mine_at = a.is_reader ? a.node_rank[self] : MPI_UNDEFINED;  // this reader's counters (shared memory)
  // Bytes [lo, end) of this reader's rounds, of frame f, to dst.
  const auto transfer = [&](std::int64_t f, std::int64_t lo, std::int64_t end, unsigned char* dst) {
    for (std::int64_t pos = lo; pos < end;) {
      const std::int64_t fb = a.frame_byte(self, pos);
      const std::int64_t room = a.parts == 1 ? end - pos : a.share(self) - pos % a.share(self);
      for (std::int64_t at = fb, stop = fb + std::min(room, end - pos); at < stop;) {
        const auto [offset, left] = layout_.locate(f, at);
        const std::int64_t len = std::min(left, stop - at);
        MPI_Status st;
        check_read(MPI_File_read_at(fh_, offset, dst + (pos + at - fb - lo), static_cast<int>(len), MPI_BYTE, &st), st, len, path_, f,
                   offset, "MPI_File_read_at");
        at += len;
      }
      pos += std::min(room, end - pos);
    }
  };
  const std::int64_t stream = a.is_reader ? a.parts * a.share(self) : 0;  // this reader's bytes a frame
  std::exception_ptr error;
  std::vector<std::int64_t> asked_at(a.asked_first.begin(), a.asked_first.end() - 1);  // per rank, its next triple
  std::size_t lc = 0, rc = 0;                                                        // the next local and remote cut
  for (std::int64_t r = 0; r < a.rounds; ++r, ++a.uses) {
    double t = MPI_Wtime();
    const std::uint32_t u = a.uses;
    unsigned char* const mine = a.is_reader ? a.buffer(a.index, u) : nullptr;
    if (a.is_reader) {
      // The buffer filled two rounds ago: every rank of the node is done with it.
      for (int q = 0; mine_at != MPI_UNDEFINED && u >= 2 && q < a.node_size; ++q) a.window->wait(a.node_size + q, u - 1);
      t = lap(t, times_.wait);
      const std::int64_t lo = std::min(r * a.piece, stream), hi = std::min(lo + a.piece, stream);
      if (!error && hi > lo) try {
          transfer(frame, lo, a.parts == 1 ? std::min(hi + rs - 1, F - a.starts[self]) : hi, mine);
        } catch (...) {
          error = std::current_exception();
        }
      if (mine_at != MPI_UNDEFINED) a.window->arrive(mine_at);
      t = lap(t, times_.read);
    }
    // Values of readers on this node, each once it has filled the round.
    for (int waited = -1; lc < a.local.size() && a.local[lc].round == r; ++lc) {
      const auto& c = a.local[lc];
      if (c.reader != waited) {
        waited = c.reader;
        t = lap(t, times_.exchange);
        a.window->wait(a.node_rank[static_cast<std::size_t>(c.reader)], u + 1);
        t = lap(t, times_.wait);
      }
      values.decode(c.array, c.index, c.count, a.buffer(c.reader, u) + c.at);
    }
    if (a.window) a.window->arrive(a.node_size + a.node_me);  // done with the node's buffers of this round
    if (a.any_remote) {
      std::int64_t sent = 0, received = 0;
      a.send.clear();
      for (std::size_t j = 0; j < P && a.is_reader; ++j) {
        const auto before = a.send.size();
        for (; asked_at[j] < a.asked_first[j + 1] && a.asked[static_cast<std::size_t>(asked_at[j])].round == r; ++asked_at[j]) {
          const auto& q = a.asked[static_cast<std::size_t>(asked_at[j])];
          a.send.insert(a.send.end(), mine + q.at, mine + q.at + q.bytes);
        }
        a.scount[j] = static_cast<int>(a.send.size() - before);
      }
      a.sdispl = displacements(a.scount, sent);
      std::fill(a.rcount.begin(), a.rcount.end(), 0);
      std::size_t end = rc;
      for (; end < a.remote.size() && a.remote[end].round == r; ++end)
        a.rcount[static_cast<std::size_t>(a.reader_ranks[static_cast<std::size_t>(a.remote[end].reader)])] += static_cast<int>(a.remote[end].count * rs);
      a.rdispl = displacements(a.rcount, received);
      a.recv.resize(static_cast<std::size_t>(received));
      check_mpi(MPI_Alltoallv(a.send.data(), a.scount.data(), a.sdispl.data(), MPI_BYTE, a.recv.data(), a.rcount.data(), a.rdispl.data(),
                              MPI_BYTE, comm_),
                "MPI_Alltoallv");
      for (const unsigned char* src = a.recv.data(); rc < end; src += a.remote[rc].count * rs, ++rc)
        values.decode(a.remote[rc].array, a.remote[rc].index, a.remote[rc].count, src);
    }
    lap(t, times_.exchange);
  }
  const double t = MPI_Wtime();
  agree(comm_, error);  // also: every rank is done with the buffers before the next frame's rounds
  lap(t, times_.wait);
}

}  // namespace anabranch::pio
