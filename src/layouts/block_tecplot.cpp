// Multi-block grids as Tecplot binary files. See block_tecplot.hpp.
#include "layouts/block_tecplot.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <limits>

#include "core/error.hpp"
#include "formats/tecplot.hpp"
#include "io/tecplot_header.hpp"
#include "parallel/mpi_util.hpp"

namespace anabranch::pio {
namespace {

constexpr std::int32_t kMaxStrands = 32700;  // Tecplot's strands: 0 to 32699 (more blocks: static zones)

std::string zone_name(const BlockShape& b) { return "block " + std::to_string(b.id); }

// A zone of block b in the first frame (first) or a later one, as its entry's head and size
// need it: X, Y, Z then the variables, the later frames sharing X, Y, Z with zone b.
tecplot::Zone zone_of(const BlockShape& b, std::size_t index, int nvar, int real_bytes, bool first) {
  tecplot::Zone z;
  z.name = zone_name(b);
  z.imax = b.dims[0];
  z.jmax = b.dims[1];
  z.kmax = b.dims[2];
  z.formats.assign(static_cast<std::size_t>(3 + nvar), real_bytes == 8 ? tecplot::Format::Double : tecplot::Format::Float);
  z.share.assign(z.formats.size(), -1);
  if (!first)
    for (std::size_t c = 0; c < 3; ++c) z.share[c] = static_cast<std::int32_t>(index);
  return z;
}

}  // namespace

namespace {

// A frame's entries whole, for the engine: one stretch of the file from the frame's first
// entry to its last's end; this rank's runs, in file order: the heads of the zones it leads
// (fixed bytes: TecplotBlocks::heads) and its pieces' lines of every array.
class TecplotEntries final : public FrameLayout {
 public:
  TecplotEntries(const TecplotBlocks& t, bool first) : t_(t), first_(first) {
    const BlockLayout& l = t.layout();
    const BlockFileInfo& info = t.info();
    rb_ = info.real_bytes;
    grid_ = first ? 3 : 0;
    narrays_ = grid_ + info.nvar();
    const std::int64_t f = first ? 0 : 1, base = t.entry_at(f, 0);
    std::int64_t fixed = 0;
    for (std::size_t b = 0; b < info.blocks.size(); ++b)
      if (t.leads(b)) {
        order_.push_back({t.entry_at(f, b) - base, -1, fixed, static_cast<std::int64_t>(b)});
        fixed += t.head_bytes(first, b);
      }
    for (std::size_t p = 0; p < l.pieces.size(); ++p) {
      const auto& piece = l.pieces[p];
      const auto b = static_cast<std::size_t>(piece.block);
      const auto& d = l.blocks[b].dims;
      const std::int64_t values = t.entry_at(f, b) - base + t.head_bytes(first, b);
      const std::int64_t point = (piece.range[2][0] * d[1] + piece.range[1][0]) * d[0] + piece.range[0][0];
      for (int a = 0; a < narrays_; ++a)
        order_.push_back({values + (a * l.blocks[b].points() + point) * rb_, static_cast<int>(p), a, values + a * l.blocks[b].points() * rb_});
    }
    std::sort(order_.begin(), order_.end(), [](const Item& x, const Item& y) { return x.at < y.at; });
  }
  int value_bytes() const override { return rb_; }
  std::int64_t frame_bytes() const override { return t_.frame_bytes(first_); }
  std::pair<std::int64_t, std::int64_t> locate(std::int64_t frame, std::int64_t at) const override {
    return {t_.entry_at(first_ ? 0 : frame, 0) + at, frame_bytes() - at};
  }
  void for_each_run(const std::function<void(const Run&)>& f) const override {
    for (const Item& it : order_) {
      if (it.piece < 0) {  // a head: `a` is its place in the fixed bytes, `array_at` the block
        f({it.at, t_.head_bytes(first_, static_cast<std::size_t>(it.array_at)), Run::kFixed, it.a});
        continue;
      }
      const int array = it.piece * narrays_ + static_cast<int>(it.a);
      t_.layout().for_each_run(static_cast<std::size_t>(it.piece), [&](const BlockRun& run) {
        f({it.array_at + run.block_index * rb_, run.count, array, run.memory_index});
      });
    }
  }
  void fixed_bytes(std::int64_t frame, double, std::vector<unsigned char>& out) const override { t_.heads(first_ ? 0 : frame, out); }

