// The TecIO side of bench/tecplot.py: Tecplot's own library writing the zones bench_cgns
// writes (Z ordered zones of n x n x n points, X, Y, Z and V variables of F frames, double
// precision, values value() below; the later frames share X, Y, Z with the first), block
// packing, through TecIO's classic API (tecini142, teczne142, tecdat142, tecend142). TecIO
// is built outside the repository (its licence keeps it out); bench/tecplot.py compiles this
// file against it:
//
//   g++    -I$TECIO/include tecio_bench.cpp $TECIO/lib/libtecio.a -lpthread -o tecio_bench
//   mpicxx -DTECIOMPI -I$TECIO/include tecio_bench.cpp $TECIO/lib/libteciompi.a -lpthread -o tecio_mpi_bench
//
//   tecio_bench FILE.plt|FILE.szplt ZONES n V F          (one process: serial TecIO, .plt or .szplt)
//   mpiexec -n P tecio_mpi_bench FILE.szplt ZONES n V F  (TecIO-MPI: zone z written by rank z * P / Z,
//                                                        its main rank, 0, told each zone's owner)
//
// Prints one JSON object: seconds (tecini142 to tecend142) and seconds_to_disk (and the
// file's fdatasync), bytes (the arrays' bytes), file_bytes.
#ifdef TECIOMPI
#include <mpi.h>
#endif
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "TECIO.h"

namespace {

double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

// bench_cgns's values: array a of zone z at point i (a 0..2 X, Y, Z; 3 + f * V + v).
double value(long long z, int a, long long i) { return static_cast<double>(i) + 1000.0 * a + 1e-3 * static_cast<double>(z); }

void fail(const char* what, long long zone) {
  std::fprintf(stderr, "tecio_bench: %s failed (zone %lld)\n", what, zone);
#ifdef TECIOMPI
  MPI_Abort(MPI_COMM_WORLD, 1);
#endif
  std::exit(1);
}

}  // namespace

int main(int argc, char** argv) {
  int rank = 0, size = 1;
#ifdef TECIOMPI
  MPI_Init(&argc, &argv);
  MPI_Comm comm = MPI_COMM_WORLD;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
#endif
  if (argc < 6) {
    if (rank == 0) std::fprintf(stderr, "usage: tecio_bench FILE.plt|FILE.szplt ZONES n V F\n");
    return 2;
  }
  const std::string path = argv[1];
  const long long zones = std::atoll(argv[2]), n = std::atoll(argv[3]);
  const int vars = std::atoi(argv[4]), frames = std::atoi(argv[5]);
  const bool szplt = path.size() > 6 && path.compare(path.size() - 6, 6, ".szplt") == 0;
  const long long points = n * n * n, first = zones * rank / size, last = zones * (rank + 1) / size;
  // This rank's zones' arrays, made before the clock starts: [(z - first) * A + a]
  const int arrays = 3 + vars * frames;
  std::vector<std::vector<double>> q(static_cast<std::size_t>((last - first) * arrays), std::vector<double>(static_cast<std::size_t>(points)));
  for (long long z = first; z < last; ++z)
    for (int a = 0; a < arrays; ++a)
      for (long long i = 0; i < points; ++i) q[static_cast<std::size_t>((z - first) * arrays + a)][static_cast<std::size_t>(i)] = value(z, a, i);
  std::string names = "X Y Z";
  for (int v = 0; v < vars; ++v) names += " q" + std::to_string(v);
  const std::string folder = path.find('/') == std::string::npos ? "." : path.substr(0, path.find_last_of('/'));

  INTEGER4 format = szplt ? 1 : 0, type = 0, debug = 0, vdouble = 1, isdouble = 1;
  INTEGER4 zone_type = 0, imax = static_cast<INTEGER4>(n), jmax = imax, kmax = imax, icell = 0, jcell = 0, kcell = 0;
  INTEGER4 parent = 0, block = 1, nfconns = 0, fnmode = 0, facenodes = 0, bndryfaces = 0, bndryconns = 0, shareconn = 0;
  INTEGER4 count = static_cast<INTEGER4>(points), one = 1;
  std::vector<INTEGER4> share(static_cast<std::size_t>(3 + vars), 0);
#ifdef TECIOMPI
  MPI_Barrier(comm);
#endif
  const double t0 = now();
  if (tecini142("bench", names.c_str(), path.c_str(), folder.c_str(), &format, &type, &debug, &vdouble) != 0) fail("tecini142", 0);
#ifdef TECIOMPI
  INTEGER4 main_rank = 0;
  if (tecmpiinit142(&comm, &main_rank) != 0) fail("tecmpiinit142", 0);
#endif
  for (int f = 0; f < frames; ++f)
    for (long long z = 0; z < zones; ++z) {
      double time = 0.1 * f;
      INTEGER4 strand = static_cast<INTEGER4>(z + 1);
      for (int c = 0; c < 3; ++c) share[static_cast<std::size_t>(c)] = f > 0 ? static_cast<INTEGER4>(z + 1) : 0;
      const std::string title = "block " + std::to_string(z + 1);
      if (teczne142(title.c_str(), &zone_type, &imax, &jmax, &kmax, &icell, &jcell, &kcell, &time, &strand, &parent, &block, &nfconns,
                    &fnmode, &facenodes, &bndryfaces, &bndryconns, nullptr, nullptr, f > 0 ? share.data() : nullptr, &shareconn) != 0)
        fail("teczne142", z + 1);
#ifdef TECIOMPI
      INTEGER4 owner = static_cast<INTEGER4>(z * size / zones);
      while (owner + 1 < size && zones * (owner + 1) / size <= z) ++owner;
      while (owner > 0 && zones * owner / size > z) --owner;
      if (tecznemap142(&one, &owner) != 0) fail("tecznemap142", z + 1);
      if (owner != rank) continue;
#else
      (void)one;
#endif
      for (int a = f > 0 ? 3 : 0; a < 3 + vars; ++a) {
        const int at = a < 3 ? a : 3 + f * vars + (a - 3);
        if (tecdat142(&count, q[static_cast<std::size_t>((z - first) * arrays + at)].data(), &isdouble) != 0) fail("tecdat142", z + 1);
      }
    }
  if (tecend142() != 0) fail("tecend142", 0);
#ifdef TECIOMPI
  MPI_Barrier(comm);
#endif
  const double t1 = now();
  double t2 = t1;
  struct stat st {};
  if (rank == 0) {
    const int fd = ::open(path.c_str(), O_RDONLY);
    if (fd >= 0) ::fdatasync(fd), ::close(fd);
    t2 = now();
    ::stat(path.c_str(), &st);
    std::printf("{\"variant\": \"%s\", \"ranks\": %d, \"zones\": %lld, \"points\": %lld, \"vars\": %d, \"frames\": %d, \"bytes\": %lld, "
                "\"file_bytes\": %lld, \"seconds\": %.6f, \"seconds_to_disk\": %.6f}\n",
                szplt ? (size > 1 ? "tecio-mpi-szplt" : "tecio-szplt") : "tecio-plt", size, zones, n, vars, frames,
                zones * points * 8 * arrays, static_cast<long long>(st.st_size), t1 - t0, t2 - t0);
  }
#ifdef TECIOMPI
  MPI_Finalize();
#endif
  return 0;
}
