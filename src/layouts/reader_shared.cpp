// The shared file's readers. SERAFIN files go through the engine's RunReader
// (io/strategy.hpp) over the SERAFIN frame layout: `aggregated` (a few readers per node read
// contiguous stretches of the frame into node shared memory, where each rank decodes its
// values: io/read_aggregated.cpp), `independent` (each rank's runs that follow one another
// in one MPI_File_read_at), `collective` (each round through one indexed view and
// MPI_File_read_all: MPI-IO's two-phase reading). Only rank 0 parses the header and checks
// the records' markers. HDF5 files are no byte layout (HDF5 places the datasets):
// `independent` and `aggregated` open the file on each rank alone and read a selection of
// its nodes; `hdf5` the same over parallel HDF5, the file opened by all ranks together (the
// MPI-IO driver, collective metadata).
#include <memory>

#include "core/error.hpp"
#include "core/io.hpp"
#include "parallel/mpi_util.hpp"
#include "layouts/reader.hpp"
#include "h5/results.hpp"
#ifdef ANABRANCH_HAVE_HDF5
#include "h5/vtkhdf.hpp"
#endif
#include "io/shared_file.hpp"
#include "layouts/serafin_frame.hpp"

namespace anabranch::pio {
namespace {

class OwnNodesReader final : public ReadStrategy {
 public:
  enum class Mode { Aggregated, Independent, Collective, Hdf5 };
  explicit OwnNodesReader(Mode mode) : mode_(mode) {}
  const char* name() const override {
    return mode_ == Mode::Hdf5 ? "hdf5" : mode_ == Mode::Collective ? "collective" : mode_ == Mode::Aggregated ? "aggregated" : "independent";
  }

  FileFacts open(MPI_Comm comm, const std::string& path, const ReaderOptions& options) override {
    comm_ = comm;
    path_ = path;
    int rank = 0;
    MPI_Comm_rank(comm_, &rank);
    int hdf5 = 0;
    collective(comm_, [&] {
      if (rank == 0) hdf5 = looks_like_hdf5(path) ? 1 : 0;
    });
    MPI_Bcast(&hdf5, 1, MPI_INT, 0, comm_);
    collective(comm_, [&] {
      if (mode_ == Mode::Hdf5 && !hdf5)
        throw UsageError("the hdf5 read strategy reads HDF5 files; " + path + " is not one (use aggregated or independent)");
      if (mode_ == Mode::Collective && hdf5)
        throw UsageError("the collective read strategy reads SERAFIN files; " + path + " is HDF5 (use hdf5, aggregated or independent)");
    });
    FileFacts facts;
    if (hdf5) {
#ifdef ANABRANCH_HAVE_HDF5
      collective(comm_, [&] {
        h5_ = std::make_unique<vtkhdf::Input>(path, mode_ == Mode::Hdf5 ? comm_ : MPI_COMM_NULL);
        if (rank != 0) return;  // the others take rank 0's facts
        facts.header = h5_->header();
        facts.frames = h5_->frame_count();
        facts.times = h5_->times();
        facts.order = native_byte_order();
      });
      return broadcast_facts(comm_, 0, facts);
#else
      collective(comm_, [&] { throw UsageError(path + " is an HDF5 file and this anabranch was built without HDF5"); });
#endif
    }
    collective(comm_, [&] {
      input_ = std::make_unique<FileSource>(path);  // registers the file as an input: no output may replace it
      if (rank != 0) return;
      markers_ = std::make_unique<serafin::Reader>(path);
      facts.header = markers_->header();
      facts.frames = markers_->frame_count();
      facts.times = markers_->read_times();
      facts.order = facts.header.byte_order;
    });
    facts = broadcast_facts(comm_, 0, facts);
    header_ = facts.header;
    layout_ = serafin::Layout::of(header_);
    fh_ = open_input_file(comm_, path, options.hints);
    how_ = RunReading::of(name(), options.buffer_bytes, options.readers_per_node, options.shared_memory);
    return facts;
  }

