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

class CollectiveStrategy final : public SharedFileStrategy {
 public:
  const char* name() const override { return "collective"; }

  void open(const StrategySetup& setup) override {
    s_ = setup;
    fh_ = open_shared_file(s_.comm, s_);
    // The buffer: no more than this rank's bytes of a frame, its pages touched now.
    buffer_.resize(static_cast<std::size_t>(std::min(most(), s_.frame->own_bytes())));
  }

  // In rounds of at most buffer_bytes a rank (as many rounds on every rank: the most any
  // rank needs), each one view and one MPI_File_write_all.
  void write(const EncodedFrame& frame) override {
    const double t0 = MPI_Wtime();
    std::exception_ptr error;
    long long rounds = 0;
    try {
      s_.frame->fixed_bytes(frame.index, frame.time, fixed_);
      rounds_.plan(*s_.frame, frame.index, most(), false);
      rounds = rounds_.rounds();
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
      if (!error) try {
          encode_round(frame, r);
        } catch (...) {
          error = std::current_exception();
        }
      const double t3 = MPI_Wtime();
      encode += t3 - t2;
      std::int64_t bytes = 0;
      MPI_Status st;
      const int rc = rounds_.transfer(fh_, r, true, buffer_.data(), s_.info, s_.final_path, bytes, st, error);
      io += MPI_Wtime() - t3;
      if (!error) try {
          check_written(rc, st, bytes, s_.final_path, s_.frame->locate(frame.index, 0).first, "MPI_File_write_all");
        } catch (...) {
          error = std::current_exception();
        }
    }
    agree(s_.comm, error);
    times_.encode += encode;  // the frame's bytes in view order
    times_.write += io;       // MPI-IO's two-phase exchange included
    times_.wait += MPI_Wtime() - t0 - encode - io;
  }

 private:
  // A round's bytes on a rank: the buffer, in whole values.
  std::int64_t most() const {
    const int rs = s_.frame->value_bytes();
    return std::max<std::int64_t>(rs, std::min<std::int64_t>(s_.buffer_bytes, INT_MAX) / rs * rs);
  }

  // Round r's pieces encoded into the buffer, in view order. Measured: the values described
  // in place (an indexed type of the caller's arrays, no buffer) wrote 200 MB frames of
  // blocks 25% slower than copied into 4 MiB rounds, and rounds of 64 MiB or more slower again.
  void encode_round(const EncodedFrame& frame, long long r) {
    unsigned char* w = buffer_.data();
    const auto [first, end] = rounds_.round(r);
    for (std::size_t i = first; i < end; ++i) {
      const auto& p = rounds_.pieces[i];
      encode_run(p.run, p.from, p.to, s_.frame->value_bytes(), *frame.encoder, fixed_.data(), w);
      w += p.to - p.from;
    }
  }

  ViewRounds rounds_;
  std::vector<unsigned char> buffer_, fixed_;
};

}  // namespace

std::unique_ptr<Strategy> make_collective_strategy() { return std::make_unique<CollectiveStrategy>(); }

}  // namespace anabranch::pio
