#include "layouts/block_compressed.hpp"

#include <algorithm>
#include <limits>
#include <numeric>

#include "core/error.hpp"
#include "core/io.hpp"
#include "parallel/mpi_util.hpp"

namespace anabranch::pio {

std::vector<std::array<std::int64_t, 3>> CompressedBlocks::chunk_extents(const std::vector<BlockShape>& blocks,
                                                                          const std::vector<BlockPiece>& all_pieces) {
  std::vector<std::array<std::int64_t, 3>> g(blocks.size(), {0, 0, 0});
  for (const auto& p : all_pieces)
    for (int a = 0; a < 3; ++a)
      for (const std::int64_t cut : p.range[static_cast<std::size_t>(a)])
        if (cut > 0 && cut < blocks[static_cast<std::size_t>(p.block)].dims[static_cast<std::size_t>(a)])
          g[static_cast<std::size_t>(p.block)][static_cast<std::size_t>(a)] = std::gcd(g[static_cast<std::size_t>(p.block)][static_cast<std::size_t>(a)], cut);
  for (std::size_t b = 0; b < blocks.size(); ++b) {
    auto& e = g[b];
    for (std::size_t a = 0; a < 3; ++a)
      if (e[a] == 0) e[a] = blocks[b].dims[a];
    // At most kChunkValues: along k, then j, the largest divisor of the extent that fits
    // (a divisor keeps every cut on a chunk's edge).
    for (std::size_t a : {std::size_t{2}, std::size_t{1}}) {
      const std::int64_t others = e[0] * e[1] * e[2] / e[a];
      if (others * e[a] <= kChunkValues) break;
      const std::int64_t room = std::max<std::int64_t>(1, kChunkValues / others);
      std::int64_t best = 1;
      for (std::int64_t d = 1; d * d <= e[a]; ++d)
        if (e[a] % d == 0) {
          if (d <= room) best = std::max(best, d);
          if (e[a] / d <= room) best = std::max(best, e[a] / d);
        }
      e[a] = best;
    }
  }
  return g;
}

CompressedBlocks::CompressedBlocks(MPI_Comm comm, const BlockLayout& layout, std::vector<std::array<std::int64_t, 3>> extents,
                                   const Compression& c, int real_bytes, int nvar, std::int64_t first)
    : comm_(comm), layout_(layout), extents_(std::move(extents)), c_(c), real_bytes_(real_bytes), nvar_(nvar), next_(first) {
  MPI_Comm_rank(comm, &rank_);
}

const cgns::Stored& CompressedBlocks::stored(std::int64_t frame, std::size_t block, int var) const {
  return stored_.at(static_cast<std::size_t>(array_index(frame, var)) * layout_.blocks.size() + block);
}

namespace {

// One chunk's values in C order (k, j, i; i fastest), of the file's precision R, from piece
// p's array (Fortran order, halos included); zeros past the block's edge.
template <class R, class T>
void fill_chunk(const BlockLayout& l, std::size_t p, const T* values, const std::array<std::int64_t, 3>& lo,
                const std::array<std::int64_t, 3>& extent, R* out) {
  const BlockPiece& piece = l.pieces[p];
  const auto& d = l.blocks[static_cast<std::size_t>(piece.block)].dims;
  const auto m = l.memory_dims(p);
  const std::int64_t ni = std::min(extent[0], d[0] - lo[0]);
  std::fill(out, out + extent[0] * extent[1] * extent[2], R(0));
  for (std::int64_t k = lo[2]; k < std::min(lo[2] + extent[2], d[2]); ++k)
    for (std::int64_t j = lo[1]; j < std::min(lo[1] + extent[1], d[1]); ++j) {
      const T* from = values + ((k - piece.range[2][0] + l.halo[2]) * m[1] + j - piece.range[1][0] + l.halo[1]) * m[0] + lo[0] -
                      piece.range[0][0] + l.halo[0];
      R* to = out + ((k - lo[2]) * extent[1] + (j - lo[1])) * extent[0];
      for (std::int64_t i = 0; i < ni; ++i) to[i] = static_cast<R>(from[i]);
    }
}

}  // namespace

template <class T>
std::vector<double> array_bounds(MPI_Comm comm, const BlockLayout& layout, const Compression& c, int n, const T* const* arrays) {
  std::vector<double> bound(static_cast<std::size_t>(n), c.lossy() ? c.tolerance : 0.0);
  if (c.mode != Compression::Mode::Relative) return bound;
  std::vector<double> span(2 * static_cast<std::size_t>(n), std::numeric_limits<double>::infinity());  // {min, -max} each
  std::vector<double> line;
  for (std::size_t p = 0; p < layout.pieces.size(); ++p)
    for (int a = 0; a < n; ++a)
      layout.for_each_run(p, [&](const BlockRun& run) {
        const T* from = arrays[p * static_cast<std::size_t>(n) + static_cast<std::size_t>(a)] + run.memory_index;
        line.assign(from, from + run.count);
        widen_span(line.data(), run.count, &span[2 * static_cast<std::size_t>(a)]);
      });
  allreduce(comm, span.data(), 2 * n, MPI_DOUBLE, MPI_MIN);
  for (std::size_t a = 0; a < bound.size(); ++a) bound[a] = c.bound(span[2 * a], -span[2 * a + 1]);
  return bound;
}

template <class T>
void packed_runs(const BlockLayout& layout, const std::vector<std::int64_t>& first_point, int a, int n, const T* const* arrays,
                 int real_bytes, double bound, std::vector<std::array<std::int64_t, 2>>& runs, std::vector<unsigned char>& values) {
  struct Run {
    std::int64_t at, count;
    const T* from;
  };
  std::vector<Run> all;
  for (std::size_t p = 0; p < layout.pieces.size(); ++p) {
    const T* array = arrays[p * static_cast<std::size_t>(n) + static_cast<std::size_t>(a)];
    const std::int64_t first = first_point[static_cast<std::size_t>(layout.pieces[p].block)];
    layout.for_each_run(p, [&](const BlockRun& run) { all.push_back({first + run.block_index, run.count, array + run.memory_index}); });
  }
  std::sort(all.begin(), all.end(), [](const Run& x, const Run& y) { return x.at < y.at; });
  std::int64_t total = 0;
  for (const auto& r : all) total += r.count;
  values.resize(static_cast<std::size_t>(total * real_bytes));
  runs.clear();
  std::int64_t at = 0;
  for (const auto& r : all) {
    if (!runs.empty() && runs.back()[0] + runs.back()[1] == r.at)
      runs.back()[1] += r.count;
    else
      runs.push_back({r.at, r.count});
    for (std::int64_t i = 0; i < r.count; ++i, ++at)
      if (real_bytes == 8) reinterpret_cast<double*>(values.data())[at] = static_cast<double>(r.from[i]);
      else reinterpret_cast<float*>(values.data())[at] = static_cast<float>(r.from[i]);
  }
  if (real_bytes == 8) round_within(reinterpret_cast<double*>(values.data()), total, bound);
  else round_within(reinterpret_cast<float*>(values.data()), total, bound);
}

template std::vector<double> array_bounds<float>(MPI_Comm, const BlockLayout&, const Compression&, int, const float* const*);
template std::vector<double> array_bounds<double>(MPI_Comm, const BlockLayout&, const Compression&, int, const double* const*);
template void packed_runs<float>(const BlockLayout&, const std::vector<std::int64_t>&, int, int, const float* const*, int, double,
                                 std::vector<std::array<std::int64_t, 2>>&, std::vector<unsigned char>&);
template void packed_runs<double>(const BlockLayout&, const std::vector<std::int64_t>&, int, int, const double* const*, int, double,
                                  std::vector<std::array<std::int64_t, 2>>&, std::vector<unsigned char>&);

template <class T>
void CompressedBlocks::write(MPI_File fh, const std::string& path, std::int64_t frame, bool grid, const T* const* arrays) {
  const int n = grid ? 3 : nvar_;
  const Compression c = grid ? Compression{Compression::Mode::Lossless, 0, c_.codec} : c_;
  const std::string what = grid ? std::string("the grid") : "frame " + std::to_string(frame);
  const std::vector<double> bound = array_bounds(comm_, layout_, c, n, arrays);
  std::string buffer;
  std::vector<Placed> placed;
  collective(comm_, [&] {
    std::vector<unsigned char> chunk;
    for (int a = 0; a < n; ++a) {  // an array at a time over the pieces: one bound, one rounding table
      for (std::size_t p = 0; p < layout_.pieces.size(); ++p) {
        const BlockPiece& piece = layout_.pieces[p];
        const auto b = static_cast<std::size_t>(piece.block);
        const auto& e = extents_[b];
        const auto& d = layout_.blocks[b].dims;
        const std::int64_t count = e[0] * e[1] * e[2];
        chunk.resize(static_cast<std::size_t>(count * real_bytes_));
        std::array<std::int64_t, 3> grid_of{}, first{}, last{};  // chunks along each direction; this piece's
        for (std::size_t x = 0; x < 3; ++x) {
          grid_of[x] = (d[x] + e[x] - 1) / e[x];
          first[x] = piece.range[x][0] / e[x];
          last[x] = (piece.range[x][1] + e[x] - 1) / e[x];
        }
        const T* from = arrays[p * static_cast<std::size_t>(n) + static_cast<std::size_t>(a)];
        for (std::int64_t ck = first[2]; ck < last[2]; ++ck)
          for (std::int64_t cj = first[1]; cj < last[1]; ++cj)
            for (std::int64_t ci = first[0]; ci < last[0]; ++ci) {
              const std::array<std::int64_t, 3> lo = {ci * e[0], cj * e[1], ck * e[2]};
              if (real_bytes_ == 8) {
                fill_chunk(layout_, p, from, lo, e, reinterpret_cast<double*>(chunk.data()));
                round_within(reinterpret_cast<double*>(chunk.data()), count, bound[static_cast<std::size_t>(a)]);
              } else {
                fill_chunk(layout_, p, from, lo, e, reinterpret_cast<float*>(chunk.data()));
                round_within(reinterpret_cast<float*>(chunk.data()), count, bound[static_cast<std::size_t>(a)]);
              }
              const auto at = static_cast<std::int64_t>(buffer.size());
              encode_chunk(c, chunk.data(), static_cast<std::size_t>(count), real_bytes_, buffer);
              placed.push_back({array_index(frame, grid ? -(a + 1) : a), static_cast<std::int64_t>(b), (ck * grid_of[1] + cj) * grid_of[0] + ci,
                                at, static_cast<std::int64_t>(buffer.size()) - at});
            }
      }
    }
  });
  const std::int64_t mine = static_cast<std::int64_t>(buffer.size());
  std::int64_t before = 0, all = mine;
  check_mpi(MPI_Exscan(&mine, &before, 1, MPI_INT64_T, MPI_SUM, comm_), "MPI_Exscan");
  if (rank_ == 0) before = 0;
  allreduce(comm_, &all, 1, MPI_INT64_T, MPI_SUM);
  collective(comm_, [&] {
    check_size_limit(path, next_ + all, what);
    if (mine > 0) write_at(fh, next_ + before, buffer.data(), mine, path);
  });
  for (auto& q : placed) q.address += next_ + before;
  next_ += all;
  const std::vector<Placed> every = gather(comm_, placed);
  if (rank_ != 0) return;
  const std::size_t nb = layout_.blocks.size();
  for (int a = 0; a < n; ++a) {
    const auto first = static_cast<std::size_t>(array_index(frame, grid ? -(a + 1) : a)) * nb;
    if (stored_.size() < first + nb) stored_.resize(first + nb);
    for (std::size_t b = 0; b < nb; ++b) {
      const auto& d = layout_.blocks[b].dims;
      const auto& e = extents_[b];
      auto& s = stored_[first + b];
      s.chunk.clear();
      std::size_t chunks = 1;
      for (std::size_t x = d[2] == 1 ? 2 : 3; x-- > 0;) {  // C order: k, j, i (a zone one point thick in k: j, i)
        s.chunk.push_back(static_cast<std::uint64_t>(e[x]));
        chunks *= static_cast<std::size_t>((d[x] + e[x] - 1) / e[x]);
      }
      s.chunks.assign(chunks, {});
    }
  }
  for (const auto& q : every) stored_[static_cast<std::size_t>(q.array) * nb + static_cast<std::size_t>(q.block)].chunks[static_cast<std::size_t>(q.chunk)] = {q.address, q.bytes};
}

template void CompressedBlocks::write<float>(MPI_File, const std::string&, std::int64_t, bool, const float* const*);
template void CompressedBlocks::write<double>(MPI_File, const std::string&, std::int64_t, bool, const double* const*);

}  // namespace anabranch::pio
