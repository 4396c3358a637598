#include "io/strategy.hpp"

#include <algorithm>
#include <climits>
#include <cstring>
#include <stdexcept>

#include "core/error.hpp"
#include "parallel/mpi_util.hpp"

namespace anabranch::pio {

// Factories, one per strategy file.
std::unique_ptr<Strategy> make_null_strategy();
std::unique_ptr<Strategy> make_file_per_process_strategy();
std::unique_ptr<Strategy> make_independent_strategy();
std::unique_ptr<Strategy> make_collective_strategy();
std::unique_ptr<Strategy> make_aggregated_strategy(bool async);
std::unique_ptr<Strategy> make_cgns_strategy();
std::unique_ptr<Strategy> make_tecplot_strategy();
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
      {"hdf5", "one VTKHDF file (ParaView, XDMF sidecar): HDF5 makes it, aggregated writes put the values in its chunks", kHdf5,
       "this anabranch was built without parallel HDF5 (install libhdf5-openmpi-dev and reconfigure)"},
      {"cgns", "one CGNS file (ParaView, CGNS tools): an unstructured zone, the values at their places by aggregated writes, the tree at close",
       true, ""},
      {"tecplot", "one Tecplot binary file (.plt): a finite-element zone a frame sharing the mesh, the values at their places by aggregated writes, the header at close",
       true, ""},
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
  if (name == "cgns") return make_cgns_strategy();
  if (name == "tecplot") return make_tecplot_strategy();
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

void StretchedFrame::for_each_run(const std::function<void(const Run&)>& f) const {
  const int rs = f_.value_bytes();
  f_.for_each_run([&](const Run& r) {
    for (Run p = r; p.count > 0;) {
      const std::int64_t n = std::min(p.count, (stretch_ - p.at % stretch_) / rs);
      f({p.at, n, p.array, p.index});
      p.at += n * rs;
      p.count -= n;
      p.index += n;
    }
  });
}

std::pair<std::int64_t, std::int64_t> StretchedFrame::locate(std::int64_t frame, std::int64_t at) const {
  if (frame != frame_) throw std::logic_error("frame " + std::to_string(frame) + " located while frame " + std::to_string(frame_) + " is set");
  return {at_.at(static_cast<std::size_t>(at / stretch_)) + at % stretch_, stretch_ - at % stretch_};
}

void check_read(int rc, MPI_Status& st, std::int64_t asked, const std::string& path, std::int64_t frame, std::int64_t offset,
                const char* call) {
  check_mpi(rc, (std::string(call) + " " + path).c_str());
  int got = 0;
  MPI_Get_count(&st, MPI_BYTE, &got);
  if (got != MPI_UNDEFINED && got < asked)
    throw FormatError(path, "frame " + std::to_string(frame), offset + got,
                      "the file ends " + std::to_string(asked - got) + " bytes before this rank's values do");
}

RunReading RunReading::of(const std::string& strategy, std::int64_t buffer_bytes, int readers_per_node, bool shared_memory) {
  const bool aggregated = strategy == "aggregated" || strategy == "aggregated-async";
  return {strategy == "collective" ? Mode::Collective : aggregated ? Mode::Aggregated : Mode::Independent, buffer_bytes,
          readers_per_node, shared_memory};
}

void RunReader::read(std::int64_t frame, const ValueDecoder& values) {
  const double t0 = MPI_Wtime();
  if (how_.mode == RunReading::Mode::Aggregated) return read_aggregated(frame, values);
  const int rs = layout_.value_bytes();
  const std::int64_t asked = how_.buffer_bytes > 0 ? how_.buffer_bytes : std::int64_t{how_.mode == RunReading::Mode::Collective ? 16 : 4} << 20;
  most_ = std::max<std::int64_t>(rs, std::max<std::int64_t>(asked, 1 << 16) / rs * rs);
  buf_.resize(static_cast<std::size_t>(most_));
  if (how_.mode == RunReading::Mode::Collective)
    read_collective(frame, values);
  else
    read_independent(frame, values);
  times_.read += MPI_Wtime() - t0;
}

void RunReader::read_independent(std::int64_t frame, const ValueDecoder& values) {
  const int rs = layout_.value_bytes();
  const std::int64_t most = most_;
  // Runs as they come, gathered while each follows the last in the file (or a little after:
  // gaps are read too while they add up to at most twice the request's own bytes, so that
  // the arrays a layout keeps apart, a Tecplot zone's variables between its coordinates and
  // the next zone's, come in one request instead of a request an array; a rank reads at
  // most three times its bytes) and the buffer holds them; then one read, and each decoded
  // into its array.
  collective(comm_, [&] {
    std::int64_t start = 0, used = 0, own = 0;
    pending_.clear();
    auto flush = [&] {
      if (used == 0) return;
      MPI_Status st;
      check_read(MPI_File_read_at(fh_, start, buf_.data(), static_cast<int>(used), MPI_BYTE, &st), st, used, path_, frame, start,
                 "MPI_File_read_at");
      for (const auto& [offset, r] : pending_) values.decode(r.array, r.index, r.count, buf_.data() + (offset - start));
      pending_.clear();
      used = 0;
    };
    layout_.for_each_run([&](const Run& run) {
      if (run.array == Run::kFixed) return;
      for (std::int64_t c = 0; c < run.count; c += most / rs) {
        const Run r{run.at + c * rs, std::min(most / rs, run.count - c), run.array, run.index + c};
        const std::int64_t offset = layout_.locate(frame, r.at).first, n = r.count * rs, gap = offset - (start + used);
        if (used > 0 && (gap < 0 || used + gap - own > 2 * (own + n) || used + gap + n > most)) flush();
        if (used == 0) start = offset, own = 0;
        pending_.emplace_back(offset, r);
        used = offset - start + n;
        own += n;
      }
    });
    flush();
  });
}

void ViewRounds::plan(const FrameLayout& L, std::int64_t frame, std::int64_t most, bool values_only) {
  const int rs = L.value_bytes();
  pieces.clear();
  L.for_each_run([&](const Run& r) {
    if (values_only && r.array == Run::kFixed) return;
    const std::int64_t n = run_bytes(r, rs);
    for (std::int64_t b = 0; b < n; b += most) pieces.push_back({L.locate(frame, r.at + b).first, r, b, std::min(n, b + most)});
  });
  const auto by_offset = [](const Piece& a, const Piece& b) { return a.offset < b.offset; };
  if (!std::is_sorted(pieces.begin(), pieces.end(), by_offset)) std::sort(pieces.begin(), pieces.end(), by_offset);
  starts.assign(1, 0);
  std::int64_t used = 0;
  for (std::size_t i = 0; i < pieces.size(); ++i) {
    const std::int64_t n = pieces[i].to - pieces[i].from;
    if (used + n > most) {
      starts.push_back(i);
      used = 0;
    }
    used += n;
  }
  if (!pieces.empty()) starts.push_back(pieces.size());
}

std::pair<std::size_t, std::size_t> ViewRounds::round(long long k) const {
  if (k >= rounds()) return {pieces.size(), pieces.size()};
  return {starts[static_cast<std::size_t>(k)], starts[static_cast<std::size_t>(k) + 1]};
}

int ViewRounds::transfer(MPI_File fh, long long k, bool write, unsigned char* buf, MPI_Info info, const std::string& path,
                         std::int64_t& bytes, MPI_Status& st, std::exception_ptr& error) const {
  std::vector<int> lens;
  std::vector<MPI_Aint> disps;
  bytes = 0;
  const auto [first, end] = round(k);
  for (std::size_t i = first; i < end && !error; ++i) {
    const Piece& p = pieces[i];
    const auto n = static_cast<int>(p.to - p.from);
    if (p.offset < 0 || (!disps.empty() && p.offset < disps.back() + lens.back()))
      error = std::make_exception_ptr(MpiError("cannot write or read " + path + ": this rank's runs overlap or fall before the file at byte " +
                                               std::to_string(p.offset) + " (an internal error)"));
    bytes += n;
    if (!lens.empty() && disps.back() + lens.back() == p.offset)  // runs that follow one another: one block
      lens.back() += n;
    else {
      lens.push_back(n);
      disps.push_back(static_cast<MPI_Aint>(p.offset));
    }
  }
  if (error) {  // nothing to move: a plain byte view, zero bytes
    lens.clear();
    bytes = 0;
  }
  MPI_Datatype view;
  if (lens.empty())
    MPI_Type_contiguous(1, MPI_BYTE, &view);
  else
    MPI_Type_create_hindexed(static_cast<int>(lens.size()), lens.data(), disps.data(), MPI_BYTE, &view);
  MPI_Type_commit(&view);
  const int vrc = MPI_File_set_view(fh, 0, MPI_BYTE, view, "native", info);
  MPI_Type_free(&view);
  const int n = static_cast<int>(bytes);
  const int rc = write ? MPI_File_write_all(fh, buf, n, MPI_BYTE, &st) : MPI_File_read_all(fh, buf, n, MPI_BYTE, &st);
  if (!error && vrc != MPI_SUCCESS) error = std::make_exception_ptr(MpiError("MPI_File_set_view: " + mpi_error_text(vrc)));
  return rc;
}

void RunReader::read_collective(std::int64_t frame, const ValueDecoder& values) {
  const int rs = layout_.value_bytes();
  // The runs in file order, in rounds of at most the buffer (as many on every rank), each
  // one indexed view and one MPI_File_read_all.
  long long rounds = 0;
  collective(comm_, [&] {
    rounds_.plan(layout_, frame, most_, true);
    rounds = rounds_.rounds();
  });
  MPI_Allreduce(MPI_IN_PLACE, &rounds, 1, MPI_LONG_LONG, MPI_MAX, comm_);
  std::exception_ptr error;  // kept and agreed after the last round: every rank takes part in every one
  for (long long k = 0; k < rounds; ++k) {
    std::int64_t bytes = 0;
    MPI_Status st;
    const int rc = rounds_.transfer(fh_, k, false, buf_.data(), MPI_INFO_NULL, path_, bytes, st, error);
    if (error) continue;
    try {
      const auto [first, end] = rounds_.round(k);
      check_read(rc, st, bytes, path_, frame, first < end ? rounds_.pieces[first].offset : 0, "MPI_File_read_all");
      const unsigned char* src = buf_.data();
      for (std::size_t i = first; i < end; ++i) {
        const auto& p = rounds_.pieces[i];
        values.decode(p.run.array, p.run.index + p.from / rs, (p.to - p.from) / rs, src);
        src += p.to - p.from;
      }
    } catch (...) {
      error = std::current_exception();
    }
  }
  const int reset = MPI_File_set_view(fh_, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL);
  if (!error && reset != MPI_SUCCESS) error = std::make_exception_ptr(MpiError("MPI_File_set_view: " + mpi_error_text(reset)));
  agree(comm_, error);
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
