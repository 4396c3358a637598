/*
 * A small explicit diffusion on a partitioned mesh, writing its frames through anabranch:
 * every rank reads its own part (as `anabranch partition` wrote it), steps, and all ranks
 * write one shared SERAFIN file.
 *
 *   anabranch generate -n 20000 -o mesh.slf
 *   anabranch partition mesh.slf --cli mesh.cli -n 4 -o parts
 *   mpiexec -n 4 mini_solver parts/mesh.slf mesh.slf result.slf [strategy] [frames]
 *
 * or, with no per-rank file, from the global geometry and an element -> part file:
 *   anabranch partition mesh.slf -n 4 --layout partition-file -o parts
 *   mpiexec -n 4 mini_solver parts/mesh.slf.epart.4 mesh.slf result.slf
 *
 * A restart, on any number of ranks, from frame K of an earlier result (one shared file):
 *   mpiexec -n 3 mini_solver parts3/mesh.slf mesh.slf again.slf aggregated 10 result.slf 5 [read_strategy]
 * copies frames 1..K into the new result, takes the temperature of frame K and runs on: the
 * file is the same as an uninterrupted run's. Every rank reads only its own nodes.
 *
 * The arithmetic is integer (temperatures in micro-units), so the result is the same bits
 * whatever the number of ranks, and the same in the Fortran and Python versions.
 * Nodal sums are assembled with an MPI_Allreduce over a global-size array: simple, and
 * fine for an example (a real solver exchanges interface values only).
 */
