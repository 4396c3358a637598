#include "layouts/reader.hpp"

#include <algorithm>
#include <climits>
#include <cstring>
#include <type_traits>

#include "core/byteorder.hpp"
#include "core/error.hpp"
#include "core/radix_sort.hpp"
#include "parallel/mpi_util.hpp"

namespace anabranch::pio {

ReaderOptions ReaderOptions::parse(const std::string& text) {
  ReaderOptions o;
  o.hints = parse_options(text, [&](const std::string& k, const std::string& v) {
    if (k == "strategy")
      o.strategy = v;
    else if (k == "readers_per_node")
      o.readers_per_node = static_cast<int>(std::min<std::int64_t>(option_number(k, v, 1, true), INT_MAX));
    else if (k == "buffer_bytes")
      o.buffer_bytes = option_number(k, v, 1024, true);
    else if (k == "shared_memory")
      o.shared_memory = option_flag(k, v);
    else
      return false;
    return true;
  });
  return o;
}

// ---------------------------------------------------------------------------------------

namespace {

// The header as bytes (every field; names and units blank-padded to 16).
std::string pack(const FileFacts& f) {
  std::string out;
  auto put = [&](const void* p, std::size_t n) { out.append(static_cast<const char*>(p), n); };
  const serafin::Header& h = f.header;
  const std::int64_t nums[12] = {static_cast<std::int64_t>(h.title.size()), h.nvar(), h.nbv2, h.nelem, h.npoin, h.ndp, h.sizes4,
                                 h.precision == Precision::Double ? 8 : 4, h.byte_order == ByteOrder::Big,
                                 h.date.has_value(), f.frames, f.order == ByteOrder::Big};
  put(nums, sizeof nums);
  put(h.title.data(), h.title.size());
  for (const auto& v : h.variables) {
    std::string n = v.name, u = v.unit;
    n.resize(16, ' ');
    u.resize(16, ' ');
    put(n.data(), 16);
    put(u.data(), 16);
  }
  put(h.iparam.data(), sizeof h.iparam);
  if (h.date) put(h.date->data(), sizeof *h.date);
  put(f.times.data(), f.times.size() * sizeof(double));
  return out;
}

FileFacts unpack(const std::string& in) {
  const char* p = in.data();
  auto get = [&](void* dst, std::size_t n) {
    std::memcpy(dst, p, n);
    p += n;
  };
  std::int64_t nums[12];
  get(nums, sizeof nums);
  FileFacts f;
  serafin::Header& h = f.header;
  h.title.assign(p, static_cast<std::size_t>(nums[0]));
  p += nums[0];
  for (std::int64_t v = 0; v < nums[1]; ++v) {
    Variable var;
    var.name.assign(p, 16);
    var.unit.assign(p + 16, 16);
    p += 32;
    h.variables.push_back(var);
  }
  h.nbv2 = static_cast<std::int32_t>(nums[2]);
  h.nelem = nums[3];
  h.npoin = nums[4];
  h.ndp = static_cast<int>(nums[5]);
  h.sizes4 = static_cast<std::int32_t>(nums[6]);
  h.precision = nums[7] == 8 ? Precision::Double : Precision::Single;
  h.byte_order = nums[8] ? ByteOrder::Big : ByteOrder::Little;
  get(h.iparam.data(), sizeof h.iparam);
  if (nums[9]) {
    h.date.emplace();
    get(h.date->data(), sizeof *h.date);
  }
  f.frames = nums[10];
  f.order = nums[11] ? ByteOrder::Big : ByteOrder::Little;
  f.times.resize(static_cast<std::size_t>(f.frames));
  get(f.times.data(), f.times.size() * sizeof(double));
  return f;
}

}  // namespace

FileFacts broadcast_facts(MPI_Comm comm, int root, const FileFacts& facts) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  const std::string bytes = broadcast(comm, rank == root ? pack(facts) : std::string(), root);
  return rank == root ? facts : unpack(bytes);
}

// ---------------------------------------------------------------------------------------
// The registry.

std::unique_ptr<ReadStrategy> make_aggregated_reader();
std::unique_ptr<ReadStrategy> make_independent_reader();
std::unique_ptr<ReadStrategy> make_collective_reader();
std::unique_ptr<ReadStrategy> make_file_per_process_reader();
#ifdef ANABRANCH_HAVE_HDF5
std::unique_ptr<ReadStrategy> make_hdf5_reader();
constexpr bool kHdf5Reader = true;
#else
constexpr bool kHdf5Reader = false;
#endif

