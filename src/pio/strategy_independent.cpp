// independent: every rank writes each run of consecutive owned nodes with its own
// MPI_File_write_at. Simple; shows what many small writes cost.
#include "pio/mpi_util.hpp"
#include "pio/shared_file.hpp"
#include "pio/strategy.hpp"

namespace anabranch::pio {
namespace {

class IndependentStrategy final : public Strategy {
 public:
  const char* name() const override { return "independent"; }

  void open(const StrategySetup& setup) override {
    s_ = setup;
    MPI_Comm_rank(s_.comm, &rank_);
    fh_ = open_shared_file(s_.comm, s_);
  }

  void write(const EncodedFrame& frame) override {
    const double t0 = MPI_Wtime();
    std::exception_ptr error;
    try {
      const auto& owned = *s_.owned;
      const auto n = static_cast<std::int64_t>(owned.size());
      const int rs = s_.layout.real_bytes;
      const unsigned char* data = frame.owned_values->data();
      for (int v = 0; v < s_.layout.nvar; ++v) {
        const std::int64_t base = s_.layout.values_offset(frame.index, v);
        for (std::int64_t i = 0; i < n;) {
          std::int64_t j = i + 1;
          while (j < n && owned[static_cast<std::size_t>(j)] == owned[static_cast<std::size_t>(j - 1)] + 1) ++j;
          write_at(fh_, base + owned[static_cast<std::size_t>(i)] * rs, data + (v * n + i) * rs, (j - i) * rs, s_.final_path);
          i = j;
        }
      }
      if (rank_ == 0)
        for (const auto& [offset, bytes] : frame_fixed_pieces(s_.header, s_.layout, frame.index, frame.time))
          write_at(fh_, offset, bytes.data(), static_cast<std::int64_t>(bytes.size()), s_.final_path);
    } catch (...) {
      error = std::current_exception();
    }
    const double t1 = MPI_Wtime();
    agree(s_.comm, error);
    times_.write += t1 - t0;
    times_.wait += MPI_Wtime() - t1;
  }

  PhaseTimes phases() const override { return times_; }

  std::map<std::string, std::string> file_hints() const override { return hints_in_use(fh_); }

  void abandon() override {
    if (fh_ != MPI_FILE_NULL) MPI_File_close(&fh_);
  }

  void close() override { close_shared_file(s_.comm, fh_); }

 private:
  StrategySetup s_;
  PhaseTimes times_;
  MPI_File fh_ = MPI_FILE_NULL;
  int rank_ = 0;
};

}  // namespace

std::unique_ptr<Strategy> make_independent_strategy() { return std::make_unique<IndependentStrategy>(); }

}  // namespace anabranch::pio
