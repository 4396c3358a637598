// file-per-process: every rank writes its own SERAFIN file, named as TELEMAC names per-rank
// results (<path>NNNNN-IIIII): its local mesh, KNOLG in the IPOBO slot, its local values.
// The baseline users have today, and the input of `anabranch merge`.
#include "core/error.hpp"
#include "formats/partel.hpp"
#include "parallel/mpi_util.hpp"
#include "io/strategy.hpp"

namespace anabranch::pio {
namespace {

class FilePerProcessStrategy final : public Strategy {
 public:
  const char* name() const override { return "file-per-process"; }
  bool one_file() const override { return false; }
  bool encodes_owned() const override { return false; }

  void open(const StrategySetup& setup) override {
    s_ = setup;
    int rank = 0, size = 1;
    MPI_Comm_rank(s_.comm, &rank);
    MPI_Comm_size(s_.comm, &size);
    collective(s_.comm, [&] {
      if (!s_.local_header || !s_.local_mesh)
        throw UsageError("the file-per-process strategy needs each rank's local mesh (ab_writer_set_local_mesh)");
      serafin::WriteOptions o;
      o.atomic = false;
      writer_ = std::make_unique<serafin::Writer>(s_.path + partel::suffix(size, rank), *s_.local_header, *s_.local_mesh, o);
    });
  }

  void write(const EncodedFrame& frame) override {
    collective(s_.comm, [&] {
      const auto& h = writer_->header();
      const std::int64_t bytes = h.npoin * real_size(h.precision);
      writer_->begin_frame(frame.time);
      for (int v = 0; v < h.nvar(); ++v) writer_->write_variable_encoded(frame.local_values->data() + v * bytes);
    });
  }

  void close() override {
    collective(s_.comm, [&] {
      if (writer_) writer_->close();
      writer_.reset();
    });
  }

  int files_created(int nranks) const override { return nranks; }

 private:
  StrategySetup s_;
  std::unique_ptr<serafin::Writer> writer_;
};

}  // namespace

std::unique_ptr<Strategy> make_file_per_process_strategy() { return std::make_unique<FilePerProcessStrategy>(); }

}  // namespace anabranch::pio
