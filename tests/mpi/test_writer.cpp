// The parallel shared-file writer: for every strategy, random and partition-shaped
// decompositions, ranks that own nothing, single/double precision, both byte orders, 2D and
// 3D, the shared file must be byte-identical to the serial writer's file from the global
// arrays. The hdf5 strategy's file holds the same header, mesh, times and values: turned
// back into SERAFIN it gives those same bytes.
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <numeric>
#include <random>
#include <set>

#include <unistd.h>

#include "core/error.hpp"
#include "grid/generate.hpp"
#include "grid/plan.hpp"
#include "formats/partel.hpp"
#include "formats/serafin.hpp"
#include "partition/partitioner.hpp"
#include "parallel/topology.hpp"
#include "layouts/writer.hpp"
#include "io/shared_file.hpp"
#include "io/strategy.hpp"
#include "parallel/mpi_util.hpp"
#ifdef ANABRANCH_HAVE_HDF5
#include "h5/vtkhdf.hpp"
#endif

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

// A temporary folder named on rank 0 and shared.
std::string shared_temp_dir() {
  std::string dir;
  if (rank_of() == 0) {
    std::string tmpl = (std::filesystem::temp_directory_path() / "abmpi-XXXXXX").string();
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

double value(std::int64_t gid, int var, int frame) { return std::sin(0.001 * gid + var) * 100.0 + frame * 0.25 + var; }

enum class Decomposition { Random, Partition, EmptyLast };

// The local node lists of every rank (1-based global ids), the same on every rank.
std::vector<std::vector<std::int32_t>> decompose(const Mesh& m, Decomposition d, int nranks, unsigned seed) {
  std::vector<std::vector<std::int32_t>> parts(static_cast<std::size_t>(nranks));
  if (d == Decomposition::Partition) {
    const std::int64_t n2 = m.npoin2(), e2 = m.nelem2();
    const int stride = m.ndp;
    auto epart = partition_sfc(m.ikle.data(), e2, 3, stride, Coordinates(m.x), Coordinates(m.y), nranks, {});
    auto plan = build_plan(m.ikle.data(), e2, 3, stride, n2, epart, nranks);
    for (int p = 0; p < nranks; ++p)
      for (int j = 0; j < m.nplan; ++j)
        for (std::int64_t i = 0; i < plan.part_npoin(p); ++i)
          parts[static_cast<std::size_t>(p)].push_back(static_cast<std::int32_t>(plan.part_knolg(p)[i] + j * n2 + 1));
    return parts;
  }
  std::mt19937 rng(seed);
  const int usable = d == Decomposition::EmptyLast && nranks > 1 ? nranks - 1 : nranks;
  for (std::int64_t g = 0; g < m.npoin; ++g) {
    const int r = static_cast<int>(rng() % static_cast<unsigned>(usable));
    parts[static_cast<std::size_t>(r)].push_back(static_cast<std::int32_t>(g + 1));
    if (rng() % 5 == 0) {  // an interface node: held by a second rank too
      const int q = static_cast<int>(rng() % static_cast<unsigned>(usable));
      if (q != r) parts[static_cast<std::size_t>(q)].push_back(static_cast<std::int32_t>(g + 1));
    }
  }
  for (auto& p : parts) std::shuffle(p.begin(), p.end(), rng);
  return parts;
}

struct Case {
  std::string strategy;
  Decomposition decomposition;
  Precision precision;
  ByteOrder order;
  int planes;
  std::int64_t buffer_bytes;
  bool shared_memory = true;
  int writers_per_node = 0;  // auto
};

void run_case(const Case& c, const std::string& dir, int id) {
  const int rank = rank_of(), nranks = size_of();
  ChannelOptions o;
  o.elements = 1500;
  o.planes = c.planes;
  const Mesh m = make_channel(o).mesh;
  serafin::Header h;
  h.precision = c.precision;
  h.byte_order = c.order;
  h.set_title("parallel writer test");
  h.variables = synthetic_variables(3, c.planes > 1);
  h.iparam[0] = 1;
  h.set_mesh_sizes(m);
  h.date = std::array<std::int32_t, 6>{2025, 1, 2, 3, 4, 5};
  const int nframes = 3;

  const auto parts = decompose(m, c.decomposition, nranks, 7u + static_cast<unsigned>(id));
  const auto& mine = parts[static_cast<std::size_t>(rank)];
  const auto nloc = static_cast<std::int64_t>(mine.size());
  std::vector<std::vector<double>> vals(3, std::vector<double>(static_cast<std::size_t>(nloc)));
  std::vector<const double*> ptrs = {vals[0].data(), vals[1].data(), vals[2].data()};

  const bool hdf5 = c.strategy == "hdf5";
  const std::string path = dir + "/case" + std::to_string(id) + (hdf5 ? ".h5" : ".slf");
  pio::OutputDescription out;
  out.header = h;
  if (rank == 0) out.mesh = &m;
  Mesh local;  // for file-per-process: the local nodes' coordinates, no elements
  local.ndp = m.ndp;
  for (auto g : mine) {
    local.x.push_back(m.x[static_cast<std::size_t>(g - 1)]);
    local.y.push_back(m.y[static_cast<std::size_t>(g - 1)]);
  }
  out.local_mesh = &local;
  if (rank == 0 && c.strategy != "file-per-process") {
    // A longer file from an earlier run under the same name: the output must replace it.
    std::ofstream old(path, std::ios::binary);
    const std::string junk(1 << 20, '\xab');
    old.write(junk.data(), static_cast<std::streamsize>(junk.size()));
  }
  MPI_Barrier(MPI_COMM_WORLD);
  pio::WriterOptions opt;
  opt.strategy = c.strategy;
  opt.buffer_bytes = c.buffer_bytes;
  opt.shared_memory = c.shared_memory;
  opt.writers_per_node = c.writers_per_node;
  pio::Writer w(MPI_COMM_WORLD, path, out, mine.data(), nloc, opt);
  for (int f = 0; f < nframes; ++f) {
    for (int v = 0; v < 3; ++v)
      for (std::int64_t i = 0; i < nloc; ++i) vals[static_cast<std::size_t>(v)][static_cast<std::size_t>(i)] = value(mine[static_cast<std::size_t>(i)] - 1, v, f);
    if (c.strategy == "aggregated-async" && f == 1) {
      w.begin_frame(f * 10.0, ptrs.data());
      for (auto& v : vals) std::fill(v.begin(), v.end(), -1.0);  // the caller reuses its arrays at once
      w.end_frame();
    } else {
      w.write_frame(f * 10.0, ptrs.data());
    }
  }
  w.close();
  MPI_Barrier(MPI_COMM_WORLD);

  // Rank 0 checks; every rank learns the verdict (no rank may leave the others behind).
  std::string failure;
  if (rank == 0) try {
    // The serial writer's file from the global arrays.
    const std::string ref = dir + "/ref" + std::to_string(id) + ".slf";
    serafin::Writer sw(ref, h, m);
    std::vector<double> g(static_cast<std::size_t>(m.npoin));
    for (int f = 0; f < nframes; ++f) {
      sw.begin_frame(f * 10.0);
      for (int v = 0; v < 3; ++v) {
        for (std::int64_t k = 0; k < m.npoin; ++k) g[static_cast<std::size_t>(k)] = value(k, v, f);
        sw.write_variable(g.data());
      }
    }
    sw.close();
    if (c.strategy == "file-per-process") {
      for (int r = 0; r < nranks; ++r) {
        serafin::Reader pr(path + partel::suffix(nranks, r));
        if (pr.frame_count() != nframes) failure += "rank " + std::to_string(r) + ": wrong frame count; ";
        auto knolg = pr.read_ipobo();
        if (knolg != parts[static_cast<std::size_t>(r)]) failure += "rank " + std::to_string(r) + ": wrong KNOLG; ";
        // Every record of the rank's file: header, coordinates, times and every value.
        const auto& ph = pr.header();
        if (ph.title != h.title_for_output() || ph.npoin != static_cast<std::int64_t>(knolg.size()) || ph.nvar() != 3 ||
            ph.precision != c.precision || ph.byte_order != c.order || ph.date != h.date)
          failure += "rank " + std::to_string(r) + ": wrong header; ";
        const Mesh pm = pr.read_mesh();
        auto stored = [&](double x) { return c.precision == Precision::Single ? static_cast<double>(static_cast<float>(x)) : x; };
        for (std::size_t i = 0; i < knolg.size(); ++i)
          if (pm.x[i] != stored(m.x[static_cast<std::size_t>(knolg[i] - 1)]) || pm.y[i] != stored(m.y[static_cast<std::size_t>(knolg[i] - 1)])) {
            failure += "rank " + std::to_string(r) + ": wrong coordinates; ";
            break;
          }
        std::vector<double> lv(knolg.size());
        const auto times = pr.read_times();
        for (int f = 0; f < nframes; ++f) {
          if (times[static_cast<std::size_t>(f)] != f * 10.0) failure += "rank " + std::to_string(r) + ": wrong time; ";
          for (int v = 0; v < 3 && !knolg.empty(); ++v) {
            pr.read_values(f, v, lv.data());
            for (std::size_t i = 0; i < knolg.size(); ++i)
              if (std::abs(lv[i] - value(knolg[i] - 1, v, f)) > (c.precision == Precision::Single ? 1e-3 : 1e-12)) {
                failure += "rank " + std::to_string(r) + ": wrong value; ";
                break;
              }
          }
        }
      }
    } else if (hdf5) {
#ifdef ANABRANCH_HAVE_HDF5
      // Everything read back from HDF5 and written as SERAFIN: the serial writer's bytes.
      pio::vtkhdf::Input in(path);
      if (in.frame_count() != nframes) failure += "wrong frame count; ";
      const std::string back = dir + "/back" + std::to_string(id) + ".slf";
      serafin::Writer bw(back, in.header(), in.read_mesh());
      std::vector<double> g(static_cast<std::size_t>(m.npoin));
      const auto times = in.times();
      for (std::int64_t f = 0; f < in.frame_count(); ++f) {
        bw.begin_frame(times[static_cast<std::size_t>(f)]);
        for (int v = 0; v < in.header().nvar(); ++v) {
          in.read_values(f, v, 0, m.npoin, g.data());
          bw.write_variable(g.data());
        }
      }
      bw.close();
      if (bytes_of(back) != bytes_of(ref)) failure += "HDF5 -> SERAFIN differs from the serial writer's file";
#endif
    } else if (bytes_of(path) != bytes_of(ref)) {
      failure = "the shared file differs from the serial writer's";
    }
  } catch (const std::exception& e) {
    failure = e.what();
  }
  int n = static_cast<int>(failure.size());
  MPI_Bcast(&n, 1, MPI_INT, 0, MPI_COMM_WORLD);
  failure.resize(static_cast<std::size_t>(n));
  MPI_Bcast(failure.data(), n, MPI_CHAR, 0, MPI_COMM_WORLD);
  EXPECT_EQ(failure, "") << c.strategy << " case " << id;
}

}  // namespace

TEST(ParallelWriter, EveryStrategyWritesTheSerialBytes) {
  const std::string dir = shared_temp_dir();
  int id = 0;
  std::vector<std::string> strategies = {"independent", "collective", "aggregated", "aggregated-async", "file-per-process"};
#ifdef ANABRANCH_HAVE_HDF5
  strategies.push_back("hdf5");
#endif
  for (const std::string& s : strategies) {
    const std::vector<Case> cases = {
        {s, Decomposition::Random, Precision::Single, ByteOrder::Big, 1, 16 << 20},
        {s, Decomposition::Partition, Precision::Double, ByteOrder::Little, 1, 16 << 20},
        {s, Decomposition::EmptyLast, Precision::Single, ByteOrder::Big, 3, 16 << 20},
        {s, Decomposition::Partition, Precision::Single, ByteOrder::Big, 4, 2048},  // many aggregation rounds
        // Every value by MPI messages, as between nodes (the path writers on other nodes take).
        {s, Decomposition::Random, Precision::Double, ByteOrder::Big, 1, 4096, false},
        {s, Decomposition::EmptyLast, Precision::Single, ByteOrder::Little, 3, 16 << 20, false},
        // One writer, and three taking turns (more writers than ranks at 1 and 2 ranks).
        {s, Decomposition::Partition, Precision::Double, ByteOrder::Big, 1, 16 << 20, true, 1},
        {s, Decomposition::Random, Precision::Single, ByteOrder::Big, 3, 3000, true, 3},
    };
    for (const auto& c : cases) {
      SCOPED_TRACE(s + " case " + std::to_string(id));
      run_case(c, dir, id++);
    }
  }
  if (rank_of() == 0) std::filesystem::remove_all(dir);
}

// The documented ownership rule: a node held by several ranks is written by the lowest of
// them (the highest with owner=highest, gretel's rule). Each rank writes values of its own
// (rank-dependent) on shared nodes, and the file must hold the lowest (highest) holder's.
TEST(ParallelWriter, TheLowestRankHoldingANodeWritesIt) {
  const std::string dir = shared_temp_dir();
  const int rank = rank_of(), nranks = size_of();
  ChannelOptions o;
  o.elements = 1500;
  const Mesh m = make_channel(o).mesh;
  serafin::Header h;
  h.precision = Precision::Double;
  h.set_title("ownership");
  h.variables = synthetic_variables(2, false);
  h.set_mesh_sizes(m);
  // Every node on a random rank, a fifth of them also on another (lower or higher).
  const auto parts = decompose(m, Decomposition::Random, nranks, 99u);
  std::vector<int> lowest(static_cast<std::size_t>(m.npoin), nranks), highest(static_cast<std::size_t>(m.npoin), -1);
  for (int r = nranks - 1; r >= 0; --r)
    for (auto g : parts[static_cast<std::size_t>(r)]) lowest[static_cast<std::size_t>(g - 1)] = r;
  for (int r = 0; r < nranks; ++r)
    for (auto g : parts[static_cast<std::size_t>(r)]) highest[static_cast<std::size_t>(g - 1)] = r;
  const auto& mine = parts[static_cast<std::size_t>(rank)];
  const auto nloc = static_cast<std::int64_t>(mine.size());
  auto mark = [](std::int64_t g, int v, int r) { return value(g, v, 0) + 1000.0 * (r + 1); };
  std::vector<std::vector<double>> vals(2, std::vector<double>(static_cast<std::size_t>(nloc)));
  for (int v = 0; v < 2; ++v)
    for (std::int64_t i = 0; i < nloc; ++i) vals[static_cast<std::size_t>(v)][static_cast<std::size_t>(i)] = mark(mine[static_cast<std::size_t>(i)] - 1, v, rank);
  std::vector<const double*> ptrs = {vals[0].data(), vals[1].data()};
  std::vector<pio::WriterOptions> variants;
  for (const std::string s : {"independent", "collective", "aggregated", "aggregated-async"}) {
    pio::WriterOptions opt;
    opt.strategy = s;
    variants.push_back(opt);
    opt.owner_highest = true;
    variants.push_back(opt);
    opt.buffer_bytes = 2048;  // many rounds
    opt.shared_memory = false;  // by MPI messages, as between nodes
    variants.push_back(opt);
    opt.owner_highest = false;
    variants.push_back(opt);
  }
#ifdef ANABRANCH_HAVE_HDF5
  variants.push_back(pio::WriterOptions{});
  variants.back().strategy = "hdf5";
  variants.push_back(variants.back());
  variants.back().owner_highest = true;
#endif
  int id = 0;
  for (const auto& opt : variants) {
    const bool hdf5 = opt.strategy == "hdf5";
    const std::string path = dir + "/own" + std::to_string(id++) + (hdf5 ? ".h5" : ".slf");
    pio::OutputDescription out;
    out.header = h;
    if (rank == 0) out.mesh = &m;
    {
      pio::Writer w(MPI_COMM_WORLD, path, out, mine.data(), nloc, opt);
      w.write_frame(0.0, ptrs.data());
      w.close();
    }
    MPI_Barrier(MPI_COMM_WORLD);
    std::string failure;
    if (rank == 0) try {
      std::vector<double> got(static_cast<std::size_t>(m.npoin));
      for (int v = 0; v < 2; ++v) {
        if (hdf5) {
#ifdef ANABRANCH_HAVE_HDF5
          pio::vtkhdf::Input(path).read_values(0, v, 0, m.npoin, got.data());
#endif
        } else {
          serafin::Reader(path).read_values(0, v, got.data());
        }
        const auto& owner = opt.owner_highest ? highest : lowest;
        for (std::int64_t g = 0; g < m.npoin; ++g)
          if (got[static_cast<std::size_t>(g)] != mark(g, v, owner[static_cast<std::size_t>(g)])) {
            failure = "node " + std::to_string(g + 1) + " holds " + std::to_string(got[static_cast<std::size_t>(g)]) +
                      ", not rank " + std::to_string(owner[static_cast<std::size_t>(g)]) + "'s value" +
                      (opt.owner_highest ? " (owner=highest)" : "");
            break;
          }
      }
    } catch (const std::exception& e) {
      failure = e.what();
    }
    int n = static_cast<int>(failure.size());
    MPI_Bcast(&n, 1, MPI_INT, 0, MPI_COMM_WORLD);
    failure.resize(static_cast<std::size_t>(n));
    MPI_Bcast(failure.data(), n, MPI_CHAR, 0, MPI_COMM_WORLD);
    EXPECT_EQ(failure, "") << opt.strategy << " buffer " << opt.buffer_bytes << (opt.shared_memory ? "" : " by messages");
  }
  if (rank == 0) std::filesystem::remove_all(dir);
}

// Hints given in the options and in ANABRANCH_MPIIO_HINTS reach the opened file (the
// options win), for every MPI-IO strategy.
TEST(ParallelWriter, HintsReachTheFile) {
  const std::string dir = shared_temp_dir();
  const int rank = rank_of();
  ChannelOptions o;
  o.elements = 200;
  const Mesh m = make_channel(o).mesh;
  serafin::Header h;
  h.set_title("hints");
  h.variables = synthetic_variables(1, false);
  h.set_mesh_sizes(m);
  std::vector<std::int32_t> all;
  if (rank == 0)
    for (std::int64_t g = 1; g <= m.npoin; ++g) all.push_back(static_cast<std::int32_t>(g));
  pio::OutputDescription out;
  out.header = h;
  if (rank == 0) out.mesh = &m;
  ::setenv("ANABRANCH_MPIIO_HINTS", "cb_buffer_size=8388608,cb_nodes=2", 1);
  const auto names = pio::gather_host_names(MPI_COMM_WORLD);
  const std::size_t hosts = std::set<std::string>(names.begin(), names.end()).size();
  (void)hosts;
  for (const std::string s : {"independent", "collective", "aggregated"}) {
    const auto opt = pio::WriterOptions::parse("strategy=" + s + " cb_nodes=4 striping_unit=1048576");
    pio::Writer w(MPI_COMM_WORLD, dir + "/h-" + s + ".slf", out, all.data(), static_cast<std::int64_t>(all.size()), opt);
    if (rank == 0) {
      const auto hints = w.file_hints();
      auto at = [&](const char* k) { return hints.count(k) ? hints.at(k) : std::string("(absent)"); };
#ifdef MPICH_VERSION
      EXPECT_EQ(at("cb_nodes"), std::to_string(std::min<std::size_t>(4, hosts))) << s;  // ROMIO: at most one per host
#else
      EXPECT_EQ(at("cb_nodes"), "4") << s;
#endif
      EXPECT_EQ(at("striping_unit"), "1048576") << s;
      EXPECT_EQ(at("cb_buffer_size"), "8388608") << s;
    }
    w.close();
  }
  ::unsetenv("ANABRANCH_MPIIO_HINTS");
  if (rank == 0) std::filesystem::remove_all(dir);
}

TEST(ParallelWriter, FailuresAreAgreedAcrossRanks) {
  const int rank = rank_of();
  ChannelOptions o;
  o.elements = 200;
  const Mesh m = make_channel(o).mesh;
  serafin::Header h;
  h.set_title("x");
  h.variables = synthetic_variables(1, false);
  h.set_mesh_sizes(m);
  std::vector<std::int32_t> ids;
  if (rank == 0)
    for (std::int64_t g = 1; g <= m.npoin; ++g) ids.push_back(static_cast<std::int32_t>(g));
  if (rank == size_of() - 1) ids.push_back(static_cast<std::int32_t>(m.npoin + 5));  // out of range on one rank
  pio::OutputDescription out;
  out.header = h;
  out.mesh = &m;
  // Every rank throws (none hangs), naming the failing rank's reason.
  try {
    pio::Writer w(MPI_COMM_WORLD, "/nonexistent-dir/x.slf", out, ids.data(), static_cast<std::int64_t>(ids.size()));
    FAIL() << "expected an error";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("outside 1.."), std::string::npos) << e.what();
  }
  // An unwritable path fails on every rank too.
  std::vector<std::int32_t> all;
  if (rank == 0)
    for (std::int64_t g = 1; g <= m.npoin; ++g) all.push_back(static_cast<std::int32_t>(g));
  std::vector<std::string> failing = {"aggregated", "collective"};
#ifdef ANABRANCH_HAVE_HDF5
  failing.push_back("hdf5");
#endif
  for (const auto& s : failing) {
    pio::WriterOptions opt;
    opt.strategy = s;
    EXPECT_THROW(pio::Writer(MPI_COMM_WORLD, "/nonexistent-dir/x.slf", out, all.data(), static_cast<std::int64_t>(all.size()), opt),
                 IoError) << s;  // the system refused the open, whatever the strategy
  }
  // A node nobody holds.
  std::vector<std::int32_t> partial;
  if (rank == 0)
    for (std::int64_t g = 2; g <= m.npoin; ++g) partial.push_back(static_cast<std::int32_t>(g));
  EXPECT_THROW(pio::Writer(MPI_COMM_WORLD, "/tmp/never.slf", out, partial.data(), static_cast<std::int64_t>(partial.size())),
               UsageError);
  pio::WriterOptions bad;
  bad.strategy = "no-such-strategy";
  EXPECT_THROW(pio::Writer(MPI_COMM_WORLD, "/tmp/never.slf", out, all.data(), static_cast<std::int64_t>(all.size()), bad), UsageError);
}

