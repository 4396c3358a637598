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
  first_size_.resize(nb);
  later_size_.resize(nb);
  first_at_.resize(nb);
  later_at_.resize(nb);
  for (std::size_t b = 0; b < nb; ++b) {
    first_at_[b] = room_ + first_bytes_;
    later_at_[b] = later_bytes_;
    first_size_[b] = tecplot::entry_bytes(zone_of(info.blocks[b], b, nvar, rb, true));
    later_size_[b] = tecplot::entry_bytes(zone_of(info.blocks[b], b, nvar, rb, false));
    first_bytes_ += first_size_[b];
    later_bytes_ += later_size_[b];
  }
  info.block_offsets.assign(3 * nb, 0);
  for (std::size_t b = 0; b < nb; ++b) {
    const std::int64_t head = tecplot::entry_head_bytes(zone_of(info.blocks[b], b, nvar, rb, true));
    for (int c = 0; c < 3; ++c) info.block_offsets[static_cast<std::size_t>(c) * nb + b] = first_at_[b] + head + c * info.blocks[b].points() * rb;
  }
  // each block's first holder writes its entries' heads
  std::vector<int> mine(nb, INT_MAX);
  for (const auto& p : layout.pieces) mine[static_cast<std::size_t>(p.block)] = rank_;
  lead_.resize(nb);
  MPI_Allreduce(mine.data(), lead_.data(), static_cast<int>(nb), MPI_INT, MPI_MIN, comm);
}

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
  for (std::size_t b = 0; b < nb; ++b) {
    const bool first = f == 0;
    const std::int64_t head = tecplot::entry_head_bytes(zone_of(info_.blocks[b], b, nvar, rb, first));
    for (int v = 0; v < nvar; ++v)
      info_.block_offsets[static_cast<std::size_t>(3 + f * nvar + v) * nb + b] =
          entry_at(f, b) + head + (first ? 3 + v : v) * info_.blocks[b].points() * rb;
  }
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
        for (std::int64_t k = 0; k < run.count; ++k) {
          // As stored: in the file's precision. Tecplot's ranges: the finite values.
          const double v = info_.real_bytes == 4 ? static_cast<double>(static_cast<float>(values[run.memory_index + k]))
                                                  : static_cast<double>(values[run.memory_index + k]);
          if (!std::isfinite(v)) continue;
          l = std::min(l, v);
          h = std::max(h, v);
        }
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
    for (auto& p : pending_)
      if (p.f == 0) p.complete = true;
    return;
  }
  pending_.push_back({f, std::move(mm), n, f != 0 || grid_measured_});
}

void TecplotBlocks::write_heads(const std::string& path) {
  const std::size_t nb = info_.blocks.size();
  const int nvar = info_.nvar(), rb = info_.real_bytes;
  collective(comm_, [&] {
    bool any = false;
    for (const auto& p : pending_)
      for (std::size_t b = 0; p.complete && !any && b < nb; ++b) any = lead_[b] == rank_;
    if (!any) return;
    const int fd = ::open(path.c_str(), O_WRONLY);
    if (fd < 0) throw IoError::from_errno("cannot open", path);
    try {
      for (const auto& p : pending_) {
        if (!p.complete) continue;
        for (std::size_t b = 0; b < nb; ++b) {
          if (lead_[b] != rank_) continue;
          std::vector<std::pair<double, double>> mm;
          if (p.f == 0) mm.insert(mm.end(), grid_minmax_.begin() + static_cast<std::ptrdiff_t>(3 * b), grid_minmax_.begin() + static_cast<std::ptrdiff_t>(3 * b + 3));
          else mm.resize(3);  // shared: not in the head
          mm.insert(mm.end(), p.minmax.begin() + static_cast<std::ptrdiff_t>(b * static_cast<std::size_t>(p.arrays)),
                    p.minmax.begin() + static_cast<std::ptrdiff_t>((b + 1) * static_cast<std::size_t>(p.arrays)));
          const std::string head = tecplot::entry_head(zone_of(info_.blocks[b], b, nvar, rb, p.f == 0), mm);
          pwrite_all(fd, head.data(), head.size(), entry_at(p.f, b), path);
        }
      }
    } catch (...) {
      ::close(fd);
      throw;
    }
    if (::close(fd) != 0) throw IoError::from_errno("cannot write", path);
  });
  pending_.erase(std::remove_if(pending_.begin(), pending_.end(), [](const Pending& p) { return p.complete; }), pending_.end());
}

void TecplotBlocks::close(const std::string& path, const std::vector<double>& times) {
  const std::size_t nb = info_.blocks.size();
  const int nvar = info_.nvar(), rb = info_.real_bytes;
  const auto frames = static_cast<std::int64_t>(times.size());
  if (frames == 0 && grid_measured_) {  // the grid alone: its variables' values never written (zeros)
    pending_.push_back({0, std::vector<std::pair<double, double>>(nb * static_cast<std::size_t>(nvar), {0.0, 0.0}), nvar, true});
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

}  // namespace anabranch::pio