  void prepare(const std::vector<std::int64_t>& need) override {
    need_ = &need;
    if (fh_ == MPI_FILE_NULL) return;
    frame_ = std::make_unique<SerafinFrame>(header_, layout_, need, SerafinFrame::Role::Values);
    runs_ = std::make_unique<RunReader>(comm_, fh_, path_, *frame_, how_);
  }

  void read(std::int64_t frame, const std::vector<int>& vars, const ValueDecoder& out) override {
    if (runs_) {
      if (frame_->set_variables(vars)) runs_->relayout();
      runs_->read(frame, out);  // agreed inside
      // Rank 0 checks the records' markers in the pages the readers have just brought in
      // (before the read, each was a disk read): a damaged file is an error on every rank.
      collective(comm_, [&] {
        if (markers_)
          for (int v : vars) markers_->check_markers(frame, v);
      });
      return;
    }
    const double t0 = MPI_Wtime();
    std::exception_ptr error;
#ifdef ANABRANCH_HAVE_HDF5
    const auto n = static_cast<std::int64_t>(need_->size());
    const bool dp = h5_->header().precision == Precision::Double;
    scratch_.resize(static_cast<std::size_t>(n * (dp ? 8 : 4)));
    for (std::size_t k = 0; k < vars.size(); ++k) {
      try {
        if (!error || mode_ == Mode::Hdf5) {  // on after a failure: HDF5's metadata reads are collective
          if (dp)
            h5_->read_nodes(frame, vars[k], need_->data(), n, reinterpret_cast<double*>(scratch_.data()));
          else
            h5_->read_nodes(frame, vars[k], need_->data(), n, reinterpret_cast<float*>(scratch_.data()));
          if (!error) out.decode(static_cast<int>(k), 0, n, scratch_.data());
        }
      } catch (...) {
        if (!error) error = std::current_exception();
      }
    }
#endif
    const double t1 = MPI_Wtime();
    agree(comm_, error);
    times_.read += t1 - t0;
    times_.wait += MPI_Wtime() - t1;
  }

  void close() override {
#ifdef ANABRANCH_HAVE_HDF5
    h5_.reset();
#endif
    markers_.reset();
    if (runs_) times_ = runs_->times();
    runs_.reset();
    int rc = MPI_SUCCESS;
    if (fh_ != MPI_FILE_NULL) rc = MPI_File_close(&fh_);
    input_.reset();
    check_mpi(rc, "MPI_File_close");
  }
  ReadTimes times() const override { return runs_ ? runs_->times() : times_; }

 private:
  Mode mode_;
  MPI_Comm comm_ = MPI_COMM_NULL;
  std::string path_;
  // HDF5 files.
#ifdef ANABRANCH_HAVE_HDF5
  std::unique_ptr<vtkhdf::Input> h5_;
#endif
  std::vector<unsigned char> scratch_;
  // SERAFIN files.
  std::unique_ptr<FileSource> input_;
  std::unique_ptr<serafin::Reader> markers_;  // rank 0: the header, the records' markers
  serafin::Header header_;
  serafin::Layout layout_;
  MPI_File fh_ = MPI_FILE_NULL;
  RunReading how_;
  std::unique_ptr<SerafinFrame> frame_;
  std::unique_ptr<RunReader> runs_;
  const std::vector<std::int64_t>* need_ = nullptr;
  ReadTimes times_;
};

}  // namespace

std::unique_ptr<ReadStrategy> make_aggregated_reader() { return std::make_unique<OwnNodesReader>(OwnNodesReader::Mode::Aggregated); }
std::unique_ptr<ReadStrategy> make_independent_reader() { return std::make_unique<OwnNodesReader>(OwnNodesReader::Mode::Independent); }
std::unique_ptr<ReadStrategy> make_collective_reader() { return std::make_unique<OwnNodesReader>(OwnNodesReader::Mode::Collective); }
#ifdef ANABRANCH_HAVE_HDF5
std::unique_ptr<ReadStrategy> make_hdf5_reader() { return std::make_unique<OwnNodesReader>(OwnNodesReader::Mode::Hdf5); }
#endif

}  // namespace anabranch::pio