// A layout whose runs overlap on one rank (a layout's bug): the collective writer and reader
// take part in every round with an empty view there, and every rank fails after the frame,
// none left waiting inside MPI_File_set_view.
TEST(Engine, RunsThatOverlapOnOneRankFailOnEveryRankWithoutAHang) {
  struct Overlapping final : pio::FrameLayout {
    int value_bytes() const override { return 8; }
    std::int64_t frame_bytes() const override { return 8 * 4 * size_of(); }
    void for_each_run(const std::function<void(const pio::Run&)>& f) const override {
      const std::int64_t mine = 8 * 4 * rank_of();
      f({mine, 4, 0, 0});
      if (rank_of() == size_of() - 1) f({mine + 8, 1, 0, 1});  // over the first run's second value
    }
    std::pair<std::int64_t, std::int64_t> locate(std::int64_t frame, std::int64_t at) const override {
      return {frame * frame_bytes() + at, frame_bytes() - at};
    }
  } layout;
  const std::string shared = pio::broadcast(MPI_COMM_WORLD, "/tmp/ab-overlap-" + std::to_string(::getpid()));
  const double values[4] = {1, 2, 3, 4};
  const double* arrays[1] = {values};
  const pio::ArrayEncoder<double> encoder(arrays, 8);
  pio::StrategySetup s;
  s.comm = MPI_COMM_WORLD;
  s.path = s.final_path = shared;
  s.frame = &layout;
  auto strategy = pio::make_strategy("collective");
  strategy->open(s);
  try {
    strategy->write({0, 0.0, &encoder, nullptr});
    FAIL() << "expected an error";
  } catch (const MpiError& e) {
    EXPECT_NE(std::string(e.what()).find("overlap"), std::string::npos) << e.what();
  }
  strategy->close();
  MPI_File fh = pio::open_input_file(MPI_COMM_WORLD, shared, {});
  double out[4];
  double* outs[1] = {out};
  pio::RunReading how;
  how.mode = pio::RunReading::Mode::Collective;
  {
    pio::RunReader reader(MPI_COMM_WORLD, fh, shared, layout, how);
    EXPECT_THROW(reader.read(0, pio::ArrayDecoder<double>(outs, 8)), MpiError);
  }
  MPI_File_close(&fh);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank_of() == 0) std::filesystem::remove(shared);
}

