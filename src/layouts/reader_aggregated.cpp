// aggregated reading, the mirror of aggregated writing: readers (the first ranks of every
// node; rank 0 is always one; how many per node: auto_per_node) each own a block of
// the global numbering (reader w of R: nodes [NPOIN*w/R, NPOIN*(w+1)/R)) and read it in
// pieces of at most buffer_bytes, once, into node shared memory. Every rank takes its values
// of its node's readers' pieces straight from there (one copy); values held by readers on
// other nodes come by one all-to-all per piece, for which each rank told those readers at
// open which of their nodes it needs. Only readers open and parse the file. A reader holds
// one piece (in the node window) and the lists of nodes asked of it from other nodes.
#include <algorithm>
#include <cstring>

#include "core/error.hpp"
#include "parallel/mpi_util.hpp"
#include "layouts/reader.hpp"
#include "parallel/topology.hpp"

namespace anabranch::pio {
namespace {

// dst[t] = src[idx[t]] for values of W bytes; runs of consecutive indices (a decomposition's
// nodes mostly come in runs) copied whole.
template <int W>
void gather(const unsigned char* src, const std::int64_t* idx, std::int64_t m, unsigned char* dst) {
  for (std::int64_t t = 0; t < m;) {
    std::int64_t e = t + 1;
    while (e < m && idx[e] == idx[e - 1] + 1) ++e;
    if (e - t == 1)
      std::memcpy(dst + t * W, src + idx[t] * W, W);
    else
      std::memcpy(dst + t * W, src + idx[t] * W, static_cast<std::size_t>((e - t) * W));
    t = e;
  }
}

class AggregatedReader final : public ReadStrategy {
 public:
  const char* name() const override { return "aggregated"; }

  ~AggregatedReader() override {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (finalized) return;
    if (owns_rcomm_) MPI_Comm_free(&rcomm_);
    if (node_comm_ != MPI_COMM_NULL) MPI_Comm_free(&node_comm_);
  }

  FileFacts open(MPI_Comm comm, const std::string& path, const ReaderOptions& options) override {
    comm_ = comm;
    MPI_Comm_rank(comm_, &rank_);
    MPI_Comm_size(comm_, &size_);
    node_comm_ = split_node(comm_);
    {
      NodeWriters readers = choose_writers(comm_, node_comm_, options.readers_per_node, path, Aggregators::Readers);
      is_reader_ = readers.is_writer;
      index_ = readers.index;
      rcomm_ = readers.comm;
      owns_rcomm_ = readers.owns_comm;
      reader_ranks_ = std::move(readers.ranks);
    }
    shared_memory_ = options.shared_memory;
    FileFacts facts;
    collective(comm_, [&] {
      if (!is_reader_) return;
      src_ = RangeSource::open(path, rcomm_);
      if (index_ == 0) facts = src_->facts();  // rank 0: reader 0
    });
    facts = broadcast_facts(comm_, 0, facts);
    npoin_ = facts.header.npoin;
    rs_ = facts.header.precision == Precision::Double ? 8 : 4;
    // Which readers share this node's memory; whether any rank takes values by MPI.
    std::vector<int> in_node(reader_ranks_.size(), MPI_UNDEFINED);
    if (shared_memory_) {
      MPI_Group world, node;
      MPI_Comm_group(comm_, &world);
      MPI_Comm_group(node_comm_, &node);
      MPI_Group_translate_ranks(world, static_cast<int>(reader_ranks_.size()), reader_ranks_.data(), node, in_node.data());
      MPI_Group_free(&world);
      MPI_Group_free(&node);
    }
    // Every rank knows without asking: values cross nodes unless all ranks share one node
    // and its memory (the readers' blocks span the whole numbering).
    int node_size = 1;
    MPI_Comm_size(node_comm_, &node_size);
    any_remote_ = shared_memory_ && node_size == size_ ? 0 : 1;
    buffer_bytes_ = options.buffer_bytes > 0 ? options.buffer_bytes : any_remote_ ? std::int64_t{16} << 20 : std::int64_t{4} << 20;
    // The pieces: in one shared window per node (each reader's at most buffer_bytes, and no
    // more than its block of every variable), or in each reader's own memory.
    std::int64_t largest = 0;
    for (std::size_t w = 0; w < reader_ranks_.size(); ++w) largest = std::max(largest, block_first(w + 1) - block_first(w));
    piece_bytes_ = std::max<std::int64_t>(rs_, std::min<std::int64_t>(buffer_bytes_, largest * std::max(1, facts.header.nvar()) * rs_));
    local_base_.assign(reader_ranks_.size(), nullptr);
    if (shared_memory_) {
      window_ = std::make_unique<NodeWindow>(comm_, node_comm_, is_reader_ ? piece_bytes_ : 0,
                                             "cannot read " + path + ": no room for the readers' pieces");
      for (std::size_t w = 0; w < reader_ranks_.size(); ++w)
        if (in_node[w] != MPI_UNDEFINED) local_base_[w] = window_->of(in_node[w]);
    }
    return facts;
  }

