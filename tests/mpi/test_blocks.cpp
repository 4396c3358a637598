// Multi-block files from all ranks: for both formats, both strategies, both precisions,
// with and without Fortran records, pieces dealt by `balance` (blocks split across ranks,
// ranks holding nothing), the file must hold exactly the bytes built serially from the
// global arrays: the same for every strategy and rank count. Read back with another
// assignment (a restart on another process count), every interior value comes back and
// no halo is touched.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "core/error.hpp"
#include "blockformats/block_raw.hpp"
#include "partition/balance.hpp"
#include "layouts/block_io.hpp"

using namespace anabranch;

namespace {

int rank_of() {
  int r;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}
int size_of() {
  int s;
  MPI_Comm_size(MPI_COMM_WORLD, &s);
  return s;
}

// A temporary folder named on rank 0, shared, and removed when the test ends.
struct TempDir {
  std::string path;
  ~TempDir() {
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank_of() == 0) std::filesystem::remove_all(path);
  }
  operator std::string() const { return path; }  // NOLINT
};

std::string make_temp_dir() {
  std::string dir;
  if (rank_of() == 0) {
    std::string tmpl = (std::filesystem::temp_directory_path() / "abblk-XXXXXX").string();
    dir = ::mkdtemp(tmpl.data());
  }
  int n = static_cast<int>(dir.size());
  MPI_Bcast(&n, 1, MPI_INT, 0, MPI_COMM_WORLD);
  dir.resize(static_cast<std::size_t>(n));
  MPI_Bcast(dir.data(), n, MPI_CHAR, 0, MPI_COMM_WORLD);
  return dir;
}

