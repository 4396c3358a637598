#include "pio/strategy.hpp"

#include <cstring>
#include <limits>

#include "core/error.hpp"
#include "pio/mpi_util.hpp"

namespace anabranch::pio {

// Factories, one per strategy file.
std::unique_ptr<Strategy> make_null_strategy();
std::unique_ptr<Strategy> make_file_per_process_strategy();
std::unique_ptr<Strategy> make_independent_strategy();
std::unique_ptr<Strategy> make_collective_strategy();
std::unique_ptr<Strategy> make_aggregated_strategy(bool async);
#ifdef ANABRANCH_HAVE_HDF5
std::unique_ptr<Strategy> make_hdf5_strategy();
constexpr bool kHdf5 = true;
#else
constexpr bool kHdf5 = false;
#endif

const std::vector<StrategyInfo>& strategies() {
  static const std::vector<StrategyInfo> list = {
      {"file-per-process", "each rank writes its own SERAFIN file (TELEMAC naming): the baseline, input to merge", true, ""},
      {"independent", "each rank writes its runs of nodes with MPI_File_write_at", true, ""},
      {"collective", "indexed file view + MPI_File_write_all: MPI-IO merges the requests", true, ""},
      {"aggregated", "values sent to a few writers per node that write large contiguous pieces collectively", true, ""},
      {"aggregated-async", "aggregated, with nonblocking collective writes overlapped with the caller's next step", true, ""},
      {"hdf5", "one VTKHDF file (ParaView, XDMF sidecar): blocks of nodes, collective parallel-HDF5 hyperslab writes", kHdf5,
       "this anabranch was built without parallel HDF5 (install libhdf5-openmpi-dev and reconfigure)"},
      {"null", "encodes and exchanges nothing, writes nothing (tests, overhead measurements)", true, ""},
  };
  return list;
}

std::unique_ptr<Strategy> make_strategy(const std::string& name) {
  if (name == "file-per-process") return make_file_per_process_strategy();
  if (name == "independent") return make_independent_strategy();
  if (name == "collective") return make_collective_strategy();
  if (name == "aggregated") return make_aggregated_strategy(false);
  if (name == "aggregated-async") return make_aggregated_strategy(true);
  if (name == "null") return make_null_strategy();
#ifdef ANABRANCH_HAVE_HDF5
  if (name == "hdf5") return make_hdf5_strategy();
#endif
  for (const auto& s : strategies())
    if (s.name == name) throw UsageError("strategy '" + name + "' is not available: " + s.unavailable_reason);
  std::string known;
  for (const auto& s : strategies()) known += (known.empty() ? "" : ", ") + s.name;
  throw UsageError("unknown strategy '" + name + "' (known: " + known + ")");
}

bool writes_frame_layouts(const std::string& strategy) {
  return strategy == "independent" || strategy == "collective" || strategy == "aggregated" || strategy == "aggregated-async";
}

void encode_run(const Run& r, std::int64_t from, std::int64_t to, int rs, const ValueEncoder& values, const unsigned char* fixed,
                unsigned char* dst) {
  if (to <= from) return;
  if (r.array == Run::kFixed) {
    std::memcpy(dst, fixed + r.index + from, static_cast<std::size_t>(to - from));
    return;
  }
  unsigned char scratch[8];
  std::int64_t v = from / rs;  // the value holding byte `from`
  if (from % rs != 0) {        // a value cut at its start
    values.encode(r.array, r.index + v, 1, scratch);
    const std::int64_t n = std::min<std::int64_t>(rs - from % rs, to - from);
    std::memcpy(dst, scratch + from % rs, static_cast<std::size_t>(n));
    dst += n;
    from += n;
    ++v;
  }
  const std::int64_t whole = (to - from) / rs;
  if (whole > 0) values.encode(r.array, r.index + v, whole, dst);
  dst += whole * rs;
  from += whole * rs;
  if (from < to) {  // a value cut at its end
    values.encode(r.array, r.index + v + whole, 1, scratch);
    std::memcpy(dst, scratch, static_cast<std::size_t>(to - from));
  }
}

void write_at(MPI_File fh, std::int64_t offset, const void* data, std::int64_t n, const std::string& path) {
  const auto* p = static_cast<const char*>(data);
  constexpr std::int64_t kMax = std::numeric_limits<int>::max() / 2;
  while (n > 0) {
    const int chunk = static_cast<int>(std::min(n, kMax));
    MPI_Status st;
    check_written(MPI_File_write_at(fh, offset, p, chunk, MPI_BYTE, &st), st, chunk, path, offset, "MPI_File_write_at");
    p += chunk;
    offset += chunk;
    n -= chunk;
  }
}

MpiFileSink::MpiFileSink(MPI_File fh, std::string path, std::int64_t offset, std::size_t buffer_bytes)
    : fh_(fh), path_(std::move(path)), offset_(offset), buffer_(buffer_bytes) {}

MpiFileSink::~MpiFileSink() = default;

void MpiFileSink::write(const void* data, std::size_t n) {
  const auto* p = static_cast<const unsigned char*>(data);
  while (n > 0) {
    const std::size_t room = buffer_.size() - used_;
    const std::size_t k = std::min(room, n);
    std::memcpy(buffer_.data() + used_, p, k);
    used_ += k;
    p += k;
    n -= k;
    if (used_ == buffer_.size()) flush();
  }
}

void MpiFileSink::flush() {
  if (used_ == 0) return;
  write_at(fh_, offset_, buffer_.data(), static_cast<std::int64_t>(used_), path_);
  offset_ += static_cast<std::int64_t>(used_);
  used_ = 0;
}

}  // namespace anabranch::pio