TEST(Hints, ParseTakesPairsSeparatedBySpacesOrCommas) {
  const auto h = pio::Hints::parse(" cb_nodes=4,striping_unit=1048576  romio_cb_write=enable,,empty=");
  const std::map<std::string, std::string> want = {
      {"cb_nodes", "4"}, {"striping_unit", "1048576"}, {"romio_cb_write", "enable"}, {"empty", ""}};
  EXPECT_EQ(h.entries(), want);
  EXPECT_EQ(h.str(), "cb_nodes=4,empty=,romio_cb_write=enable,striping_unit=1048576");
  EXPECT_TRUE(pio::Hints::parse("").entries().empty());
  for (const char* bad : {"cb_nodes", "=4", "a=1 b"}) {
    try {
      pio::Hints::parse(bad);
      ADD_FAILURE() << bad;
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find("is not key=value"), std::string::npos) << e.what();
    }
  }
  auto merged = pio::Hints::parse("a=1 b=2");
  merged.merge(pio::Hints::parse("b=3 c=4"));
  EXPECT_EQ(merged.str(), "a=1,b=3,c=4");
}

TEST(WriterOptions, WritersPerNodeIsAutoOrANumber) {
  EXPECT_EQ(pio::WriterOptions::parse("").writers_per_node, 0);
  EXPECT_EQ(pio::WriterOptions::parse("writers_per_node=auto").writers_per_node, 0);
  EXPECT_EQ(pio::WriterOptions::parse("writers_per_node=3").writers_per_node, 3);
  EXPECT_THROW(pio::WriterOptions::parse("writers_per_node=-1"), UsageError);
  EXPECT_THROW(pio::WriterOptions::parse("writers_per_node=many"), UsageError);
  // auto on a node-local file system, the same on every rank: two writers taking turns
  // (one if the node has one rank). The nodes as the library sees them (emulated nodes
  // included): each rank's place on its node.
  MPI_Comm node = pio::split_node(MPI_COMM_WORLD);
  int node_rank = 0, node_size = 1;
  MPI_Comm_rank(node, &node_rank);
  MPI_Comm_size(node, &node_size);
  std::vector<int> place(static_cast<std::size_t>(size_of()));
  MPI_Allgather(&node_rank, 1, MPI_INT, place.data(), 1, MPI_INT, MPI_COMM_WORLD);
  int most = node_size;
  MPI_Allreduce(MPI_IN_PLACE, &most, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  auto first = [&](int k) {  // the first k ranks of every node
    std::vector<int> v;
    for (int r = 0; r < size_of(); ++r)
      if (place[static_cast<std::size_t>(r)] < k) v.push_back(r);
    return v;
  };
  const int two = std::min(2, most);
  EXPECT_EQ(pio::auto_writers_per_node(MPI_COMM_WORLD, node, "/tmp/x.slf"), two);
  auto t = pio::choose_writers(MPI_COMM_WORLD, node, 0, "/tmp/x.slf");
  EXPECT_EQ(t.ranks, first(two));
  EXPECT_EQ(t.is_writer, node_rank < 2);
  if (t.is_writer) EXPECT_EQ(t.ranks[static_cast<std::size_t>(t.index)], rank_of());
  // Readers: every rank of the node.
  auto r = pio::choose_writers(MPI_COMM_WORLD, node, 0, "/tmp/x.slf", pio::Aggregators::Readers);
  EXPECT_TRUE(r.is_writer);
  EXPECT_EQ(static_cast<int>(r.ranks.size()), size_of());
  EXPECT_EQ(r.index, rank_of());
  MPI_Comm_free(&node);
}

// The nodes a test job was asked to spread over (ANABRANCH_TEST_NODES for any MPI, MPICH's
// cliques) are the nodes the library works with: the inter-node paths really run.
TEST(Topology, EmulatedNodesAreNodes) {
  const char* knob = std::getenv("ANABRANCH_TEST_NODES");
  const char* cliques = std::getenv("MPIR_CVAR_NUM_CLIQUES");
  const int asked = knob ? std::atoi(knob) : cliques ? std::atoi(cliques) : 1;
  pio::Topology topo(MPI_COMM_WORLD);
  EXPECT_EQ(topo.nodes, std::min(std::max(asked, 1), size_of()));
  int sizes = topo.node_rank == 0 ? topo.node_size : 0;
  MPI_Allreduce(MPI_IN_PLACE, &sizes, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  EXPECT_EQ(sizes, size_of());
}

TEST(WriterOptions, OwnerIsLowestOrHighest) {
  EXPECT_FALSE(pio::WriterOptions::parse("").owner_highest);
  EXPECT_FALSE(pio::WriterOptions::parse("owner=lowest").owner_highest);
  EXPECT_TRUE(pio::WriterOptions::parse("owner=highest cb_nodes=2").owner_highest);
  try {
    pio::WriterOptions::parse("owner=last");
    ADD_FAILURE() << "owner=last accepted";
  } catch (const UsageError& e) {
    EXPECT_STREQ(e.what(), "writer option owner=last: lowest or highest");
  }
}