  std::int64_t block_first(std::size_t w) const {
    return npoin_ * static_cast<std::int64_t>(w) / static_cast<std::int64_t>(reader_ranks_.size());
  }

  void prepare(const std::vector<std::int64_t>& need) override {
    const std::size_t nr = reader_ranks_.size();
    need_ = need.data();
    // This rank's needs, cut by the readers' blocks.
    need_first_.assign(nr + 1, 0);
    for (std::size_t w = 0; w <= nr; ++w)
      need_first_[w] = std::lower_bound(need.begin(), need.end(), block_first(w)) - need.begin();
    if (!any_remote_) {  // nothing to ask of readers on other nodes
      asked_.clear();
      asked_first_.assign(static_cast<std::size_t>(size_) + 1, 0);
      return;
    }
    std::vector<int> send(static_cast<std::size_t>(size_), 0), recv(static_cast<std::size_t>(size_), 0);
    for (std::size_t w = 0; w < nr; ++w)  // readers on this node are read straight from shared memory
      if (!local_base_[w]) send[static_cast<std::size_t>(reader_ranks_[w])] = static_cast<int>(need_first_[w + 1] - need_first_[w]);
    check_mpi(MPI_Alltoall(send.data(), 1, MPI_INT, recv.data(), 1, MPI_INT, comm_), "MPI_Alltoall");
    std::vector<int> sdispl(static_cast<std::size_t>(size_), 0), rdispl(static_cast<std::size_t>(size_) + 1, 0);
    for (std::size_t w = 0; w < nr; ++w)
      sdispl[static_cast<std::size_t>(reader_ranks_[w])] = static_cast<int>(need_first_[w]);
    for (int j = 0; j < size_; ++j) rdispl[static_cast<std::size_t>(j) + 1] = rdispl[static_cast<std::size_t>(j)] + recv[static_cast<std::size_t>(j)];
    asked_.resize(static_cast<std::size_t>(rdispl.back()));
    check_mpi(MPI_Alltoallv(need.data(), send.data(), sdispl.data(), MPI_INT64_T, asked_.data(), recv.data(), rdispl.data(),
                            MPI_INT64_T, comm_),
              "MPI_Alltoallv");
    asked_first_.assign(rdispl.begin(), rdispl.end());
  }