std::vector<unsigned char> bytes_of(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Ten blocks of unequal sizes, one of them flat (nk = 1), ids not in order.
std::vector<BlockShape> grid() {
  std::vector<BlockShape> g;
  const std::int64_t dims[10][3] = {{9, 7, 3}, {13, 5, 4}, {6, 6, 6}, {17, 3, 2}, {5, 11, 1},
                                    {8, 8, 2}, {4, 4, 4}, {21, 6, 3}, {7, 9, 5}, {3, 3, 3}};
  for (int b = 0; b < 10; ++b) g.push_back({100 - 7 * b, {dims[b][0], dims[b][1], dims[b][2]}});
  return g;
}

// The value of variable v of point (i, j, k) of block b in frame f: exact in single precision.
double value(std::size_t b, std::int64_t i, std::int64_t j, std::int64_t k, int v, std::int64_t f) {
  return static_cast<double>(((static_cast<std::int64_t>(b) * 29 + i) * 23 + j) * 7 + k) + 0.5 * v + 0.25 * static_cast<double>(f);
}
// The grid's coordinate c.
double coord(std::size_t b, std::int64_t i, std::int64_t j, std::int64_t k, int c) {
  return c == 0 ? static_cast<double>(i) + 30.0 * static_cast<double>(b) : c == 1 ? 0.5 * static_cast<double>(j) : 0.25 * static_cast<double>(k);
}

// Pieces of the grid dealt to `procs` processes by balance (splits included); this rank's.
BlockLayout dealt(int procs, int rank, std::array<std::int64_t, 3> halo, double tolerance = 1.02) {
  std::vector<Block> blocks;
  for (const auto& s : grid()) {
    Block b;
    b.id = s.id;
    b.cells = s.dims;
    b.weight = static_cast<double>(s.points());
    blocks.push_back(b);
  }
  BalanceOptions o;
  o.method = BalanceMethod::Greedy;
  o.tolerance = tolerance;
  const auto r = balance(blocks, {}, procs, o);
  BlockLayout l;
  l.blocks = grid();
  l.halo = halo;
  for (std::size_t p = 0; p < r.pieces.size(); ++p) {
    if (r.process[p] != rank) continue;
    BlockPiece piece;
    piece.block = static_cast<std::int64_t>(l.block_index(r.pieces[p].block));
    piece.range = r.pieces[p].range;
    if (r.pieces[p].count == 1) piece.range = {{{0, l.blocks[static_cast<std::size_t>(piece.block)].dims[0]}, {0, l.blocks[static_cast<std::size_t>(piece.block)].dims[1]}, {0, l.blocks[static_cast<std::size_t>(piece.block)].dims[2]}}};
    l.pieces.push_back(piece);
  }
  return l;
}

constexpr double kHalo = -12345.0;

// Checks that rank 0 alone makes, then a barrier: a failure there (an exception included)
// never sends rank 0 out of the test while the others wait in the next collective call.
template <class F>
void on_root(F&& check) {
  if (rank_of() == 0) {
    try {
      check();
    } catch (const std::exception& e) {
      ADD_FAILURE() << e.what();
    }
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

// The caller's arrays of every piece (halos set to kHalo) for variable count nvar.
template <class T>
std::vector<std::vector<T>> arrays(const BlockLayout& l, int nvar, std::int64_t frame, bool fill) {
  std::vector<std::vector<T>> a;
  for (std::size_t p = 0; p < l.pieces.size(); ++p) {
    const auto m = l.memory_dims(p);
    const auto& piece = l.pieces[p];
    for (int v = 0; v < nvar; ++v) {
      std::vector<T> x(static_cast<std::size_t>(l.memory_points(p)), static_cast<T>(kHalo));
      if (fill)
        for (std::int64_t k = piece.range[2][0]; k < piece.range[2][1]; ++k)
          for (std::int64_t j = piece.range[1][0]; j < piece.range[1][1]; ++j)
            for (std::int64_t i = piece.range[0][0]; i < piece.range[0][1]; ++i) {
              const std::int64_t at = ((k - piece.range[2][0] + l.halo[2]) * m[1] + j - piece.range[1][0] + l.halo[1]) * m[0] + i - piece.range[0][0] + l.halo[0];
              x[static_cast<std::size_t>(at)] = static_cast<T>(nvar == 3 && frame < 0 ? coord(static_cast<std::size_t>(piece.block), i, j, k, v)
                                                                                  : value(static_cast<std::size_t>(piece.block), i, j, k, v, frame));
            }
      a.push_back(std::move(x));
    }
  }
  return a;
}

template <class T>
std::vector<const T*> pointers(const std::vector<std::vector<T>>& a) {
  std::vector<const T*> p;
  for (const auto& x : a) p.push_back(x.data());
  return p;
}

// The raw file built serially from the global arrays.
std::vector<unsigned char> expected_raw(int nvar, std::int64_t frames, int rb, bool records) {
  std::vector<unsigned char> out;
  auto put = [&](const void* p, std::size_t n) { out.insert(out.end(), static_cast<const unsigned char*>(p), static_cast<const unsigned char*>(p) + n); };
  const auto g = grid();
  for (std::int64_t f = 0; f < frames; ++f)
    for (std::size_t b = 0; b < g.size(); ++b)
      for (int v = 0; v < nvar; ++v) {
        const auto marker = static_cast<std::int32_t>(g[b].points() * rb);
        if (records) put(&marker, 4);
        for (std::int64_t k = 0; k < g[b].dims[2]; ++k)
          for (std::int64_t j = 0; j < g[b].dims[1]; ++j)
            for (std::int64_t i = 0; i < g[b].dims[0]; ++i) {
              const double x = value(b, i, j, k, v, f);
              const float y = static_cast<float>(x);
              if (rb == 8) put(&x, 8);
              else put(&y, 4);
            }
        if (records) put(&marker, 4);
      }
  return out;
}

const std::vector<std::string> kVars = {"rho", "u", "p"};

struct Case {
  std::string format, strategy;
  int rb;
  bool records;
  std::string name() const { return format + "-" + strategy + "-" + std::to_string(rb) + (records ? "-records" : ""); }
};

std::vector<Case> cases() {
  std::vector<Case> c;
  for (const char* s : {"collective", "independent", "aggregated", "aggregated-async"})
    for (int rb : {8, 4}) {
      c.push_back({"raw", s, rb, false});
      c.push_back({"raw", s, rb, true});
#ifdef ANABRANCH_HAVE_HDF5
      c.push_back({"hdf5", s, rb, false});
#endif
    }
  return c;
}

// Every value of the file, frame after frame, block after block, variable after variable.
std::vector<unsigned char> values_of(const pio::BlockFileInfo& info) {
  const auto all = bytes_of(info.path);
  std::vector<unsigned char> out;
  for (std::int64_t f = 0; f < info.frames(); ++f)
    for (std::size_t b = 0; b < info.blocks.size(); ++b)
      for (int v = 0; v < info.nvar(); ++v) {
        const auto at = static_cast<std::size_t>(info.value_offset(f, b, v));
        const auto n = static_cast<std::size_t>(info.blocks[b].points() * info.real_bytes);
        if (info.records) out.insert(out.end(), all.begin() + static_cast<long>(at) - 4, all.begin() + static_cast<long>(at));
        out.insert(out.end(), all.begin() + static_cast<long>(at), all.begin() + static_cast<long>(at + n));
        if (info.records) out.insert(out.end(), all.begin() + static_cast<long>(at + n), all.begin() + static_cast<long>(at + n) + 4);
      }
  return out;
}

template <class T>
void write_case(const Case& c, const std::string& path, const BlockLayout& l, std::int64_t frames) {
  pio::BlockFileOptions o;
  o.format = c.format;
  o.strategy = c.strategy;
  o.real_bytes = c.rb;
  o.records = c.records;
  o.buffer_bytes = 4096;  // runs split over many staging rounds
  pio::BlockWriter w(MPI_COMM_WORLD, path, l, kVars, o);
  if (c.format == "hdf5") {
    const auto xyz = arrays<T>(l, 3, -1, true);
    w.write_grid(pointers(xyz).data());
  }
  for (std::int64_t f = 0; f < frames; ++f) {
    const auto a = arrays<T>(l, 3, f, true);
    w.write_frame(0.5 * static_cast<double>(f), pointers(a).data());
  }
  w.close();
}

TEST(Blocks, EveryStrategyAndRankCountWritesTheSerialBytes) {
  const TempDir tmp{make_temp_dir()};
  const std::string dir = tmp;
  const BlockLayout l = dealt(size_of(), rank_of(), {2, 1, 1});
  for (const auto& c : cases()) {
    SCOPED_TRACE(c.name());
    const std::string path = dir + "/" + c.name() + (c.format == "hdf5" ? ".h5" : ".dat");
    write_case<double>(c, path, l, 3);
    on_root([&] {
      const auto info = pio::describe_block_file(path);
      EXPECT_EQ(info.frames(), 3);
      EXPECT_EQ(info.times, (std::vector<double>{0, 0.5, 1.0}));
      EXPECT_EQ(info.blocks.size(), grid().size());
      const auto want = expected_raw(3, 3, c.rb, c.records);
      if (c.format == "raw") {
        EXPECT_TRUE(bytes_of(path) == want) << "the file differs from the serially built bytes";
      } else {
        EXPECT_TRUE(values_of(info) == want) << "the datasets' values differ from the serially built bytes";
        EXPECT_TRUE(info.has_grid);
        EXPECT_TRUE(std::filesystem::exists(path + ".xmf"));
      }
      EXPECT_EQ(pio::check_block_file(info), "");
    });
  }
}

// Tecplot files: every strategy, both precisions, the header's room for fewer, as many or
// more frames than written (a header past its room moves the values along at close), the
// same bytes as one rank writes alone (the zones' min/max reduced over pieces of split
// blocks included); their values are the serially built ones.
TEST(Blocks, TecplotFilesOfEveryStrategyAndRankCountAreTheSerialFile) {
  const TempDir tmp{make_temp_dir()};
  const std::string dir = tmp;
  const BlockLayout l = dealt(size_of(), rank_of(), {1, 0, 2});
  for (const std::int64_t reserved : {0, 3, 5}) {
    for (int rb : {8, 4}) {
      // Files of one name (the title is its stem), each in a folder of its own.
      const std::string run = dir + "/" + std::to_string(rb) + "-" + std::to_string(reserved);
      const std::string alone = run + "/alone/f.plt";
      if (rank_of() == 0) {  // every block whole on one rank
        for (const char* s : {"alone", "collective", "independent", "aggregated", "aggregated-async"}) std::filesystem::create_directories(run + "/" + s);
        BlockLayout one;
        one.blocks = grid();
        for (std::size_t b = 0; b < one.blocks.size(); ++b) {
          const auto& d = one.blocks[b].dims;
          one.pieces.push_back({static_cast<std::int64_t>(b), {{{0, d[0]}, {0, d[1]}, {0, d[2]}}}});
        }
        pio::BlockFileOptions o;
        o.real_bytes = rb;
        o.frames = reserved;
        pio::BlockWriter w(MPI_COMM_SELF, alone, one, kVars, o);
        const auto xyz = arrays<double>(one, 3, -1, true);
        w.write_grid(pointers(xyz).data());
        for (std::int64_t f = 0; f < 3; ++f) w.write_frame(0.5 * static_cast<double>(f), pointers(arrays<double>(one, 3, f, true)).data());
        w.close();
      }
      MPI_Barrier(MPI_COMM_WORLD);
      for (const char* s : {"collective", "independent", "aggregated", "aggregated-async"}) {
        const Case c{"tecplot", s, rb, false};
        SCOPED_TRACE(c.name() + " reserved " + std::to_string(reserved));
        const std::string path = run + "/" + s + "/f.plt";
        pio::BlockFileOptions o;
        o.strategy = s;
        o.real_bytes = rb;
        o.frames = reserved;
        o.buffer_bytes = 4096;
        pio::BlockWriter w(MPI_COMM_WORLD, path, l, kVars, o);
        for (std::int64_t f = 0; f < 3; ++f) {  // the grid after the first frame: the first zones' heads wait for it
          const auto a = arrays<double>(l, 3, f, true);
          w.write_frame(0.5 * static_cast<double>(f), pointers(a).data());
          if (f == 0) w.write_grid(pointers(arrays<double>(l, 3, -1, true)).data());
        }
        w.close();
        on_root([&] {
          EXPECT_TRUE(bytes_of(path) == bytes_of(alone)) << "the file differs from the one rank 0 wrote alone";
          const auto info = pio::describe_block_file(path);
          EXPECT_EQ(info.format, "tecplot");
          EXPECT_EQ(info.times, (std::vector<double>{0, 0.5, 1.0}));
          EXPECT_TRUE(values_of(info) == expected_raw(3, 3, rb, false)) << "the zones' values differ from the serially built bytes";
          EXPECT_EQ(pio::check_block_file(info), "");
        });
      }
    }
  }
}

TEST(Blocks, SinglePrecisionArraysWriteTheSameFile) {
  const TempDir tmp{make_temp_dir()};
  const std::string dir = tmp;
  const BlockLayout l = dealt(size_of(), rank_of(), {1, 2, 0});
  for (const char* s : {"collective", "independent", "aggregated", "aggregated-async"}) {
    const Case c{"raw", s, 4, true};
    const std::string path = dir + "/f-" + s + ".dat";
    write_case<float>(c, path, l, 2);
    on_root([&] { EXPECT_TRUE(bytes_of(path) == expected_raw(3, 2, 4, true)) << s; });
  }
}

// Restart: written by one assignment, read by another (the pieces of another process
// count, dealt again; and every block whole on one rank).
TEST(Blocks, ARestartReadsItsOwnPiecesOfAnyAssignment) {
  const TempDir tmp{make_temp_dir()};
  const std::string dir = tmp;
  const BlockLayout wl = dealt(size_of(), rank_of(), {2, 2, 1});
  for (const auto& c : cases()) {
    SCOPED_TRACE(c.name());
    const std::string path = dir + "/r-" + c.name() + (c.format == "hdf5" ? ".h5" : ".dat");
    write_case<double>(c, path, wl, 2);
    // Read as 5 processes would (rank r takes the pieces of processes r, r + size, ...).
    BlockLayout rl = dealt(5, -1, {1, 0, 2}, 1.01);
    for (int q = rank_of(); q < 5; q += size_of()) {
      const auto more = dealt(5, q, {1, 0, 2}, 1.01);
      rl.pieces.insert(rl.pieces.end(), more.pieces.begin(), more.pieces.end());
    }
    pio::BlockFileOptions o;
    o.strategy = c.strategy;
    o.buffer_bytes = 4096;
    pio::BlockReader r(MPI_COMM_WORLD, path, rl, o);
    ASSERT_EQ(r.info().frames(), 2);
    for (std::int64_t f = 0; f < 2; ++f) {
      auto got = arrays<double>(rl, 3, f, false);
      std::vector<double*> ptr;
      for (auto& x : got) ptr.push_back(x.data());
      r.read_frame(f, ptr.data());
      const auto want = arrays<double>(rl, 3, f, true);
      EXPECT_TRUE(got == want) << "frame " << f << " read back differs (values or halos)";
    }
    if (c.format == "hdf5") {
      auto got = arrays<float>(rl, 3, -1, false);
      std::vector<float*> ptr;
      for (auto& x : got) ptr.push_back(x.data());
      r.read_grid(ptr.data());
      EXPECT_TRUE(got == arrays<float>(rl, 3, -1, true)) << "the grid read back differs";
    }
    r.close();
  }
}

// Two blocks, whatever the rank count: the first split in k between ranks 0 and 1 (one
// plane each), the second whole on the last rank, or on rank 0 from 3 ranks on: more ranks
// than blocks, and ranks that hold nothing.
TEST(Blocks, MoreRanksThanBlocksAndRanksWithNothing) {
  const TempDir tmp{make_temp_dir()};
  const std::string dir = tmp;
  BlockLayout l;
  l.blocks = {{5, {4, 3, 2}}, {9, {3, 3, 3}}};
  l.halo = {1, 1, 1};
  const int r = rank_of(), n = size_of();
  if (r < 2) l.pieces.push_back({0, {{{0, 4}, {0, 3}, {r * 2 / std::min(n, 2), (r + 1) * 2 / std::min(n, 2)}}}});
  if (l.pieces.size() == 1 && l.pieces[0].range[2][0] == l.pieces[0].range[2][1]) l.pieces.clear();
  if (r == (n >= 3 ? 0 : n - 1)) l.pieces.push_back({1, {{{0, 3}, {0, 3}, {0, 3}}}});  // 3 ranks: rank 2 holds nothing
  for (const char* strategy : {"collective", "independent", "aggregated", "aggregated-async"})
    for (const char* format : {"raw", "hdf5"}) {
#ifndef ANABRANCH_HAVE_HDF5
      if (std::string(format) == "hdf5") continue;
#endif
      pio::BlockFileOptions o;
      o.format = format;
      o.strategy = strategy;
      const std::string path = dir + "/two-" + strategy + "-" + format;
      {
        pio::BlockWriter w(MPI_COMM_WORLD, path, l, {"v"}, o);
        std::vector<std::vector<double>> a;
        std::vector<const double*> p;
        for (std::size_t k = 0; k < l.pieces.size(); ++k) {
          const auto m = l.memory_dims(k);
          std::vector<double> x(static_cast<std::size_t>(l.memory_points(k)), kHalo);
          const auto& pc = l.pieces[k];
          for (std::int64_t kk = pc.range[2][0]; kk < pc.range[2][1]; ++kk)
            for (std::int64_t j = pc.range[1][0]; j < pc.range[1][1]; ++j)
              for (std::int64_t i = pc.range[0][0]; i < pc.range[0][1]; ++i)
                x[static_cast<std::size_t>(((kk - pc.range[2][0] + 1) * m[1] + j - pc.range[1][0] + 1) * m[0] + i - pc.range[0][0] + 1)] =
                    value(static_cast<std::size_t>(pc.block), i, j, kk, 0, 0);
          a.push_back(std::move(x));
        }
        for (const auto& x : a) p.push_back(x.data());
        w.write_frame(1.5, p.data());
        w.close();
      }
      on_root([&] {  // EXPECT, never ASSERT, where one rank checks
        const auto info = pio::describe_block_file(path);
        std::vector<double> got;
        std::int64_t bad = 0;
        for (std::size_t b = 0; b < 2; ++b) {
          pio::read_block_array(info, 0, b, 0, got);
          const auto& d = l.blocks[b].dims;
          for (std::int64_t k = 0; k < d[2]; ++k)
            for (std::int64_t j = 0; j < d[1]; ++j)
              for (std::int64_t i = 0; i < d[0]; ++i) bad += got[static_cast<std::size_t>((k * d[1] + j) * d[0] + i)] != value(b, i, j, k, 0, 0);
        }
        EXPECT_EQ(bad, 0) << strategy << " " << format;
      });
    }
}

// aggregated-async: begin_frame returns once the values are copied; the caller's arrays may
// change before end_frame (its next step) and the file still holds the frame's.
TEST(Blocks, AsyncFramesHoldTheValuesOfBeginFrame) {
  const TempDir tmp{make_temp_dir()};
  const std::string path = std::string(tmp) + "/async.dat";
  const BlockLayout l = dealt(size_of(), rank_of(), {2, 1, 1});
  pio::BlockFileOptions o;
  o.strategy = "aggregated-async";
  o.records = true;
  o.real_bytes = 4;
  o.buffer_bytes = 4096;  // many rounds: both buffers of every writer in use
  pio::BlockWriter w(MPI_COMM_WORLD, path, l, kVars, o);
  for (std::int64_t f = 0; f < 2; ++f) {
    auto a = arrays<double>(l, 3, f, true);
    w.begin_frame(0.5 * static_cast<double>(f), pointers(a).data());
    for (auto& x : a) std::fill(x.begin(), x.end(), -7.0);  // the caller's next step
    w.end_frame();
  }
  w.close();
  on_root([&] { EXPECT_TRUE(bytes_of(path) == expected_raw(3, 2, 4, true)) << "the file holds values changed after begin_frame"; });
}

TEST(Blocks, PiecesThatDoNotCoverTheGridAreRefusedOnEveryRank) {
  const TempDir tmp{make_temp_dir()};
  const std::string dir = tmp;
  BlockLayout l = dealt(size_of(), rank_of(), {0, 0, 0});
  if (rank_of() == size_of() - 1) {
    if (l.pieces.empty()) l.pieces.push_back({0, {{{0, 1}, {0, 1}, {0, 1}}}});  // held twice
    else l.pieces.pop_back();                                                    // held by none
  }
  EXPECT_THROW(pio::BlockWriter(MPI_COMM_WORLD, dir + "/bad.dat", l, kVars), UsageError);
  on_root([&] { EXPECT_FALSE(std::filesystem::exists(dir + "/bad.dat")); });
}

}  // namespace