const std::vector<ReadStrategyInfo>& read_strategies() {
  static const std::vector<ReadStrategyInfo> list = {
      {"aggregated", "a few readers per node read contiguous stretches once into node memory, each rank takes its values (HDF5: as independent)", true, ""},
      {"independent", "each rank reads its own runs of nodes (SERAFIN) or its own nodes (HDF5)", true, ""},
      {"collective", "each rank's runs of nodes through one indexed file view and MPI_File_read_all a round (SERAFIN)", true, ""},
      {"hdf5", "parallel HDF5, the file opened by all ranks, each reading its own nodes by point selection", kHdf5Reader,
       "this anabranch was built without parallel HDF5 (install libhdf5-openmpi-dev and reconfigure)"},
      {"file-per-process", "each rank reads its own per-rank file (TELEMAC naming: <path>NNNNN-IIIII)", true, ""},
  };
  return list;
}

std::unique_ptr<ReadStrategy> make_read_strategy(const std::string& name) {
  if (name == "aggregated") return make_aggregated_reader();
  if (name == "independent") return make_independent_reader();
  if (name == "collective") return make_collective_reader();
  if (name == "file-per-process") return make_file_per_process_reader();
#ifdef ANABRANCH_HAVE_HDF5
  if (name == "hdf5") return make_hdf5_reader();
#endif
  for (const auto& s : read_strategies())
    if (s.name == name) throw UsageError("read strategy '" + name + "' is not available: " + s.unavailable_reason);
  std::string known;
  for (const auto& s : read_strategies()) known += (known.empty() ? "" : ", ") + s.name;
  throw UsageError("unknown read strategy '" + name + "' (known: " + known + ")");
}

// ---------------------------------------------------------------------------------------

Reader::Reader(MPI_Comm comm, const std::string& path, const std::int32_t* global_ids, std::int64_t nlocal,
               const ReaderOptions& options)
    : comm_(comm), path_(path), nlocal_(nlocal) {
  collective(comm_, [&] {
    if (nlocal_ < 0) throw UsageError("negative number of local nodes");
    if (nlocal_ >= (std::int64_t{1} << 32)) throw UsageError("more than 2^32 local nodes on one rank");
    if (nlocal_ > 0 && !global_ids) throw UsageError("no global node numbers given for " + std::to_string(nlocal_) + " local nodes");
    strategy_ = make_read_strategy(options.strategy);
  });
  facts_ = strategy_->open(comm_, path_, options);
  std::int64_t bad = -1;
  collective(comm_, [&] {
    // One pass checks the numbers and whether they come increasing (KNOLG as partitioners
    // write it); then the distinct nodes, increasing, and each local node's place among
    // them: one more pass when increasing, a sort otherwise.
    const auto n = static_cast<std::size_t>(nlocal_);
    // Branch-free (one vectorised pass): the smallest and largest number, and how many
    // times the numbers go down; a number out of range is looked for only when lo or hi is.
    std::int32_t lo32 = INT32_MAX, hi32 = INT32_MIN;
    std::size_t descents = 0;
    for (std::size_t i = 0; i < n; ++i) {
      lo32 = std::min(lo32, global_ids[i]);
      hi32 = std::max(hi32, global_ids[i]);
    }
    for (std::size_t i = 1; i < n; ++i) descents += global_ids[i] < global_ids[i - 1];
    const bool sorted = descents == 0;
    const std::int64_t lo = static_cast<std::int64_t>(lo32) - 1, hi = static_cast<std::int64_t>(hi32) - 1;
    if (n > 0 && (lo < 0 || hi >= facts_.header.npoin))
      for (std::size_t i = 0; i < n && bad < 0; ++i)
        if (global_ids[i] < 1 || global_ids[i] > facts_.header.npoin) bad = static_cast<std::int64_t>(i);
    if (bad >= 0)
      throw UsageError("local node " + std::to_string(bad + 1) + " has global number " + std::to_string(global_ids[bad]) +
                       ", outside " + path_ + "'s 1.." + std::to_string(facts_.header.npoin));
    where_.resize(n);
    need_.clear();
    need_.reserve(n);
    if (sorted) {
      for (std::size_t i = 0; i < n; ++i) {
        const std::int64_t g = static_cast<std::int64_t>(global_ids[i]) - 1;
        if (need_.empty() || need_.back() != g) need_.push_back(g);
        where_[i] = static_cast<std::uint32_t>(need_.size() - 1);
      }
    } else if (hi - lo < 64 * static_cast<std::int64_t>(n)) {
      // The numbers span at most 64 per node (a rank's part of a decomposition, however
      // its nodes are ordered): a bitmap of that span, no larger than the node lists. The
      // set bits in order are the distinct nodes; a node's place among them is the count
      // of set bits before its own (per-word counts, then one popcount), or, inside a run
      // of consecutive numbers (most of a part's nodes), its predecessor's place plus one.
      const auto words = static_cast<std::size_t>((hi - lo) / 64 + 1);
      std::unique_ptr<std::uint64_t[]> bits(new std::uint64_t[words]());
      std::unique_ptr<std::uint32_t[]> before(new std::uint32_t[words]);
      for (std::size_t i = 0; i < n; ++i) {
        const auto b = static_cast<std::uint64_t>(global_ids[i] - 1 - lo);
        bits[b >> 6] |= std::uint64_t{1} << (b & 63);
      }
      for (std::size_t w = 0; w < words; ++w) {
        before[w] = static_cast<std::uint32_t>(need_.size());
        for (std::uint64_t m = bits[w]; m; m &= m - 1)
          need_.push_back(lo + static_cast<std::int64_t>(w * 64) + __builtin_ctzll(m));
      }
      for (std::size_t i = 0; i < n; ++i) {
        if (i > 0 && global_ids[i] == global_ids[i - 1] + 1) {  // in a run: the next distinct node
          where_[i] = where_[i - 1] + 1;
          continue;
        }
        const auto b = static_cast<std::uint64_t>(global_ids[i] - 1 - lo);
        where_[i] = before[b >> 6] + static_cast<std::uint32_t>(__builtin_popcountll(bits[b >> 6] & ((std::uint64_t{1} << (b & 63)) - 1)));
      }
    } else {
      // Numbers spread wider: (id, place) packed in one word, id above, sorted by id in
      // linear time (the radix passes over the id's bits only), places in order among equal ids.
      std::vector<std::uint64_t> a(n);
      for (std::size_t i = 0; i < n; ++i) a[i] = static_cast<std::uint64_t>(global_ids[i] - 1) << 32 | i;
      radix_sort(a, [](std::uint64_t w) { return w >> 32; });
      for (std::size_t i = 0; i < n; ++i) {
        const auto g = static_cast<std::int64_t>(a[i] >> 32);
        if (need_.empty() || need_.back() != g) need_.push_back(g);
        where_[a[i] & 0xFFFFFFFFu] = static_cast<std::uint32_t>(need_.size() - 1);
      }
    }
  });
  in_place_ = need_.size() == static_cast<std::size_t>(nlocal_);  // distinct and, as need_, increasing
  if (in_place_)
    for (std::size_t i = 0; i < need_.size() && in_place_; ++i) in_place_ = where_[i] == i;
  if (in_place_) where_ = {};
  try {
    strategy_->prepare(need_);
  } catch (...) {
    strategy_->close();
    throw;
  }
}