  void read(std::int64_t frame, const std::vector<int>& vars, const ValueDecoder& out) override {
    const std::size_t nr = reader_ranks_.size();
    const auto nv = static_cast<std::int64_t>(vars.size());
    // Nodes per piece: one piece of every variable read fills the buffer.
    const std::int64_t piece = std::max<std::int64_t>(1, buffer_bytes_ / (rs_ * std::max<std::int64_t>(nv, 1)));
    std::int64_t largest = 0;
    for (std::size_t w = 0; w < nr; ++w) largest = std::max(largest, block_first(w + 1) - block_first(w));
    const std::int64_t rounds = (largest + piece - 1) / piece;
    const std::int64_t mine0 = is_reader_ ? block_first(static_cast<std::size_t>(index_)) : 0;
    const std::int64_t mine1 = is_reader_ ? block_first(static_cast<std::size_t>(index_) + 1) : 0;
    std::vector<std::int64_t> asked_at(asked_first_.begin(), asked_first_.end() - 1);  // per rank, next asked node
    std::vector<std::int64_t> need_at(need_first_.begin(), need_first_.end() - 1);     // per reader, next needed node
    std::vector<int> scount(static_cast<std::size_t>(size_)), sdispl(static_cast<std::size_t>(size_)),
        rcount(static_cast<std::size_t>(size_)), rdispl(static_cast<std::size_t>(size_));
    std::exception_ptr error;
    for (std::int64_t r = 0; r < rounds; ++r) {
      const double t0 = MPI_Wtime();
      // The reader's piece of its block, every variable.
      const std::int64_t lo = std::min(mine0 + r * piece, mine1), hi = std::min(lo + piece, mine1), n = hi - lo;
      if (!window_) piece_.resize(static_cast<std::size_t>(n * nv * rs_));
      unsigned char* const mine = window_ ? window_->mine : piece_.data();
      if (is_reader_) {
        for (std::int64_t k = 0; k < nv; ++k) {  // on after a failure: HDF5's metadata reads are collective
          try {
            src_->read_range(frame, vars[static_cast<std::size_t>(k)], lo, n, mine + k * n * rs_);
          } catch (...) {
            if (!error) error = std::current_exception();
          }
        }
      }
      // The next piece (of this frame, or the next frame's first) is asked of the kernel
      // now, so that the disk works while the ranks exchange this one.
      if (is_reader_ && !error) {
        const bool last = r + 1 == rounds;
        const std::int64_t nlo = last ? mine0 : std::min(mine0 + (r + 1) * piece, mine1), nhi = std::min(nlo + piece, mine1);
        for (std::int64_t k = 0; k < nv; ++k) src_->will_need(last ? frame + 1 : frame, vars[static_cast<std::size_t>(k)], nlo, nhi - nlo);
      }
      const double t1 = MPI_Wtime();
      if (window_) window_->fence(node_comm_);  // the node's pieces are there
      const double t2 = MPI_Wtime();
      // Values of readers on this node: straight from their pieces.
      for (std::size_t w = 0; w < nr; ++w) {
        if (!local_base_[w]) continue;
        const std::int64_t end = block_first(w + 1), wlo = std::min(block_first(w) + r * piece, end), whi = std::min(wlo + piece, end);
        std::int64_t& a = need_at[w];
        std::int64_t b = a;
        while (b < need_first_[w + 1] && need_[b] < whi) ++b;
        for (std::int64_t t = a; t < b;) {  // runs of needed nodes that follow one another in the piece
          std::int64_t e = t + 1;
          while (e < b && need_[e] == need_[e - 1] + 1) ++e;
          for (std::int64_t k = 0; k < nv; ++k)
            out.decode(static_cast<int>(k), t, e - t, local_base_[w] + (k * (whi - wlo) + need_[t] - wlo) * rs_);
          t = e;
        }
        a = b;
      }
      if (!any_remote_) {
        if (window_) window_->fence(node_comm_);  // everyone has taken its values before the pieces change
        times_.read += t1 - t0;
        times_.wait += t2 - t1;
        times_.exchange += MPI_Wtime() - t2;
        continue;
      }
      // Values for ranks on other nodes (all ranks without shared memory), by MPI.
      std::size_t total = 0;
      for (int j = 0; j < size_ && is_reader_; ++j) {
        const std::int64_t a = asked_at[static_cast<std::size_t>(j)];
        std::int64_t b = a;
        while (b < asked_first_[static_cast<std::size_t>(j) + 1] && asked_[static_cast<std::size_t>(b)] < hi) ++b;
        sdispl[static_cast<std::size_t>(j)] = static_cast<int>(total);
        scount[static_cast<std::size_t>(j)] = static_cast<int>((b - a) * nv * rs_);
        total += static_cast<std::size_t>((b - a) * nv * rs_);
      }
      send_.resize(total);
      for (int j = 0; j < size_ && is_reader_; ++j) {
        std::int64_t& a = asked_at[static_cast<std::size_t>(j)];
        const std::int64_t m = scount[static_cast<std::size_t>(j)] / (nv * rs_);
        unsigned char* dst = send_.data() + sdispl[static_cast<std::size_t>(j)];
        const std::int64_t* idx = asked_.data() + a;
        for (std::int64_t k = 0; k < nv; ++k, dst += m * rs_) {
          const unsigned char* src = mine + (k * n - lo) * rs_;
          if (rs_ == 4)
            gather<4>(src, idx, m, dst);
          else
            gather<8>(src, idx, m, dst);
        }
        a += m;
      }
      // What this rank receives from each reader's piece.
      std::fill(rcount.begin(), rcount.end(), 0);
      std::size_t rtotal = 0;
      std::vector<std::int64_t> got(nr, 0);
      for (std::size_t w = 0; w < nr; ++w) {
        if (local_base_[w]) continue;
        const std::int64_t end = std::min(block_first(w) + (r + 1) * piece, block_first(w + 1));
        std::int64_t b = need_at[w];
        while (b < need_first_[w + 1] && need_[b] < end) ++b;
        got[w] = b - need_at[w];
        const auto q = static_cast<std::size_t>(reader_ranks_[w]);
        rdispl[q] = static_cast<int>(rtotal);
        rcount[q] = static_cast<int>(got[w] * nv * rs_);
        rtotal += static_cast<std::size_t>(rcount[q]);
      }
      recv_.resize(rtotal);
      check_mpi(MPI_Alltoallv(send_.data(), scount.data(), sdispl.data(), MPI_BYTE, recv_.data(), rcount.data(), rdispl.data(),
                              MPI_BYTE, comm_),
                "MPI_Alltoallv");
      for (std::size_t w = 0; w < nr; ++w) {
        if (local_base_[w]) continue;
        const unsigned char* src = recv_.data() + rdispl[static_cast<std::size_t>(reader_ranks_[w])];
        for (std::int64_t k = 0; k < nv; ++k, src += got[w] * rs_) out.decode(static_cast<int>(k), need_at[w], got[w], src);
        need_at[w] += got[w];
      }
      if (window_) window_->fence(node_comm_);
      times_.read += t1 - t0;
      times_.wait += t2 - t1;
      times_.exchange += MPI_Wtime() - t2;
    }
    const double t2 = MPI_Wtime();
    agree(comm_, error);
    times_.wait += MPI_Wtime() - t2;
  }

