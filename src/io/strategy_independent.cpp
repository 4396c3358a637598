// independent: every rank encodes its runs, in file order, into one staging buffer and
// writes each contiguous stretch of it with its own MPI_File_write_at. Simple; shows what
// many small writes cost where the runs are short (scattered mesh nodes), and is the
// fastest on one node for long runs (whole blocks): the buffer is written while it is still
// in the core's cache.
#include <algorithm>
#include <memory>

#include "parallel/mpi_util.hpp"
#include "io/shared_file.hpp"
#include "io/strategy.hpp"

namespace anabranch::pio {
namespace {

// Contiguous bytes gathered, written in one call.
class Stager {
 public:
  Stager(MPI_File fh, const std::string& path, std::int64_t bytes)
      : fh_(fh), path_(path), buf_(static_cast<std::size_t>(std::max<std::int64_t>(bytes, 1 << 16))) {}
  std::int64_t capacity() const { return static_cast<std::int64_t>(buf_.size()); }
  // Room for n <= capacity() bytes at file offset `at`.
  unsigned char* put(std::int64_t at, std::int64_t n) {
    if (used_ > 0 && (at != start_ + used_ || used_ + n > capacity())) flush();
    if (used_ == 0) start_ = at;
    unsigned char* p = buf_.data() + used_;
    used_ += n;
    return p;
  }
  void flush() {
    if (used_ > 0) write_at(fh_, start_, buf_.data(), used_, path_);
    used_ = 0;
  }

 private:
  MPI_File fh_;
  const std::string& path_;
  std::vector<unsigned char> buf_;
  std::int64_t start_ = 0, used_ = 0;
};

class IndependentStrategy final : public SharedFileStrategy {
 public:
  const char* name() const override { return "independent"; }

  void open(const StrategySetup& setup) override {
    s_ = setup;
    fh_ = open_shared_file(s_.comm, s_);
    // The stage: no more than this rank's bytes of a frame, its pages touched now.
    stage_ = std::make_unique<Stager>(fh_, s_.final_path, std::min(s_.buffer_bytes, s_.frame->own_bytes()));
  }

  void write(const EncodedFrame& frame) override {
    const double t0 = MPI_Wtime();
    std::exception_ptr error;
    try {
      const FrameLayout& L = *s_.frame;
      const int rs = L.value_bytes();
      L.fixed_bytes(frame.index, frame.time, fixed_);
      Stager& stage = *stage_;
      // Whole values per piece, so that a value is cut only where its run is.
      const std::int64_t most = stage.capacity() / rs * rs;
      L.for_each_run([&](const Run& r) {
        const std::int64_t n = run_bytes(r, rs);
        for (std::int64_t b = 0; b < n;) {
          const auto [offset, room] = L.locate(frame.index, r.at + b);
          const std::int64_t len = std::min({n - b, most, room});
          encode_run(r, b, b + len, rs, *frame.encoder, fixed_.data(), stage.put(offset, len));
          b += len;
        }
      });
      stage.flush();
    } catch (...) {
      error = std::current_exception();
    }
    const double t1 = MPI_Wtime();
    agree(s_.comm, error);
    times_.write += t1 - t0;  // encoding included: it is done as the buffer fills
    times_.wait += MPI_Wtime() - t1;
  }

 private:
  std::vector<unsigned char> fixed_;
  std::unique_ptr<Stager> stage_;
};

}  // namespace

std::unique_ptr<Strategy> make_independent_strategy() { return std::make_unique<IndependentStrategy>(); }

}  // namespace anabranch::pio
