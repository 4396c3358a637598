// Synthetic solver loop for the parallel writer: every rank holds one part of a generated
// channel mesh (Hilbert partition, as `anabranch partition --method sfc` makes it) and
// writes F frames of K variables with each strategy. Prints one JSON line per strategy:
// seconds to open (header), write the frames, close, and sync to disk; bytes; files.
// Every shared file is checked to be the same bytes as the first strategy's.
// Usage: mpiexec -n R bench_writer --elements N --vars K --frames F --dir DIR [--strategies a,b] [--writers W]
#include <fcntl.h>
#include <mpi.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/generate.hpp"
#include "core/io.hpp"
#include "core/plan.hpp"
#include "formats/partel.hpp"
#include "partition/partitioner.hpp"
#include "pio/writer.hpp"

using namespace anabranch;

namespace {

double now() { return MPI_Wtime(); }

std::uint64_t fnv1a(const std::string& path) {
  FileSource src(path);
  std::vector<unsigned char> buf(8u << 20);
  std::uint64_t h = 1469598103934665603ULL;
  for (std::int64_t at = 0; at < src.size();) {
    const auto n = static_cast<std::size_t>(std::min<std::int64_t>(static_cast<std::int64_t>(buf.size()), src.size() - at));
    src.read_at(at, buf.data(), n);
    for (std::size_t i = 0; i < n; ++i) h = (h ^ buf[i]) * 1099511628211ULL;
    at += static_cast<std::int64_t>(n);
  }
  return h;
}

void sync_file(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY);
  if (fd >= 0) {
    ::fdatasync(fd);
    ::close(fd);
  }
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  std::int64_t elements = 2000000;
  int nvar = 4, frames = 10, writers = 1;
  std::string dir = ".", list = "file-per-process,independent,collective,aggregated,aggregated-async";
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string k = argv[i], v = argv[i + 1];
    if (k == "--elements") elements = std::atoll(v.c_str());
    else if (k == "--vars") nvar = std::atoi(v.c_str());
    else if (k == "--frames") frames = std::atoi(v.c_str());
    else if (k == "--dir") dir = v;
    else if (k == "--strategies") list = v;
    else if (k == "--writers") writers = std::atoi(v.c_str());
  }
  try {
    ChannelOptions o;
    o.elements = elements;
    const Mesh m = make_channel(o).mesh;
    auto epart = partition_sfc(m.ikle.data(), m.nelem, 3, 3, Coordinates(m.x), Coordinates(m.y), size, {});
    const Plan plan = build_plan(m.ikle.data(), m.nelem, 3, 3, m.npoin, epart, size);
    // This rank's part: KNOLG, local elements, coordinates.
    std::vector<std::int32_t> knolg;
    Mesh local;
    local.ndp = 3;
    std::vector<std::int32_t> loc(static_cast<std::size_t>(m.npoin), -1);
    for (std::int64_t i = 0; i < plan.part_npoin(rank); ++i) {
      const auto g = plan.part_knolg(rank)[i];
      knolg.push_back(g + 1);
      loc[static_cast<std::size_t>(g)] = static_cast<std::int32_t>(i);
      local.x.push_back(m.x[static_cast<std::size_t>(g)]);
      local.y.push_back(m.y[static_cast<std::size_t>(g)]);
    }
    for (std::int64_t j = 0; j < plan.part_nelem(rank); ++j)
      for (int k = 0; k < 3; ++k)
        local.ikle.push_back(loc[static_cast<std::size_t>(m.ikle[static_cast<std::size_t>(plan.part_elems(rank)[j] * 3 + k)] - 1)] + 1);
    local.nelem = plan.part_nelem(rank);
    const auto nloc = static_cast<std::int64_t>(knolg.size());
    serafin::Header h;
    h.set_title("anabranch writer benchmark");
    h.variables = synthetic_variables(nvar, false);
    h.iparam[0] = 1;
    h.set_mesh_sizes(m);
    std::vector<std::vector<float>> vals(static_cast<std::size_t>(nvar), std::vector<float>(static_cast<std::size_t>(nloc)));
    std::vector<const float*> ptrs;
    for (auto& v : vals) ptrs.push_back(v.data());
    const auto layout = serafin::Layout::of(h);
    std::uint64_t reference = 0;
    std::size_t start = 0;
    while (start <= list.size()) {
      std::size_t comma = list.find(',', start);
      if (comma == std::string::npos) comma = list.size();
      const std::string strategy = list.substr(start, comma - start);
      start = comma + 1;
      if (strategy.empty()) continue;
      const std::string path = dir + "/bench-" + strategy + ".slf";
      pio::OutputDescription out;
      out.header = h;
      out.mesh = rank == 0 ? &m : nullptr;
      out.local_mesh = &local;
      pio::WriterOptions opt;
      opt.strategy = strategy;
      opt.writers_per_node = writers;
      MPI_Barrier(MPI_COMM_WORLD);
      const double t0 = now();
      pio::Writer w(MPI_COMM_WORLD, path, out, knolg.data(), nloc, opt);
      MPI_Barrier(MPI_COMM_WORLD);
      const double t1 = now();
      double compute = 0;
      for (int f = 0; f < frames; ++f) {
        const double c0 = now();
        for (int v = 0; v < nvar; ++v)
          for (std::int64_t i = 0; i < nloc; ++i)
            vals[static_cast<std::size_t>(v)][static_cast<std::size_t>(i)] = static_cast<float>(knolg[static_cast<std::size_t>(i)] * 0.001 + v + f);
        compute += now() - c0;
        w.write_frame(f * 1.0, ptrs.data());
      }
      MPI_Barrier(MPI_COMM_WORLD);
      const double t2 = now();
      w.close();
      MPI_Barrier(MPI_COMM_WORLD);
      const double t3 = now();
      if (strategy == "file-per-process")
        sync_file(path + partel::suffix(size, rank));
      else if (rank == 0)
        sync_file(path);
      MPI_Barrier(MPI_COMM_WORLD);
      const double t4 = now();
      if (rank == 0) {
        std::int64_t bytes = 0;
        bool same = true;
        if (strategy == "file-per-process") {
          for (int r = 0; r < size; ++r) bytes += file_size(path + partel::suffix(size, r));
        } else if (strategy != "null") {
          bytes = file_size(path);
          const std::uint64_t hsh = fnv1a(path);
          if (reference == 0) reference = hsh;
          same = hsh == reference;
        }
        std::printf(
            "{\"strategy\": \"%s\", \"ranks\": %d, \"npoin\": %lld, \"vars\": %d, \"frames\": %d, \"frame_bytes\": %lld, "
            "\"bytes\": %lld, \"files\": %d, \"open\": %.4f, \"write\": %.4f, \"close\": %.4f, \"sync\": %.4f, "
            "\"compute\": %.4f, \"verified\": %s}\n",
            strategy.c_str(), size, static_cast<long long>(m.npoin), nvar, frames, static_cast<long long>(layout.frame_bytes),
            static_cast<long long>(bytes), w.files_created(), t1 - t0, t2 - t1 - compute, t3 - t2, t4 - t3, compute,
            same ? "true" : "false");
        std::fflush(stdout);
      }
      // Remove the files before the next strategy (keep the page cache comparable).
      MPI_Barrier(MPI_COMM_WORLD);
      if (strategy == "file-per-process")
        ::unlink((path + partel::suffix(size, rank)).c_str());
      else if (rank == 0)
        ::unlink(path.c_str());
      MPI_Barrier(MPI_COMM_WORLD);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_writer: rank %d: %s\n", rank, e.what());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  MPI_Finalize();
  return 0;
}
