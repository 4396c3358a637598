// collective: every rank encodes its runs of a frame, in file order, into a buffer, and
// describes where they go with one indexed file view; then MPI_File_write_all: MPI-IO may
// merge the requests (two-phase I/O). A frame goes in rounds of at most the buffer a rank.
#include <algorithm>
#include <climits>

#include "core/error.hpp"
#include "parallel/mpi_util.hpp"
#include "io/shared_file.hpp"
#include "io/strategy.hpp"

namespace anabranch::pio {
namespace {

class CollectiveStrategy final : public Strategy {
 public:
  const char* name() const override { return "collective"; }

  void open(const StrategySetup& setup) override {
    s_ = setup;
    fh_ = open_shared_file(s_.comm, s_);
    // The buffer: no more than this rank's bytes of a frame, its pages touched now.
    std::int64_t mine = 0;
    s_.frame->for_each_run([&](const Run& r) { mine += run_bytes(r, s_.frame->value_bytes()); });
    buffer_.resize(static_cast<std::size_t>(std::min(most(), mine)));
  }

  // In rounds of at most buffer_bytes a rank (as many rounds on every rank: the most any
  // rank needs), each one view and one MPI_File_write_all.
  void write(const EncodedFrame& frame) override {
    const double t0 = MPI_Wtime();
    std::exception_ptr error;
    long long rounds = 0;
    try {
      plan(frame);
      rounds = static_cast<long long>(round_start_.size()) - 1;
    } catch (...) {
      error = std::current_exception();
    }
    const double t1 = MPI_Wtime();
    agree(s_.comm, error);
    MPI_Allreduce(MPI_IN_PLACE, &rounds, 1, MPI_LONG_LONG, MPI_MAX, s_.comm);
    double encode = t1 - t0, io = 0;
    // A failure in a round is kept and agreed after the last: every rank takes part in every
    // round (a rank that failed with an empty view), one agreement a frame.
    for (long long r = 0; r < rounds; ++r) {
      const double t2 = MPI_Wtime();
      MPI_Datatype view = MPI_DATATYPE_NULL;
      std::int64_t bytes = 0;
      try {
        if (!error) bytes = assemble(frame, r, view);
      } catch (...) {
        error = std::current_exception();
        if (view != MPI_DATATYPE_NULL) MPI_Type_free(&view);
        bytes = 0;
      }
      if (view == MPI_DATATYPE_NULL) {
        MPI_Type_contiguous(1, MPI_BYTE, &view);
        MPI_Type_commit(&view);
      }
      const double t3 = MPI_Wtime();
      encode += t3 - t2;
      int rc = MPI_File_set_view(fh_, 0, MPI_BYTE, view, "native", s_.info);
      MPI_Type_free(&view);
      MPI_Status st;
      const int wrc = MPI_File_write_all(fh_, buffer_.data(), static_cast<int>(bytes), MPI_BYTE, &st);
      io += MPI_Wtime() - t3;
      if (error) continue;
      try {
        check_mpi(rc, "MPI_File_set_view");
        check_written(wrc, st, bytes, s_.final_path, s_.frame->locate(frame.index, 0).first, "MPI_File_write_all");
      } catch (...) {
        error = std::current_exception();
      }
    }
    agree(s_.comm, error);
    times_.encode += encode;  // the frame's bytes in view order
    times_.write += io;       // MPI-IO's two-phase exchange included
    times_.wait += MPI_Wtime() - t0 - encode - io;
  }

  PhaseTimes phases() const override { return times_; }

  std::map<std::string, std::string> file_hints() const override { return hints_in_use(fh_); }

  void abandon() override {
    if (fh_ != MPI_FILE_NULL) MPI_File_close(&fh_);
  }

  void close() override { close_shared_file(s_.comm, fh_); }