 private:
  struct Item {
    std::int64_t at;        // the first byte (from the frame's first entry)
    int piece;              // -1: a head
    std::int64_t a;         // the array (a head: its first byte in the fixed bytes)
    std::int64_t array_at;  // where the array starts (a head: its block)
  };
  const TecplotBlocks& t_;
  bool first_;
  int rb_ = 8, grid_ = 0, narrays_ = 0;
  std::vector<Item> order_;
};

}  // namespace

TecplotBlocks::TecplotBlocks(MPI_Comm comm, const BlockLayout& layout, BlockFileInfo& info, std::int64_t frames, std::string title)
    : comm_(comm), layout_(layout), info_(info), title_(std::move(title)), reserved_(std::max<std::int64_t>(frames, 1)) {
  MPI_Comm_rank(comm, &rank_);
  MPI_Comm_size(comm, &size_);
  const std::size_t nb = info.blocks.size();
  const int nvar = info.nvar(), rb = info.real_bytes;
  collective(comm, [&] {  // Tecplot's counts are 32-bit: refused before anything is written
    tecplot::File one;
    for (std::size_t b = 0; b < nb; ++b) {
      one.zones = {zone_of(info.blocks[b], b, 0, rb, true)};
      tecplot::header(one);
    }
  });
  room_ = header_room(reserved_);
  for (auto* v : {&first_size_, &later_size_, &first_head_, &later_head_, &first_at_, &later_at_}) v->resize(nb);
  for (std::size_t b = 0; b < nb; ++b) {
    const tecplot::Zone first = zone_of(info.blocks[b], b, nvar, rb, true), later = zone_of(info.blocks[b], b, nvar, rb, false);
    first_at_[b] = room_ + first_bytes_;
    later_at_[b] = later_bytes_;
    first_size_[b] = tecplot::entry_bytes(first);
    later_size_[b] = tecplot::entry_bytes(later);
    first_head_[b] = tecplot::entry_head_bytes(first);
    later_head_[b] = tecplot::entry_head_bytes(later);
    first_bytes_ += first_size_[b];
    later_bytes_ += later_size_[b];
  }
  info.block_offsets.assign(3 * nb, 0);
  for (std::size_t b = 0; b < nb; ++b)
    for (int c = 0; c < 3; ++c) info.block_offsets[static_cast<std::size_t>(c) * nb + b] = first_at_[b] + first_head_[b] + c * info.blocks[b].points() * rb;
  // each block's first holder makes its entries' heads
  std::vector<int> mine(nb, INT_MAX);
  for (const auto& p : layout.pieces) mine[static_cast<std::size_t>(p.block)] = std::min(mine[static_cast<std::size_t>(p.block)], rank_);
  lead_.resize(nb);
  MPI_Allreduce(mine.data(), lead_.data(), static_cast<int>(nb), MPI_INT, MPI_MIN, comm);
}

TecplotBlocks::~TecplotBlocks() = default;

std::int64_t TecplotBlocks::header_room(std::int64_t frames) const {
  tecplot::File f;
  f.title = title_;
  f.variables = {"X", "Y", "Z"};
  f.variables.insert(f.variables.end(), info_.variables.begin(), info_.variables.end());
  f.aux = {{tecplot::kFramesAux, tecplot::frames_text(0)}};
  std::int64_t zones = 0;
  for (std::size_t b = 0; b < info_.blocks.size(); ++b) zones += tecplot::zone_header_bytes(zone_of(info_.blocks[b], b, 0, 8, true));
  return tecplot::header_bytes(f) + frames * zones;  // fewer frames: a padding record fills the rest
}

std::int64_t TecplotBlocks::entry_at(std::int64_t f, std::size_t b) const {
  return f == 0 ? first_at_[b] : room_ + first_bytes_ + (f - 1) * later_bytes_ + later_at_[b];
}

void TecplotBlocks::place_frame(std::int64_t f) {
  const std::size_t nb = info_.blocks.size();
  const int nvar = info_.nvar(), rb = info_.real_bytes;
  info_.block_offsets.resize(static_cast<std::size_t>(3 + (f + 1) * nvar) * nb);
  for (std::size_t b = 0; b < nb; ++b)
    for (int v = 0; v < nvar; ++v)
      info_.block_offsets[static_cast<std::size_t>(3 + f * nvar + v) * nb + b] =
          entry_at(f, b) + head_bytes(f == 0, b) + (f == 0 ? 3 + v : v) * info_.blocks[b].points() * rb;
}

template <class T>
void TecplotBlocks::measure(std::int64_t f, bool grid, const T* const* arrays) {
  const std::size_t nb = info_.blocks.size();
  const int n = grid ? 3 : info_.nvar();
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<double> lo(nb * static_cast<std::size_t>(n), inf), hi(nb * static_cast<std::size_t>(n), -inf);
  for (std::size_t p = 0; p < layout_.pieces.size(); ++p) {
    const auto b = static_cast<std::size_t>(layout_.pieces[p].block);
    for (int a = 0; a < n; ++a) {
      const T* values = arrays[p * static_cast<std::size_t>(n) + static_cast<std::size_t>(a)];
      double& l = lo[b * static_cast<std::size_t>(n) + static_cast<std::size_t>(a)];
      double& h = hi[b * static_cast<std::size_t>(n) + static_cast<std::size_t>(a)];
      layout_.for_each_run(p, [&](const BlockRun& run) {
        // As stored (in the file's precision). Tecplot's ranges: the finite values. Branch-free
        // (the compiler's vector compares and blends).
        const T* x = values + run.memory_index;
        constexpr double big = std::numeric_limits<double>::max();
        double mn = l, mx = h;
        for (std::int64_t k = 0; k < run.count; ++k) {
          const double v = info_.real_bytes == 4 ? static_cast<double>(static_cast<float>(x[k])) : static_cast<double>(x[k]);
          const bool finite = std::fabs(v) <= big;
          mn = finite && v < mn ? v : mn;
          mx = finite && v > mx ? v : mx;
        }
        l = mn;
        h = mx;
      });
    }
  }
  MPI_Allreduce(MPI_IN_PLACE, lo.data(), static_cast<int>(lo.size()), MPI_DOUBLE, MPI_MIN, comm_);
  MPI_Allreduce(MPI_IN_PLACE, hi.data(), static_cast<int>(hi.size()), MPI_DOUBLE, MPI_MAX, comm_);
  std::vector<std::pair<double, double>> mm(lo.size());
  for (std::size_t i = 0; i < lo.size(); ++i) mm[i] = lo[i] <= hi[i] ? std::make_pair(lo[i], hi[i]) : std::make_pair(0.0, 0.0);
  if (grid) {
    grid_minmax_ = std::move(mm);
    grid_measured_ = true;
  } else {
    measured_[f] = std::move(mm);
  }
}

template <class T>
void TecplotBlocks::keep_grid(const T* const* xyz) {
  measure(0, true, xyz);
  kept_.clear();
  for (std::size_t p = 0; p < layout_.pieces.size(); ++p)
    for (std::size_t c = 0; c < 3; ++c) {
      const T* from = xyz[3 * p + c];
      kept_.emplace_back(from, from + layout_.memory_points(p));
    }
  kept_pointers_.clear();
  for (const auto& k : kept_) kept_pointers_.push_back(k.data());
  kept_grid_ = true;
}

void TecplotBlocks::drop_grid() {
  kept_grid_ = false;
  kept_.clear();
  kept_.shrink_to_fit();
  kept_pointers_.clear();
}

const FrameLayout& TecplotBlocks::entries(bool first) {
  auto& e = first ? first_entries_ : later_entries_;
  if (!e) e = std::make_unique<TecplotEntries>(*this, first);
  return *e;
}

void TecplotBlocks::heads(std::int64_t f, std::vector<unsigned char>& out) const {
  out.clear();
  const auto it = measured_.find(f);
  if (it == measured_.end() || (f == 0 && !grid_measured_)) return;
  const std::size_t nb = info_.blocks.size();
  const int nvar = info_.nvar(), rb = info_.real_bytes;
  std::vector<std::pair<double, double>> mm;
  for (std::size_t b = 0; b < nb; ++b) {
    if (!leads(b)) continue;
    mm.clear();
    if (f == 0) mm.insert(mm.end(), grid_minmax_.begin() + static_cast<std::ptrdiff_t>(3 * b), grid_minmax_.begin() + static_cast<std::ptrdiff_t>(3 * b + 3));
    else mm.resize(3);  // shared: not in the head
    mm.insert(mm.end(), it->second.begin() + static_cast<std::ptrdiff_t>(b * static_cast<std::size_t>(nvar)),
              it->second.begin() + static_cast<std::ptrdiff_t>((b + 1) * static_cast<std::size_t>(nvar)));
    const std::string head = tecplot::entry_head(zone_of(info_.blocks[b], b, nvar, rb, f == 0), mm);
    out.insert(out.end(), head.begin(), head.end());
  }
}

void TecplotBlocks::write_heads(const std::string& path) {
  const std::size_t nb = info_.blocks.size();
  std::vector<std::int64_t> ready;
  for (const auto& m : measured_)
    if (m.first > 0 || grid_measured_) ready.push_back(m.first);
  collective(comm_, [&] {
    bool any = false;
    for (std::size_t b = 0; b < nb && !any; ++b) any = leads(b);
    if (!any || ready.empty()) return;
    const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0) throw IoError::from_errno("cannot open", path);
    try {
      std::vector<unsigned char> bytes;
      for (const std::int64_t f : ready) {
        heads(f, bytes);
        std::size_t at = 0;
        for (std::size_t b = 0; b < nb; ++b) {
          if (!leads(b)) continue;
          const auto n = static_cast<std::size_t>(head_bytes(f == 0, b));
          pwrite_all(fd, bytes.data() + at, n, entry_at(f, b), path);
          at += n;
        }
      }
    } catch (...) {
      ::close(fd);
      throw;
    }
    if (::close(fd) != 0) throw IoError::from_errno("cannot write", path);
  });
  for (const std::int64_t f : ready) measured_.erase(f);
}