#include <anabranch/anabranch.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(call)                                                          \
  do {                                                                       \
    if ((call) != AB_OK) {                                                   \
      fprintf(stderr, "mini_solver: %s: %s\n", #call, ab_last_error());      \
      MPI_Finalize();                                                        \
      return 1;                                                              \
    }                                                                        \
  } while (0)

static int64_t floor_div16(int64_t a) { return a >= 0 ? a / 16 : -((-a + 15) / 16); }

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  if (argc < 4) {
    fprintf(stderr, "usage: mini_solver PARTS_BASE GEOMETRY OUTPUT [strategy] [frames] [RESTART_FILE FRAME [read_strategy]]\n");
    MPI_Finalize();
    return 2;
  }
  const char* strategy = argc > 4 ? argv[4] : "aggregated";
  const int frames = argc > 5 ? atoi(argv[5]) : 4;
  const char* restart = argc > 7 ? argv[6] : NULL;
  const int restart_frame = argc > 7 ? atoi(argv[7]) : 0;
  const char* read_strategy = argc > 8 ? argv[8] : "aggregated";
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);

  /* This rank's part: local elements, KNOLG, coordinates. */
  ab_part* part;
  if (strstr(argv[1], ".epart."))  /* an element -> part file: the part from the global geometry */
    CHECK(ab_part_open_global(MPI_COMM_WORLD, argv[2], argv[1], &part));
  else
    CHECK(ab_part_open(MPI_COMM_WORLD, argv[1], &part));
  int64_t nelem, nloc;
  int ndp, nplan;
  CHECK(ab_part_sizes(part, &nelem, &nloc, &ndp, &nplan));
  int32_t* ikle = malloc(sizeof(int32_t) * (size_t)(nelem * ndp + 1));
  int32_t* knolg = malloc(sizeof(int32_t) * (size_t)(nloc + 1));
  double* x = malloc(sizeof(double) * (size_t)(nloc + 1));
  double* y = malloc(sizeof(double) * (size_t)(nloc + 1));
  CHECK(ab_part_mesh(part, ikle, knolg, x, y));
  CHECK(ab_part_close(part));

  /* The output: the global geometry, two variables. */
  ab_header* h;
  CHECK(ab_header_create(&h));
  CHECK(ab_header_set_geometry(h, argv[2]));
  CHECK(ab_header_set_title(h, "anabranch mini solver: explicit diffusion"));
  CHECK(ab_header_add_variable(h, "TEMPERATURE", "K"));
  CHECK(ab_header_add_variable(h, "LAPLACIAN", "K"));
  CHECK(ab_header_set_local_mesh(h, nelem, ikle, nloc, x, y));
  int64_t npoin;
  CHECK(ab_header_sizes(h, NULL, &npoin, NULL, NULL));
  char options[128];
  snprintf(options, sizeof options, "strategy=%s", strategy);
  ab_writer* w;
  /* Seconds in the writer (open, frames, close), to tell the routes' I/O from the solve. */
  double io = -MPI_Wtime();
  CHECK(ab_writer_open(MPI_COMM_WORLD, argv[3], h, nloc, knolg, options, &w));
  io += MPI_Wtime();

  /* Initial condition: a bump in the middle of the bounding box. */
  double box[4] = {1e300, 1e300, 1e300, 1e300}, all[4];
  for (int64_t i = 0; i < nloc; ++i) {
    if (x[i] < box[0]) box[0] = x[i];
    if (-x[i] < box[1]) box[1] = -x[i];
    if (y[i] < box[2]) box[2] = y[i];
    if (-y[i] < box[3]) box[3] = -y[i];
  }
  MPI_Allreduce(box, all, 4, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);
  const double x0 = (all[0] - all[1]) / 2, y0 = (all[2] - all[3]) / 2, s = (-all[1] - all[0]) * (-all[1] - all[0]) / 50;
  int64_t* u = malloc(sizeof(int64_t) * (size_t)(nloc + 1));
  for (int64_t i = 0; i < nloc; ++i) u[i] = (int64_t)(1e6 / (1 + ((x[i] - x0) * (x[i] - x0) + (y[i] - y0) * (y[i] - y0)) / s));

  int64_t* lap = malloc(sizeof(int64_t) * (size_t)npoin);
  int64_t* sum = malloc(sizeof(int64_t) * (size_t)npoin);
  double* values = malloc(sizeof(double) * (size_t)(2 * nloc + 1));
  int first = 0;
  if (restart) {
    /* Frames 1..K as they were, then the state of frame K: temperatures in micro-units,
     * exact through single precision (|u| <= 1e6). */
    ab_reader* r;
    char read_options[128];
    snprintf(read_options, sizeof read_options, "strategy=%s", read_strategy);
    CHECK(ab_reader_open(MPI_COMM_WORLD, restart, nloc, knolg, read_options, &r));
    int64_t have;
    CHECK(ab_reader_frames(r, &have, NULL));
    if (restart_frame < 1 || restart_frame > have) {
      if (rank == 0) fprintf(stderr, "mini_solver: %s has %lld frames, no frame %d\n", restart, (long long)have, restart_frame);
      ab_reader_close(r);
      MPI_Finalize();
      return 1;
    }
    for (int f = 0; f < restart_frame; ++f) {
      double time;
      CHECK(ab_reader_time(r, f, &time));
      CHECK(ab_reader_read_frame(r, f, values));
      io -= MPI_Wtime();
      CHECK(ab_writer_write_frame(w, time, values));
      io += MPI_Wtime();
    }
    for (int64_t i = 0; i < nloc; ++i) u[i] = (int64_t)(values[i] * 1e6 + (values[i] < 0 ? -0.5 : 0.5));
    CHECK(ab_reader_close(r));
    first = restart_frame;
  }
  for (int f = first; f < frames; ++f) {
    /* Ten explicit steps between frames: lap(a) = sum over element edges of u(b) - u(a). */
    for (int step = 0; step < 10; ++step) {
      for (int64_t g = 0; g < npoin; ++g) lap[g] = 0;
      for (int64_t e = 0; e < nelem; ++e)
        for (int k = 0; k < ndp; ++k) {
          const int32_t a = ikle[e * ndp + k] - 1, b = ikle[e * ndp + (k + 1) % ndp] - 1;
          lap[knolg[a] - 1] += u[b] - u[a];
          lap[knolg[b] - 1] += u[a] - u[b];
        }
      MPI_Allreduce(lap, sum, (int)npoin, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
      for (int64_t i = 0; i < nloc; ++i) u[i] += floor_div16(sum[knolg[i] - 1]);
    }
    for (int64_t i = 0; i < nloc; ++i) {
      values[i] = (double)u[i] * 1e-6;
      values[nloc + i] = (double)sum[knolg[i] - 1] * 1e-6;
    }
    io -= MPI_Wtime();
    CHECK(ab_writer_write_frame(w, 10.0 * (f + 1), values));
    io += MPI_Wtime();
  }
  io -= MPI_Wtime();
  CHECK(ab_writer_close(w));
  io += MPI_Wtime();
  double io_max = 0;
  MPI_Reduce(&io, &io_max, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  CHECK(ab_header_free(h));
  if (rank == 0)
    printf("mini_solver: wrote %d frames of %lld nodes to %s (%s): %.3f s in the writer (the slowest rank)\n", frames,
           (long long)npoin, argv[3], strategy, io_max);
  free(ikle), free(knolg), free(x), free(y), free(u), free(lap), free(sum), free(values);
  MPI_Finalize();
  return 0;
}
