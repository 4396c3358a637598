// One variant of the CGNS benchmark (bench/cgns.py runs them side by side, with CGNS's own
// parallel library, pcgns, in bench/pcgns_bench.c): Z zones of n x n x n points, zone z
// held by rank z * P / Z, its coordinates and V variables of F frames, double precision.
//
//   mpiexec -n 2 bench_cgns VARIANT FILE --zones 32768 --points 8 --vars 5 --frames 1
//
// Variants: ceiling (plain pwrite of the same bytes, each rank its zones' bytes as one
// range of a shared file), anabranch (the block writer: CGNS for a .cgns FILE, anabranch's
// block HDF5 for .h5; --options for the strategy, default the writer's: independent), read-pread (plain pread of each rank's range of the
// ceiling's file), read-anabranch (the block reader: each rank its zones, any rank count,
// any writer's file). A reader checks every value (value() below, what both writers write).
// Prints one JSON object: seconds (write or read; a write also to disk with fdatasync).
#include <fcntl.h>
#include <mpi.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "layouts/block_io.hpp"

using namespace anabranch;

namespace {

double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

void check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "bench_cgns: %s failed\n", what);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
}

// Array a of zone z at point i: a 0..2 the coordinates, 3 + f * V + v variable v of frame f.
double value(std::int64_t z, int a, std::int64_t i) { return static_cast<double>(i) + 1000.0 * a + 1e-3 * static_cast<double>(z); }

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (argc < 3) {
    if (rank == 0) std::fprintf(stderr, "usage: bench_cgns VARIANT FILE [--zones Z] [--points n] [--vars V] [--frames F] [--options TEXT]\n");
    MPI_Finalize();
    return 2;
  }
  const std::string v = argv[1], path = argv[2];
  std::int64_t zones = 64, n = 8;
  int vars = 5, frames = 1;
  std::string options;
  for (int i = 3; i + 1 < argc; i += 2) {
    const std::string k = argv[i];
    if (k == "--zones") zones = std::atoll(argv[i + 1]);
    else if (k == "--points") n = std::atoll(argv[i + 1]);
    else if (k == "--vars") vars = std::atoi(argv[i + 1]);
    else if (k == "--frames") frames = std::atoi(argv[i + 1]);
    else if (k == "--options") options = argv[i + 1];
  }
  const std::int64_t first = zones * rank / size, last = zones * (rank + 1) / size, points = n * n * n;
  const int arrays = 3 + frames * vars;
  const std::int64_t zone_bytes = points * 8 * arrays, bytes = zones * zone_bytes;
  BlockLayout l;
  for (std::int64_t z = 0; z < zones; ++z) l.blocks.push_back({z + 1, {n, n, n}});
  for (std::int64_t z = first; z < last; ++z) l.pieces.push_back({z, {{{0, n}, {0, n}, {0, n}}}});
  const auto mine = static_cast<std::size_t>(last - first);
  // This rank's arrays: arrays[(z - first) * A + a]
  std::vector<std::vector<double>> q(mine * static_cast<std::size_t>(arrays), std::vector<double>(static_cast<std::size_t>(points)));
  const bool reading = v.rfind("read-", 0) == 0;
  if (!reading)
    for (std::size_t p = 0; p < mine; ++p)
      for (int a = 0; a < arrays; ++a)
        for (std::int64_t i = 0; i < points; ++i) q[p * static_cast<std::size_t>(arrays) + static_cast<std::size_t>(a)][static_cast<std::size_t>(i)] = value(first + static_cast<std::int64_t>(p), a, i);
  // Pointers: the grid (3 per zone), then each frame's (V per zone).
  auto pointers = [&](int a0, int count) {
    std::vector<double*> out;
    for (std::size_t p = 0; p < mine; ++p)
      for (int a = a0; a < a0 + count; ++a) out.push_back(q[p * static_cast<std::size_t>(arrays) + static_cast<std::size_t>(a)].data());
    return out;
  };
  std::vector<std::string> names;
  for (int k = 0; k < vars; ++k) names.push_back("q" + std::to_string(k));

  double t_disk = 0, t_open = 0, t_grid = 0;  // a read: its open (the file's description), then its grid
  MPI_Barrier(MPI_COMM_WORLD);
  const double t0 = now();
  try {
    if (v == "ceiling" || v == "read-pread") {
      const int fd = v == "ceiling" ? ::open(path.c_str(), O_WRONLY | O_CREAT, 0644) : ::open(path.c_str(), O_RDONLY);
      check(fd >= 0, "open");
      std::int64_t at = first * zone_bytes;
      for (auto& x : q) {  // one call per array, as a solver's arrays are apart in memory
        const auto nb = static_cast<std::size_t>(points * 8);
        const ssize_t done = v == "ceiling" ? ::pwrite(fd, x.data(), nb, at) : ::pread(fd, x.data(), nb, at);
        check(done == static_cast<ssize_t>(nb), v == "ceiling" ? "pwrite" : "pread");
        at += points * 8;
      }
      ::close(fd);
    } else if (v == "anabranch") {
      const pio::BlockFileOptions o = pio::BlockFileOptions::parse(options);  // the format by FILE's name
      pio::BlockWriter w(MPI_COMM_WORLD, path, l, names, o);
      const auto xyz = pointers(0, 3);
      w.write_grid<double>(xyz.data());
      for (int f = 0; f < frames; ++f) {
        const auto values = pointers(3 + f * vars, vars);
        w.write_frame<double>(0.1 * f, values.data());
      }
      w.close();
    } else if (v == "read-anabranch") {
      pio::BlockFileOptions o = pio::BlockFileOptions::parse(options);
      pio::BlockReader r(MPI_COMM_WORLD, path, l, o);
      check(static_cast<int>(r.info().variables.size()) == vars, "the file's variables");
      t_open = now() - t0;
      const auto xyz = pointers(0, 3);
      r.read_grid<double>(xyz.data());
      t_grid = now() - t0;
      for (int f = 0; f < frames; ++f) {
        const auto values = pointers(3 + f * vars, vars);
        r.read_frame<double>(f, values.data());
      }
      r.close();
    } else {
      if (rank == 0) std::fprintf(stderr, "bench_cgns: unknown variant %s\n", v.c_str());
      MPI_Abort(MPI_COMM_WORLD, 2);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_cgns: %s\n", e.what());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  const double t_io = now() - t0;
  if (!reading) {
    if (rank == 0) {
      const int fd = ::open(path.c_str(), O_RDONLY);
      if (fd >= 0) ::fdatasync(fd), ::close(fd);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    t_disk = now() - t0;
  } else if (v != "read-pread") {
    std::int64_t wrong = 0;
    for (std::size_t p = 0; p < mine; ++p)
      for (int a = 0; a < arrays; ++a)
        for (std::int64_t i = 0; i < points; ++i)
          wrong += q[p * static_cast<std::size_t>(arrays) + static_cast<std::size_t>(a)][static_cast<std::size_t>(i)] != value(first + static_cast<std::int64_t>(p), a, i);
    MPI_Allreduce(MPI_IN_PLACE, &wrong, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
    if (wrong && rank == 0) std::fprintf(stderr, "bench_cgns: %lld values read wrong\n", static_cast<long long>(wrong));
    check(wrong == 0, "checking the values read");
  }
  if (rank == 0)
    std::printf("{\"variant\": \"%s\", \"ranks\": %d, \"zones\": %lld, \"points\": %lld, \"vars\": %d, \"frames\": %d, \"bytes\": %lld, "
                "\"seconds\": %.6f, \"seconds_to_disk\": %.6f, \"open_seconds\": %.6f, \"grid_seconds\": %.6f}\n",
                v.c_str(), size, static_cast<long long>(zones), static_cast<long long>(n), vars, frames, static_cast<long long>(bytes), t_io,
                t_disk, t_open, t_grid);
  MPI_Finalize();
  return 0;
}
