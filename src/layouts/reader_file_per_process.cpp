// file-per-process reading: each rank reads its own part file, as TELEMAC's ranks do
// (<path>NNNNN-IIIII, or part `rank` of <path>-CONCAT): the baseline that one shared file
// replaces. The part's IPOBO holds its KNOLG; a rank may ask for any of the part's nodes.
// The global sizes are the parts': NPOIN the largest KNOLG, NELEM the sum of the parts'.
#include <algorithm>
#include <unordered_map>

#include "core/error.hpp"
#include "formats/partel.hpp"
#include "parallel/mpi_util.hpp"
#include "layouts/reader.hpp"

namespace anabranch::pio {
namespace {

class FilePerProcessReader final : public ReadStrategy {
 public:
  const char* name() const override { return "file-per-process"; }

  FileFacts open(MPI_Comm comm, const std::string& path, const ReaderOptions&) override {
    comm_ = comm;
    int rank = 0, size = 1;
    MPI_Comm_rank(comm_, &rank);
    MPI_Comm_size(comm_, &size);
    FileFacts facts;
    std::int64_t sizes[2] = {0, 0};  // largest KNOLG, elements
    collective(comm_, [&] {
      part_ = partel::PartSet(path, size).open(rank);
      knolg_ = part_->read_ipobo();
      for (auto g : knolg_) sizes[0] = std::max<std::int64_t>(sizes[0], g);
      sizes[1] = part_->header().nelem;
      if (rank == 0) {
        facts.header = part_->header();
        facts.frames = part_->frame_count();
        facts.times = part_->read_times();
        facts.order = part_->header().byte_order;
      }
    });
    facts = broadcast_facts(comm_, 0, facts);
    MPI_Allreduce(MPI_IN_PLACE, &sizes[0], 1, MPI_INT64_T, MPI_MAX, comm_);
    MPI_Allreduce(MPI_IN_PLACE, &sizes[1], 1, MPI_INT64_T, MPI_SUM, comm_);
    facts.header.npoin = sizes[0];
    facts.header.nelem = sizes[1];
    rs_ = part_->layout().real_bytes;
    return facts;
  }

  void prepare(const std::vector<std::int64_t>& need) override {
    collective(comm_, [&] {
      std::unordered_map<std::int64_t, std::int64_t> at;
      for (std::size_t i = 0; i < knolg_.size(); ++i) at.emplace(static_cast<std::int64_t>(knolg_[i]) - 1, static_cast<std::int64_t>(i));
      pick_.clear();
      for (auto g : need) {
        const auto it = at.find(g);
        if (it == at.end())
          throw UsageError("global node " + std::to_string(g + 1) + " is not in " + part_->name() + " (its KNOLG does not list it)");
        pick_.push_back(it->second);
      }
    });
  }

  void read(std::int64_t frame, const std::vector<int>& vars, const ValueDecoder& out) override {
    const double t0 = MPI_Wtime();
    std::exception_ptr error;
    try {
      const auto n = static_cast<std::int64_t>(pick_.size());
      whole_.resize(static_cast<std::size_t>(part_->header().npoin * rs_));
      for (std::size_t k = 0; k < vars.size(); ++k) {
        part_->read_encoded(frame, vars[k], 0, part_->header().npoin, whole_.data());
        for (std::int64_t i = 0; i < n;) {  // runs of needed nodes that follow one another in the part
          std::int64_t j = i + 1;
          while (j < n && pick_[static_cast<std::size_t>(j)] == pick_[static_cast<std::size_t>(j) - 1] + 1) ++j;
          out.decode(static_cast<int>(k), i, j - i, whole_.data() + pick_[static_cast<std::size_t>(i)] * rs_);
          i = j;
        }
      }
    } catch (...) {
      error = std::current_exception();
    }
    const double t1 = MPI_Wtime();
    agree(comm_, error);
    times_.read += t1 - t0;
    times_.wait += MPI_Wtime() - t1;
  }

  void close() override { part_.reset(); }
  ReadTimes times() const override { return times_; }

 private:
  MPI_Comm comm_ = MPI_COMM_NULL;
  std::unique_ptr<serafin::Reader> part_;
  std::vector<std::int32_t> knolg_;
  std::vector<std::int64_t> pick_;
  std::vector<unsigned char> whole_;
  int rs_ = 4;
  ReadTimes times_;
};

}  // namespace

std::unique_ptr<ReadStrategy> make_file_per_process_reader() { return std::make_unique<FilePerProcessReader>(); }

}  // namespace anabranch::pio