  void close() override {
    src_.reset();
    if (window_) window_->free();  // collective over the node: close() is collective
  }
  ReadTimes times() const override { return times_; }

 private:
  MPI_Comm comm_ = MPI_COMM_NULL, rcomm_ = MPI_COMM_NULL, node_comm_ = MPI_COMM_NULL;
  bool owns_rcomm_ = false;
  bool shared_memory_ = true;
  std::unique_ptr<NodeWindow> window_;       // the readers' pieces, one window per node
  std::int64_t piece_bytes_ = 0;             // a reader's part of it
  std::vector<unsigned char*> local_base_;   // per reader: its piece when on this node
  int any_remote_ = 0;                       // some rank takes values from a reader on another node
  int rank_ = 0, size_ = 1, index_ = 0;
  bool is_reader_ = false;
  std::vector<int> reader_ranks_;
  std::int64_t buffer_bytes_ = 0, npoin_ = 0;
  int rs_ = 4;
  std::unique_ptr<RangeSource> src_;
  const std::int64_t* need_ = nullptr;             // this rank's nodes (the Reader's list)
  std::vector<std::int64_t> need_first_;           // where each reader's start in them
  std::vector<std::int64_t> asked_, asked_first_;  // reader: the nodes each rank asked, by rank
  std::vector<unsigned char> piece_, send_, recv_;  // piece_: a reader's piece without shared memory
  ReadTimes times_;
};

}  // namespace

std::unique_ptr<ReadStrategy> make_aggregated_reader() { return std::make_unique<AggregatedReader>(); }

}  // namespace anabranch::pio
