// The shared file's readers. SERAFIN files go through the engine's RunReader
// (io/strategy.hpp) over the SERAFIN frame layout: `aggregated` (a few readers per node read
// contiguous stretches of the frame into node shared memory, where each rank decodes its
// values: io/read_aggregated.cpp), `independent` (each rank's runs that follow one another
// in one MPI_File_read_at), `collective` (each round through one indexed view and
// MPI_File_read_all: MPI-IO's two-phase reading). Only rank 0 parses the header and checks
// the records' markers. HDF5 files (VTKHDF, a CGNS mesh result) take the same byte path
// where their values are stored as they are (VTKHDF's unfiltered chunks, CGNS's contiguous
// arrays): rank 0 finds each frame's variables' places (a few words) and the readers read
// them as they read a SERAFIN file's records. `hdf5` reads HDF5 selections over parallel
// HDF5, the file opened by all ranks together (the MPI-IO driver, collective metadata); so
// do `independent` and `aggregated`, each rank alone, where the values are compressed (a
// compressed CGNS mesh result: each rank reads windows of the nodes it needs through HDF5,
// which decodes the chunks they touch). Tecplot files (a finite-element zone a frame) take
// the byte path too: each zone's variables are arrays of their own.
#include <cstring>
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
    int kind[2] = {0, 0};  // HDF5; Tecplot
    collective(comm_, [&] {
      if (rank != 0) return;
      kind[0] = looks_like_hdf5(path) ? 1 : 0;
      kind[1] = !kind[0] && tecplot_file(path) ? 1 : 0;
    });
    MPI_Bcast(kind, 2, MPI_INT, 0, comm_);
    const bool hdf5 = kind[0] != 0, tecplot = kind[1] != 0;
    collective(comm_, [&] {
      if (mode_ == Mode::Hdf5 && !hdf5)
        throw UsageError("the hdf5 read strategy reads HDF5 files; " + path + " is not one (use aggregated or independent)");
      if (mode_ == Mode::Collective && hdf5)
        throw UsageError("the collective read strategy reads SERAFIN files; " + path + " is HDF5 (use hdf5, aggregated or independent)");
#ifndef ANABRANCH_HAVE_HDF5
      if (hdf5) throw UsageError(path + " is an HDF5 file and this anabranch was built without HDF5");
#endif
    });
    FileFacts facts;
    if (hdf5 || tecplot) {
      long long piece[2] = {0, 0};  // bytes of one piece of a variable's frame, where the engine reads them in place; read by each rank
      collective(comm_, [&] {
        if (rank != 0) return;  // the others take rank 0's facts
        located_file_ = ResultFile::open(path);
        facts.header = located_file_->header();
        facts.frames = located_file_->frame_count();
        facts.times = located_file_->times();
        facts.order = native_byte_order();
        if (mode_ != Mode::Hdf5 && (facts.frames == 0 || !located_file_->in_place(0, 0).empty())) piece[0] = located_file_->in_place_bytes();
        piece[1] = located_file_->format() != std::string("hdf5") ? 1 : 0;
      });
      MPI_Bcast(piece, 2, MPI_LONG_LONG, 0, comm_);
      facts = broadcast_facts(comm_, 0, facts);
      if (piece[0] > 0) {
        stretch_ = piece[0];
        header_ = facts.header;
        layout_ = serafin::Layout::of(header_);
        collective(comm_, [&] { input_ = std::make_unique<FileSource>(path); });
        fh_ = open_input_file(comm_, path, options.hints);
        how_ = RunReading::of(name(), options.buffer_bytes, options.readers_per_node, options.shared_memory);
        return facts;
      }
      located_file_.reset();
      if (piece[1]) {  // a compressed CGNS mesh result, a Tecplot file of mixed precisions: each rank its own handle
        collective(comm_, [&] {
          if (mode_ == Mode::Hdf5) throw UsageError("the hdf5 read strategy reads VTKHDF files; " + path + " is not one (use aggregated or independent)");
          own_file_ = ResultFile::open(path);
        });
        return facts;
      }
#ifdef ANABRANCH_HAVE_HDF5
      collective(comm_, [&] { h5_ = std::make_unique<vtkhdf::Input>(path, mode_ == Mode::Hdf5 ? comm_ : MPI_COMM_NULL); });
#endif
      return facts;
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
    if (stretch_ > 0) located_ = std::make_unique<StretchedFrame>(*frame_, stretch_);
    runs_ = std::make_unique<RunReader>(comm_, fh_, path_, located_ ? static_cast<const FrameLayout&>(*located_) : *frame_, how_);
  }

  void read(std::int64_t frame, const std::vector<int>& vars, const ValueDecoder& out) override {
    if (runs_) {
      if (frame_->set_variables(vars)) runs_->relayout();
      if (located_) {  // rank 0 says where the frame's variables are
        std::vector<std::int64_t> at;
        collective(comm_, [&] {
          if (!located_file_) return;
          for (int v : vars) {
            const auto pieces = located_file_->in_place(frame, v);
            if (pieces.empty())
              throw FormatError(path_ + ": frame " + std::to_string(frame) + " of variable " + std::to_string(v + 1) +
                                " is not stored as its first frame is (compressed, or not written)");
            at.insert(at.end(), pieces.begin(), pieces.end());
          }
        });
        const std::string bytes = broadcast(comm_, std::string(reinterpret_cast<const char*>(at.data()), at.size() * sizeof(std::int64_t)));
        at.resize(bytes.size() / sizeof(std::int64_t));
        std::memcpy(at.data(), bytes.data(), bytes.size());
        located_->set(frame, at);
      }
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
    const auto n = static_cast<std::int64_t>(need_->size());
#ifdef ANABRANCH_HAVE_HDF5
    const bool dp = (h5_ ? h5_->header() : own_file_->header()).precision == Precision::Double;
#else
    const bool dp = own_file_->header().precision == Precision::Double;
#endif
    scratch_.resize(static_cast<std::size_t>(n * (dp ? 8 : 4)));
    for (std::size_t k = 0; k < vars.size(); ++k) {
      try {
        if (!error || mode_ == Mode::Hdf5) {  // on after a failure: HDF5's metadata reads are collective
          if (own_file_ && dp)
            read_windows(frame, vars[k], reinterpret_cast<double*>(scratch_.data()));
          else if (own_file_)
            read_windows(frame, vars[k], reinterpret_cast<float*>(scratch_.data()));
#ifdef ANABRANCH_HAVE_HDF5
          else if (dp)
            h5_->read_nodes(frame, vars[k], need_->data(), n, reinterpret_cast<double*>(scratch_.data()));
          else
            h5_->read_nodes(frame, vars[k], need_->data(), n, reinterpret_cast<float*>(scratch_.data()));
#endif
          if (!error) out.decode(static_cast<int>(k), 0, n, scratch_.data());
        }
      } catch (...) {
        if (!error) error = std::current_exception();
      }
    }
    const double t1 = MPI_Wtime();
    agree(comm_, error);
    times_.read += t1 - t0;
    times_.wait += MPI_Wtime() - t1;
  }

  void close() override {
#ifdef ANABRANCH_HAVE_HDF5
    h5_.reset();
#endif
    own_file_.reset();
    located_file_.reset();
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
  // The needed nodes' values of `var` in `frame` from this rank's own handle, read a window
  // of nodes at a time (from its first needed node to its last): memory bounded by the
  // window, each chunk decoded once per window that touches it.
  template <class T>
  void read_windows(std::int64_t frame, int var, T* out) {
    constexpr std::int64_t kWindow = std::int64_t{1} << 20;
    const std::vector<std::int64_t>& need = *need_;
    std::vector<T> window;
    for (std::size_t i = 0; i < need.size();) {
      const std::int64_t first = need[i], last_allowed = first - first % kWindow + kWindow;
      std::size_t j = i;
      while (j < need.size() && need[j] < last_allowed) ++j;
      const std::int64_t count = need[j - 1] - first + 1;
      window.resize(static_cast<std::size_t>(count));
      own_file_->read_values(frame, var, first, count, window.data());
      for (std::size_t k = i; k < j; ++k) out[k] = window[static_cast<std::size_t>(need[k] - first)];
      i = j;
    }
  }

  Mode mode_;
  MPI_Comm comm_ = MPI_COMM_NULL;
  std::string path_;
  // HDF5 files.
#ifdef ANABRANCH_HAVE_HDF5
  std::unique_ptr<vtkhdf::Input> h5_;
#endif
  std::vector<unsigned char> scratch_;
  std::unique_ptr<ResultFile> own_file_;  // a compressed CGNS mesh result, a Tecplot file of mixed precisions: this rank's handle
  // SERAFIN files.
  std::unique_ptr<FileSource> input_;
  std::unique_ptr<serafin::Reader> markers_;  // rank 0: the header, the records' markers
  serafin::Header header_;
  serafin::Layout layout_;
  MPI_File fh_ = MPI_FILE_NULL;
  RunReading how_;
  std::unique_ptr<SerafinFrame> frame_;
  // HDF5 files read in place: rank 0's file (where each frame's values are), the pieces'
  // bytes, the frame over them.
  std::unique_ptr<ResultFile> located_file_;
  std::int64_t stretch_ = 0;
  std::unique_ptr<StretchedFrame> located_;
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
