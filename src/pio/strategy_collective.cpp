// collective: one indexed file view per rank describing where its bytes of a frame go
// (runs of owned nodes of every variable, plus the time record and markers on rank 0),
// then one MPI_File_write_all per frame: MPI-IO may merge the requests (two-phase I/O).
#include <algorithm>
#include <cstring>

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
    MPI_Comm_rank(s_.comm, &rank_);
    fh_ = open_shared_file(s_.comm, s_);
    collective(s_.comm, [&] { build_view(); });
  }

  void write(const EncodedFrame& frame) override {
    std::exception_ptr error;
    const double t0 = MPI_Wtime();
    try {
      assemble(frame);
    } catch (...) {
      error = std::current_exception();
    }
    const double t1 = MPI_Wtime();
    agree(s_.comm, error);
    const double t2 = MPI_Wtime();
    int rc = MPI_File_set_view(fh_, s_.layout.frame_offset(frame.index), MPI_BYTE, filetype_, "native", s_.info);
    collective(s_.comm, [&] { check_mpi(rc, "MPI_File_set_view"); });
    MPI_Status st;
    rc = MPI_File_write_all(fh_, buffer_.data(), static_cast<int>(buffer_.size()), MPI_BYTE, &st);
    const double t3 = MPI_Wtime();
    collective(s_.comm, [&] {
      check_written(rc, st, static_cast<std::int64_t>(buffer_.size()), s_.final_path, s_.layout.frame_offset(frame.index),
                    "MPI_File_write_all");
    });
    times_.encode += t1 - t0;               // the frame's bytes in view order
    times_.wait += t2 - t1 + MPI_Wtime() - t3;
    times_.write += t3 - t2;                // MPI-IO's two-phase exchange included
  }

  PhaseTimes phases() const override { return times_; }

  std::map<std::string, std::string> file_hints() const override { return hints_in_use(fh_); }

  void abandon() override {
    if (fh_ != MPI_FILE_NULL) MPI_File_close(&fh_);
  }

  void close() override {
    if (filetype_ != MPI_DATATYPE_NULL) MPI_Type_free(&filetype_);
    close_shared_file(s_.comm, fh_);
  }

 private:
  // One block of the view: bytes [rel, rel + len) of the frame, taken from a fixed piece
  // (piece >= 0) or from owned values of variable v starting at owned index i.
  struct Block {
    std::int64_t rel, len;
    int piece, v;
    std::int64_t i;
  };

  void build_view() {
    const auto& owned = *s_.owned;
    const auto n = static_cast<std::int64_t>(owned.size());
    const int rs = s_.layout.real_bytes;
    const std::int64_t f0 = s_.layout.frame_offset(0);
    for (int v = 0; v < s_.layout.nvar; ++v)
      for (std::int64_t i = 0; i < n;) {
        std::int64_t j = i + 1;
        while (j < n && owned[static_cast<std::size_t>(j)] == owned[static_cast<std::size_t>(j - 1)] + 1) ++j;
        blocks_.push_back({s_.layout.values_offset(0, v) - f0 + owned[static_cast<std::size_t>(i)] * rs, (j - i) * rs, -1, v, i});
        i = j;
      }
    if (rank_ == 0) {
      auto pieces = frame_fixed_pieces(s_.header, s_.layout, 0, 0.0);
      for (std::size_t k = 0; k < pieces.size(); ++k)
        blocks_.push_back({pieces[k].first - f0, static_cast<std::int64_t>(pieces[k].second.size()), static_cast<int>(k), -1, 0});
    }
    std::sort(blocks_.begin(), blocks_.end(), [](const Block& a, const Block& b) { return a.rel < b.rel; });
    if (blocks_.empty()) {  // nothing to write: a plain byte view, zero bytes
      check_mpi(MPI_Type_contiguous(1, MPI_BYTE, &filetype_), "MPI_Type_contiguous");
      check_mpi(MPI_Type_commit(&filetype_), "MPI_Type_commit");
      return;
    }
    std::vector<int> lens;
    std::vector<MPI_Aint> disps;
    std::int64_t total = 0;
    for (const auto& b : blocks_) {
      lens.push_back(static_cast<int>(b.len));
      disps.push_back(static_cast<MPI_Aint>(b.rel));
      total += b.len;
    }
    check_mpi(MPI_Type_create_hindexed(static_cast<int>(lens.size()), lens.data(), disps.data(), MPI_BYTE, &filetype_),
              "MPI_Type_create_hindexed");
    check_mpi(MPI_Type_commit(&filetype_), "MPI_Type_commit");
    buffer_.resize(static_cast<std::size_t>(total));
  }

  void assemble(const EncodedFrame& frame) {
    const auto n = static_cast<std::int64_t>(s_.owned->size());
    const int rs = s_.layout.real_bytes;
    std::vector<std::pair<std::int64_t, std::vector<unsigned char>>> pieces;
    if (rank_ == 0) pieces = frame_fixed_pieces(s_.header, s_.layout, frame.index, frame.time);
    unsigned char* w = buffer_.data();
    for (const auto& b : blocks_) {
      const unsigned char* src = b.piece >= 0 ? pieces[static_cast<std::size_t>(b.piece)].second.data()
                                              : frame.owned_values->data() + (b.v * n + b.i) * rs;
      std::memcpy(w, src, static_cast<std::size_t>(b.len));
      w += b.len;
    }
  }

  StrategySetup s_;
  PhaseTimes times_;
  MPI_File fh_ = MPI_FILE_NULL;
  MPI_Datatype filetype_ = MPI_DATATYPE_NULL;
  std::vector<Block> blocks_;
  std::vector<unsigned char> buffer_;
  int rank_ = 0;
};

}  // namespace

std::unique_ptr<Strategy> make_collective_strategy() { return std::make_unique<CollectiveStrategy>(); }

}  // namespace anabranch::pio