void TecplotBlocks::close(const std::string& path, const std::vector<double>& times) {
  const std::size_t nb = info_.blocks.size();
  const int nvar = info_.nvar(), rb = info_.real_bytes;
  const auto frames = static_cast<std::int64_t>(times.size());
  if (frames == 0 && grid_measured_) {  // the grid alone: its zones' variables never written (zeros)
    measured_[0].assign(nb * static_cast<std::size_t>(nvar), {0.0, 0.0});
    write_heads(path);
  }
  const std::int64_t groups = std::max<std::int64_t>(frames, 1);
  tecplot::File file;
  file.title = title_;
  file.variables = {"X", "Y", "Z"};
  file.variables.insert(file.variables.end(), info_.variables.begin(), info_.variables.end());
  file.aux = {{tecplot::kFramesAux, tecplot::frames_text(frames)}};
  for (std::int64_t f = 0; f < groups; ++f)
    for (std::size_t b = 0; b < nb; ++b) {
      tecplot::Zone z = zone_of(info_.blocks[b], b, nvar, rb, f == 0);
      z.time = frames > 0 ? times[static_cast<std::size_t>(f)] : 0.0;
      z.strand = nb <= static_cast<std::size_t>(kMaxStrands) ? static_cast<std::int32_t>(b) : -1;
      file.zones.push_back(std::move(z));
    }
  const std::int64_t end = entry_at(groups - 1, nb - 1) + (groups == 1 ? first_size_[nb - 1] : later_size_[nb - 1]);
  write_tecplot_header(comm_, path, file, room_, end);
}

template void TecplotBlocks::measure<float>(std::int64_t, bool, const float* const*);
template void TecplotBlocks::measure<double>(std::int64_t, bool, const double* const*);
template void TecplotBlocks::keep_grid<float>(const float* const*);
template void TecplotBlocks::keep_grid<double>(const double* const*);

}  // namespace anabranch::pio
