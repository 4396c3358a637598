// collective: every rank encodes its runs of a frame, in file order, into one buffer, and
// describes where they go with one indexed file view; then one MPI_File_write_all per
// frame: MPI-IO may merge the requests (two-phase I/O).
#include <algorithm>
#include <climits>
#include <numeric>

#include "core/error.hpp"
#include "pio/mpi_util.hpp"
#include "pio/shared_file.hpp"
#include "pio/strategy.hpp"

namespace anabranch::pio {
namespace {

class CollectiveStrategy final : public Strategy {
 public:
  const char* name() const override { return "collective"; }

  void open(const StrategySetup& setup) override {
    s_ = setup;
    fh_ = open_shared_file(s_.comm, s_);
    collective(s_.comm, [&] {
      const int rs = s_.frame->value_bytes();
      s_.frame->for_each_run([&](const Run& r) {
        runs_.push_back(r);
        bytes_ += run_bytes(r, rs);
      });
      if (bytes_ > INT_MAX)
        throw UsageError("cannot write " + s_.final_path + ": the collective strategy takes at most 2 GiB per rank and frame (" +
                         std::to_string(bytes_) + " bytes here); write it aggregated");
      buffer_.resize(static_cast<std::size_t>(bytes_));
    });
  }

  void write(const EncodedFrame& frame) override {
    std::exception_ptr error;
    MPI_Datatype view = MPI_DATATYPE_NULL;
    const double t0 = MPI_Wtime();
    try {
      view = assemble(frame);
    } catch (...) {
      error = std::current_exception();
    }
    const double t1 = MPI_Wtime();
    try {
      agree(s_.comm, error);
    } catch (...) {
      if (view != MPI_DATATYPE_NULL) MPI_Type_free(&view);
      throw;
    }
    const double t2 = MPI_Wtime();
    int rc = MPI_File_set_view(fh_, 0, MPI_BYTE, view, "native", s_.info);
    MPI_Type_free(&view);
    collective(s_.comm, [&] { check_mpi(rc, "MPI_File_set_view"); });
    MPI_Status st;
    rc = MPI_File_write_all(fh_, buffer_.data(), static_cast<int>(bytes_), MPI_BYTE, &st);
    const double t3 = MPI_Wtime();
    collective(s_.comm, [&] {
      check_written(rc, st, bytes_, s_.final_path, s_.frame->locate(frame.index, 0).first, "MPI_File_write_all");
    });
    times_.encode += t1 - t0;  // the frame's bytes in view order
    times_.wait += t2 - t1 + MPI_Wtime() - t3;
    times_.write += t3 - t2;   // MPI-IO's two-phase exchange included
  }

  PhaseTimes phases() const override { return times_; }

  std::map<std::string, std::string> file_hints() const override { return hints_in_use(fh_); }

  void abandon() override {
    if (fh_ != MPI_FILE_NULL) MPI_File_close(&fh_);
  }

  void close() override { close_shared_file(s_.comm, fh_); }

 private:
  // The frame's runs encoded into the buffer in file order, and the view that puts them
  // there (absolute offsets: a frame's segments need not follow one another).
  MPI_Datatype assemble(const EncodedFrame& frame) {
    const FrameLayout& L = *s_.frame;
    const int rs = L.value_bytes();
    L.fixed_bytes(frame.index, frame.time, fixed_);
    disps_.resize(runs_.size());
    for (std::size_t i = 0; i < runs_.size(); ++i) disps_[i] = static_cast<MPI_Aint>(L.locate(frame.index, runs_[i].at).first);
    order_.resize(runs_.size());
    std::iota(order_.begin(), order_.end(), std::size_t{0});
    std::sort(order_.begin(), order_.end(), [&](std::size_t a, std::size_t b) { return disps_[a] < disps_[b]; });
    std::vector<int> lens;
    std::vector<MPI_Aint> disps;
    unsigned char* w = buffer_.data();
    for (const std::size_t i : order_) {
      const std::int64_t n = run_bytes(runs_[i], rs);
      encode_run(runs_[i], 0, n, rs, *frame.encoder, fixed_.data(), w);
      w += n;
      lens.push_back(static_cast<int>(n));
      disps.push_back(disps_[i]);
    }
    MPI_Datatype view = MPI_DATATYPE_NULL;
    if (lens.empty())  // nothing to write: a plain byte view, zero bytes
      check_mpi(MPI_Type_contiguous(1, MPI_BYTE, &view), "MPI_Type_contiguous");
    else
      check_mpi(MPI_Type_create_hindexed(static_cast<int>(lens.size()), lens.data(), disps.data(), MPI_BYTE, &view),
                "MPI_Type_create_hindexed");
    check_mpi(MPI_Type_commit(&view), "MPI_Type_commit");
    return view;
  }

  StrategySetup s_;
  PhaseTimes times_;
  MPI_File fh_ = MPI_FILE_NULL;
  std::vector<Run> runs_;
  std::vector<MPI_Aint> disps_;
  std::vector<std::size_t> order_;
  std::vector<unsigned char> buffer_, fixed_;
  std::int64_t bytes_ = 0;
};

}  // namespace

std::unique_ptr<Strategy> make_collective_strategy() { return std::make_unique<CollectiveStrategy>(); }

}  // namespace anabranch::pio
