/* CGNS's own parallel library (pcgns) on bench/cgns.py's case, used the way its
 * documentation says: cgp_open on every rank; every rank creates every zone, its coordinate
 * and solution nodes (cg_zone_write, cgp_coord_write, cg_sol_write, cgp_field_write: the
 * tree is collective); then each rank writes (or reads) its own zones' values with
 * cgp_coord_write_data / cgp_field_write_data (cgp_*_read_data), independent I/O. Zone z
 * is rank z * P / Z's; the values are bench/cgns_bench.cpp's, so either side reads the
 * other's file. Built by bench/cgns.py against a CGNS library built with parallel HDF5
 * (outside the repository): mpicc pcgns_bench.c -I PREFIX/include -L PREFIX/lib -lcgns.
 *
 *   mpiexec -n 2 pcgns_bench write|read FILE ZONES POINTS VARS FRAMES
 *
 * Prints one JSON object, as bench_cgns does. */
#include <fcntl.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pcgnslib.h"

static void check(int status, const char* what) {
  if (status != CG_OK) {
    fprintf(stderr, "pcgns_bench: %s: %s\n", what, cg_get_error());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
}

static double value(long long z, int a, long long i) { return (double)i + 1000.0 * a + 1e-3 * (double)z; }

/* A reader finds zones, coordinates and fields by name: the library lists zones in the
 * order of their names, not the order written. */
static int find_zone(int fn, int B, long long z) {
  static int nzones = 0, *by_zone = NULL;
  if (!by_zone) {
    check(cg_nzones(fn, B, &nzones), "cg_nzones");
    by_zone = calloc((size_t)nzones + 1, sizeof(int));
    for (int Z = 1; Z <= nzones; ++Z) {
      char name[33];
      cgsize_t sizes[9];
      check(cg_zone_read(fn, B, Z, name, sizes), "cg_zone_read");
      const long long id = atoll(name + 6); /* block_<id> */
      if (id >= 1 && id <= nzones) by_zone[id] = Z;
    }
  }
  if (z + 1 > nzones || !by_zone[z + 1]) {
    fprintf(stderr, "pcgns_bench: no zone block_%lld\n", z + 1);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  return by_zone[z + 1];
}

/* Array a's index (a coordinate's C; a field's S * 1024 + F). */
static int find_array(int fn, int B, int Z, int a, int vars) {
  char name[33], want[33];
  CGNS_ENUMT(DataType_t) type;
  int n = 0;
  if (a < 3) {
    snprintf(want, sizeof want, "Coordinate%c", "XYZ"[a]);
    check(cg_ncoords(fn, B, Z, &n), "cg_ncoords");
    for (int C = 1; C <= n; ++C) {
      check(cg_coord_info(fn, B, Z, C, &type, name), "cg_coord_info");
      if (!strcmp(name, want)) return C;
    }
  } else {
    char sol[33], sname[33];
    CGNS_ENUMT(GridLocation_t) location;
    snprintf(sol, sizeof sol, "FlowSolution%06d", (a - 3) / vars);
    snprintf(want, sizeof want, "q%d", (a - 3) % vars);
    check(cg_nsols(fn, B, Z, &n), "cg_nsols");
    for (int S = 1; S <= n; ++S) {
      int nf = 0;
      check(cg_sol_info(fn, B, Z, S, sname, &location), "cg_sol_info");
      if (strcmp(sname, sol)) continue;
      check(cg_nfields(fn, B, Z, S, &nf), "cg_nfields");
      for (int F = 1; F <= nf; ++F) {
        check(cg_field_info(fn, B, Z, S, F, &type, name), "cg_field_info");
        if (!strcmp(name, want)) return S * 1024 + F;
      }
    }
  }
  fprintf(stderr, "pcgns_bench: zone %d has no %s\n", Z, want);
  MPI_Abort(MPI_COMM_WORLD, 1);
  return 0;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (argc != 7) {
    if (rank == 0) fprintf(stderr, "usage: pcgns_bench write|read FILE ZONES POINTS VARS FRAMES\n");
    MPI_Finalize();
    return 2;
  }
  const int writing = argv[1][0] == 'w';
  const char* path = argv[2];
  const long long zones = atoll(argv[3]), n = atoll(argv[4]);
  const int vars = atoi(argv[5]), frames = atoi(argv[6]), arrays = 3 + vars * frames;
  const long long first = zones * rank / size, last = zones * (rank + 1) / size, points = n * n * n;
  double* buf = malloc(sizeof(double) * (size_t)points);
  int* index = malloc(sizeof(int) * (size_t)arrays);
  const char* coord[3] = {"CoordinateX", "CoordinateY", "CoordinateZ"};
  char name[64];
  cgsize_t rmin[3] = {1, 1, 1}, rmax[3] = {n, n, n};
  long long wrong = 0;
  int fn = 0, B = 1;

  MPI_Barrier(MPI_COMM_WORLD);
  const double t0 = MPI_Wtime();
  check(cgp_mpi_comm(MPI_COMM_WORLD), "cgp_mpi_comm");
  check(cgp_pio_mode(CGP_INDEPENDENT), "cgp_pio_mode");
  check(cgp_open(path, writing ? CG_MODE_WRITE : CG_MODE_READ, &fn), "cgp_open");
  if (writing) {
    cgsize_t sizes[9] = {n, n, n, n - 1, n - 1, n - 1, 0, 0, 0};
    check(cg_base_write(fn, "Base", 3, 3, &B), "cg_base_write");
    for (long long z = 0; z < zones; ++z) { /* every rank, every zone */
      int Z = 0, C = 0, S = 0, F = 0;
      snprintf(name, sizeof name, "block_%lld", z + 1);
      check(cg_zone_write(fn, B, name, sizes, CGNS_ENUMV(Structured), &Z), "cg_zone_write");
      for (int c = 0; c < 3; ++c) check(cgp_coord_write(fn, B, Z, CGNS_ENUMV(RealDouble), coord[c], &C), "cgp_coord_write");
      for (int f = 0; f < frames; ++f) {
        snprintf(name, sizeof name, "FlowSolution%06d", f);
        check(cg_sol_write(fn, B, Z, name, CGNS_ENUMV(Vertex), &S), "cg_sol_write");
        for (int v = 0; v < vars; ++v) {
          snprintf(name, sizeof name, "q%d", v);
          check(cgp_field_write(fn, B, Z, S, CGNS_ENUMV(RealDouble), name, &F), "cgp_field_write");
        }
      }
    }
  }
  for (long long z = first; z < last; ++z) { /* each rank its own zones' values */
    int Z = (int)z + 1; /* read: the library's indices, found by name */
    if (!writing) Z = find_zone(fn, B, z);
    for (int a = 0; a < arrays && !writing; ++a) index[a] = find_array(fn, B, Z, a, vars);
    for (int a = 0; a < arrays; ++a) {
      if (writing)
        for (long long i = 0; i < points; ++i) buf[i] = value(z, a, i);
      if (a < 3) {
        if (writing) check(cgp_coord_write_data(fn, B, Z, a + 1, rmin, rmax, buf), "cgp_coord_write_data");
        else check(cgp_coord_read_data(fn, B, Z, index[a], rmin, rmax, buf), "cgp_coord_read_data");
      } else {
        const int S = (a - 3) / vars + 1, F = (a - 3) % vars + 1;
        if (writing) check(cgp_field_write_data(fn, B, Z, S, F, rmin, rmax, buf), "cgp_field_write_data");
        else check(cgp_field_read_data(fn, B, Z, index[a] / 1024, index[a] % 1024, rmin, rmax, buf), "cgp_field_read_data");
      }
      if (!writing)
        for (long long i = 0; i < points; ++i) wrong += buf[i] != value(z, a, i);
    }
  }
  check(cgp_close(fn), "cgp_close");
  MPI_Barrier(MPI_COMM_WORLD);
  const double t_io = MPI_Wtime() - t0;
  double t_disk = 0;
  if (writing) {
    if (rank == 0) {
      const int fd = open(path, O_RDONLY);
      if (fd >= 0) fdatasync(fd), close(fd);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    t_disk = MPI_Wtime() - t0;
  } else {
    MPI_Allreduce(MPI_IN_PLACE, &wrong, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (wrong) {
      if (rank == 0) fprintf(stderr, "pcgns_bench: %lld values read wrong\n", wrong);
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
  }
  if (rank == 0)
    printf("{\"variant\": \"pcgns-%s\", \"ranks\": %d, \"zones\": %lld, \"points\": %lld, \"vars\": %d, \"frames\": %d, \"bytes\": %lld, "
           "\"seconds\": %.6f, \"seconds_to_disk\": %.6f}\n",
           argv[1], size, zones, n, vars, frames, zones * points * 8 * arrays, t_io, t_disk);
  free(buf);
  free(index);
  MPI_Finalize();
  return 0;
}
