#include "pio/strategy.hpp"

#include <algorithm>
#include <climits>
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

namespace {

// Fails when a read got fewer bytes than asked.
void check_read(int rc, MPI_Status& st, std::int64_t asked, const std::string& path, std::int64_t frame, std::int64_t offset,
                const char* call) {
  check_mpi(rc, (std::string(call) + " " + path).c_str());
  int got = 0;
  MPI_Get_count(&st, MPI_BYTE, &got);
  if (got != MPI_UNDEFINED && got < asked)
    throw FormatError(path, "frame " + std::to_string(frame), offset + got,
                      "the file ends " + std::to_string(asked - got) + " bytes before this rank's values do");
}

}  // namespace

void read_runs(MPI_Comm comm, MPI_File fh, const std::string& path, const FrameLayout& layout, std::int64_t frame, bool collective_io,
               std::int64_t buffer_bytes, const ValueDecoder& values) {
  const int rs = layout.value_bytes();
  std::vector<std::pair<std::int64_t, Run>> runs;  // (file offset, run), value-aligned pieces of at most the buffer
  const std::int64_t most = collective_io ? INT_MAX / rs : std::max<std::int64_t>(buffer_bytes, 1 << 16) / rs;
  std::vector<unsigned char> buf;
  std::int64_t total = 0;
  collective(comm, [&] {
    layout.for_each_run([&](const Run& r) {
      if (r.array == Run::kFixed) return;
      for (std::int64_t c = 0; c < r.count; c += most) {
        const Run piece{r.at + c * rs, std::min(most, r.count - c), r.array, r.index + c};
        runs.emplace_back(layout.locate(frame, piece.at).first, piece);
        total += piece.count * rs;
      }
    });
    std::sort(runs.begin(), runs.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    if (collective_io && total > INT_MAX)
      throw UsageError("cannot read " + path + " collectively: more than 2 GiB on one rank in one frame (read it independent)");
    buf.resize(static_cast<std::size_t>(collective_io ? total : std::min(total, most * rs)));
  });
  if (!collective_io) {
    collective(comm, [&] {
      for (std::size_t i = 0; i < runs.size();) {  // runs i..j-1: one read
        std::int64_t bytes = runs[i].second.count * rs;
        std::size_t j = i + 1;
        for (; j < runs.size() && runs[j].first == runs[i].first + bytes && bytes + runs[j].second.count * rs <= most * rs; ++j)
          bytes += runs[j].second.count * rs;
        MPI_Status st;
        check_read(MPI_File_read_at(fh, runs[i].first, buf.data(), static_cast<int>(bytes), MPI_BYTE, &st), st, bytes, path, frame,
                   runs[i].first, "MPI_File_read_at");
        for (const unsigned char* src = buf.data(); i < j; ++i) {
          values.decode(runs[i].second.array, runs[i].second.index, runs[i].second.count, src);
          src += runs[i].second.count * rs;
        }
      }
    });
    return;
  }
  MPI_Datatype view = MPI_DATATYPE_NULL;
  collective(comm, [&] {
    std::vector<int> lens;
    std::vector<MPI_Aint> disps;
    for (const auto& [offset, r] : runs) {
      lens.push_back(static_cast<int>(r.count * rs));
      disps.push_back(static_cast<MPI_Aint>(offset));
    }
    if (lens.empty())
      check_mpi(MPI_Type_contiguous(1, MPI_BYTE, &view), "MPI_Type_contiguous");
    else
      check_mpi(MPI_Type_create_hindexed(static_cast<int>(lens.size()), lens.data(), disps.data(), MPI_BYTE, &view),
                "MPI_Type_create_hindexed");
    check_mpi(MPI_Type_commit(&view), "MPI_Type_commit");
  });
  int rc = MPI_File_set_view(fh, 0, MPI_BYTE, view, "native", MPI_INFO_NULL);
  MPI_Type_free(&view);
  collective(comm, [&] { check_mpi(rc, "MPI_File_set_view"); });
  MPI_Status st;
  rc = MPI_File_read_all(fh, buf.data(), static_cast<int>(total), MPI_BYTE, &st);
  const int reset = MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL);
  collective(comm, [&] {
    check_read(rc, st, total, path, frame, runs.empty() ? 0 : runs.front().first, "MPI_File_read_all");
    check_mpi(reset, "MPI_File_set_view");
    const unsigned char* src = buf.data();
    for (const auto& [offset, r] : runs) {
      values.decode(r.array, r.index, r.count, src);
      src += r.count * rs;
    }
  });
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
