// Writes K frames through the parallel writer, then every rank dies without closing (as a
// killed run would). The file must read back K complete frames.
// Usage: writer_crash OUTPUT STRATEGY FRAMES
#include <mpi.h>
#include <unistd.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "grid/generate.hpp"
#include "layouts/writer.hpp"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  using namespace anabranch;
  ChannelOptions o;
  o.elements = 4000;
  const Mesh m = make_channel(o).mesh;
  serafin::Header h;
  h.set_title("crash test");
  h.variables = synthetic_variables(2, false);
  h.iparam[0] = 1;
  h.set_mesh_sizes(m);
  std::vector<std::int32_t> ids;
  for (std::int64_t g = rank; g < m.npoin; g += size) ids.push_back(static_cast<std::int32_t>(g + 1));
  pio::OutputDescription out;
  out.header = h;
  out.mesh = &m;
  // "aggregated", or a strategy with options: "hdf5 flush_frames=1".
  const pio::WriterOptions opt = pio::WriterOptions::parse(std::string("strategy=") + argv[2]);
  pio::Writer w(MPI_COMM_WORLD, argv[1], out, ids.data(), static_cast<std::int64_t>(ids.size()), opt);
  std::vector<double> a(ids.size(), 1.0), b(ids.size(), 2.0);
  const double* v[2] = {a.data(), b.data()};
  for (int f = 0; f < std::atoi(argv[3]); ++f) w.write_frame(f * 1.0, v);
  MPI_Barrier(MPI_COMM_WORLD);
  _exit(0);  // no close, no MPI_Finalize
}
