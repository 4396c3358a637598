// independent: every rank opens the file alone and reads its own nodes: SERAFIN one read per
// run of consecutive nodes, HDF5 one selection of them. hdf5: the same over parallel HDF5,
// the file opened by all ranks together (the MPI-IO driver, collective metadata). Simple;
// shows what a decomposition's scattered small reads cost.
#include "core/error.hpp"
#include "pio/mpi_util.hpp"
#include "pio/reader.hpp"
#include "pio/results.hpp"

namespace anabranch::pio {
namespace {

class OwnNodesReader final : public ReadStrategy {
 public:
  explicit OwnNodesReader(bool parallel_hdf5) : hdf5_(parallel_hdf5) {}
  const char* name() const override { return hdf5_ ? "hdf5" : "independent"; }

  FileFacts open(MPI_Comm comm, const std::string& path, const ReaderOptions&) override {
    comm_ = comm;
    int rank = 0;
    MPI_Comm_rank(comm_, &rank);
    FileFacts facts;
    collective(comm_, [&] {
      if (hdf5_ && !looks_like_hdf5(path))
        throw UsageError("the hdf5 read strategy reads HDF5 files; " + path + " is not one (use aggregated or independent)");
    });
    collective(comm_, [&] {
      src_ = RangeSource::open(path, hdf5_ ? comm_ : MPI_COMM_NULL);
      if (rank == 0) facts = src_->facts();  // the others take rank 0's
    });
    return broadcast_facts(comm_, 0, facts);
  }

  void prepare(const std::vector<std::int64_t>& need) override { need_ = &need; }

  void read(std::int64_t frame, const std::vector<int>& vars, unsigned char* out) override {
    const double t0 = MPI_Wtime();
    std::exception_ptr error;
    const auto n = static_cast<std::int64_t>(need_->size());
    const int rs = rs_of();
    for (std::size_t k = 0; k < vars.size(); ++k) {
      try {
        if (!error || hdf5_) src_->read_nodes(frame, vars[k], need_->data(), n, out + static_cast<std::int64_t>(k) * n * rs);
      } catch (...) {
        if (!error) error = std::current_exception();
      }
    }
    const double t1 = MPI_Wtime();
    agree(comm_, error);
    times_.read += t1 - t0;
    times_.wait += MPI_Wtime() - t1;
  }

  void close() override { src_.reset(); }
  ReadTimes times() const override { return times_; }

 private:
  int rs_of() const { return src_->real_bytes(); }
  bool hdf5_;
  MPI_Comm comm_ = MPI_COMM_NULL;
  std::unique_ptr<RangeSource> src_;
  const std::vector<std::int64_t>* need_ = nullptr;
  ReadTimes times_;
};

}  // namespace

std::unique_ptr<ReadStrategy> make_independent_reader() { return std::make_unique<OwnNodesReader>(false); }
#ifdef ANABRANCH_HAVE_HDF5
std::unique_ptr<ReadStrategy> make_hdf5_reader() { return std::make_unique<OwnNodesReader>(true); }
#endif

}  // namespace anabranch::pio