 private:
  // The frame's runs in file order (absolute offsets: a frame's segments need not follow one
  // another), cut into pieces of whole values of at most the buffer, and where each round
  // starts among them.
  void plan(const EncodedFrame& frame) {
    const FrameLayout& L = *s_.frame;
    const int rs = L.value_bytes();
    L.fixed_bytes(frame.index, frame.time, fixed_);
    const std::int64_t most = this->most();
    pieces_.clear();
    L.for_each_run([&](const Run& r) {
      const std::int64_t n = run_bytes(r, rs);
      for (std::int64_t b = 0; b < n; b += most) pieces_.push_back({L.locate(frame.index, r.at + b).first, r, b, std::min(n, b + most)});
    });
    const auto by_offset = [](const Piece& a, const Piece& b) { return a.offset < b.offset; };
    if (!std::is_sorted(pieces_.begin(), pieces_.end(), by_offset)) std::sort(pieces_.begin(), pieces_.end(), by_offset);
    round_start_.assign(1, 0);
    std::int64_t used = 0;
    for (std::size_t i = 0; i < pieces_.size(); ++i) {
      const std::int64_t n = pieces_[i].to - pieces_[i].from;
      if (used + n > most) {
        round_start_.push_back(i);
        used = 0;
      }
      used += n;
    }
    if (!pieces_.empty()) round_start_.push_back(pieces_.size());
  }

  // A round's bytes on a rank: the buffer, in whole values.
  std::int64_t most() const {
    const int rs = s_.frame->value_bytes();
    return std::max<std::int64_t>(rs, std::min<std::int64_t>(s_.buffer_bytes, INT_MAX) / rs * rs);
  }

  // Round r's pieces encoded into the buffer, and the view that puts them in place;
  // returns the bytes (a rank with fewer rounds writes none in the last ones). Measured: the
  // values described in place (an indexed type of the caller's arrays, no buffer) wrote 200
  // MB frames of blocks 25% slower than copied into 4 MiB rounds, and rounds of 64 MiB or
  // more slower again.
  std::int64_t assemble(const EncodedFrame& frame, long long r, MPI_Datatype& view) {
    const int rs = s_.frame->value_bytes();
    std::vector<int> lens;
    std::vector<MPI_Aint> disps;
    unsigned char* w = buffer_.data();
    const auto first = static_cast<std::size_t>(r) + 1 < round_start_.size() ? round_start_[static_cast<std::size_t>(r)] : pieces_.size();
    const auto end = static_cast<std::size_t>(r) + 1 < round_start_.size() ? round_start_[static_cast<std::size_t>(r) + 1] : pieces_.size();
    for (std::size_t i = first; i < end; ++i) {
      const Piece& p = pieces_[i];
      const std::int64_t n = p.to - p.from;
      // A view that overlaps itself or starts before the file: MPI-IO may refuse it on this
      // rank alone, inside the collective MPI_File_set_view, and leave the others waiting
      // there. Refused here: this rank takes part with an empty view, the failure agreed
      // after the frame.
      if (p.offset < 0 || (!disps.empty() && p.offset < disps.back() + lens.back()))
        throw MpiError("cannot write " + s_.final_path + ": this rank's runs overlap or fall before the file at byte " +
                       std::to_string(p.offset) + " (an internal error)");
      encode_run(p.run, p.from, p.to, rs, *frame.encoder, fixed_.data(), w);
      w += n;
      if (!lens.empty() && disps.back() + lens.back() == p.offset)  // one block of the view where runs follow one another
        lens.back() += static_cast<int>(n);
      else {
        lens.push_back(static_cast<int>(n));
        disps.push_back(static_cast<MPI_Aint>(p.offset));
      }
    }
    if (lens.empty())  // nothing to write: a plain byte view, zero bytes
      check_mpi(MPI_Type_contiguous(1, MPI_BYTE, &view), "MPI_Type_contiguous");
    else
      check_mpi(MPI_Type_create_hindexed(static_cast<int>(lens.size()), lens.data(), disps.data(), MPI_BYTE, &view),
                "MPI_Type_create_hindexed");
    check_mpi(MPI_Type_commit(&view), "MPI_Type_commit");
    return w - buffer_.data();
  }

  // Bytes [from, to) of a run, at file offset `offset`.
  struct Piece {
    std::int64_t offset;
    Run run;
    std::int64_t from, to;
  };

  StrategySetup s_;
  PhaseTimes times_;
  MPI_File fh_ = MPI_FILE_NULL;
  std::vector<Piece> pieces_;  // kept from frame to frame (its pages stay mapped)
  std::vector<std::size_t> round_start_;
  std::vector<unsigned char> buffer_, fixed_;
};

}  // namespace

std::unique_ptr<Strategy> make_collective_strategy() { return std::make_unique<CollectiveStrategy>(); }

}  // namespace anabranch::pio