// Destroyed unclosed: the strategy goes without its collective close (its files close, and
// this rank's view of aggregated's node memory).
Reader::~Reader() = default;


template <class T>
void Reader::read_vars(std::int64_t frame, const std::vector<int>& vars, T* const* values) {
  if (closed_) throw UsageError("read on a closed reader of " + path_);
  collective(comm_, [&] {
    if (frame < 0 || frame >= facts_.frames)
      throw UsageError("frame " + std::to_string(frame + 1) + " of " + path_ + ", which has " + std::to_string(facts_.frames));
    for (int v : vars)
      if (v < 0 || v >= facts_.header.nvar())
        throw UsageError("variable " + std::to_string(v + 1) + " of " + path_ + ", which has " + std::to_string(facts_.header.nvar()));
  });
  const int rs = facts_.header.precision == Precision::Double ? 8 : 4;
  const auto n = static_cast<std::int64_t>(need_.size());
  std::vector<T*> dst(values, values + vars.size());
  if (!in_place_) {
    buffer_.resize(static_cast<std::size_t>(n) * sizeof(T) * vars.size());
    for (std::size_t k = 0; k < vars.size(); ++k) dst[k] = reinterpret_cast<T*>(buffer_.data()) + static_cast<std::int64_t>(k) * n;
  }
  // The values decoded where they go: straight into the caller's arrays when the local
  // nodes are the needed ones, else into the needed nodes' places in a scratch array.
  strategy_->read(frame, vars, ArrayDecoder<T>(dst.data(), rs, facts_.order != native_byte_order()));
  if (!in_place_)  // each local node's value from its place among the needed nodes
    for (std::size_t k = 0; k < vars.size(); ++k)
      for (std::int64_t i = 0; i < nlocal_; ++i) values[k][i] = dst[k][where_[static_cast<std::size_t>(i)]];
}

template <class T>
void Reader::read_frame(std::int64_t frame, T* const* values) {
  std::vector<int> vars(static_cast<std::size_t>(facts_.header.nvar()));
  for (int v = 0; v < facts_.header.nvar(); ++v) vars[static_cast<std::size_t>(v)] = v;
  read_vars(frame, vars, values);
}

template <class T>
void Reader::read_variable(std::int64_t frame, int var, T* values) {
  read_vars(frame, {var}, &values);
}

void Reader::close() {
  if (closed_) return;
  closed_ = true;
  collective(comm_, [&] { strategy_->close(); });
}

template void Reader::read_frame<float>(std::int64_t, float* const*);
template void Reader::read_frame<double>(std::int64_t, double* const*);
template void Reader::read_variable<float>(std::int64_t, int, float*);
template void Reader::read_variable<double>(std::int64_t, int, double*);

}  // namespace anabranch::pio
