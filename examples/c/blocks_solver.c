/*
 * A multi-block mini solver: blocks of unequal sizes dealt to the ranks by `anabranch
 * balance` (split where the balance needs it), each piece held with halo layers, five
 * variables stepped and written, frame after frame, into one file by all ranks.
 *
 *   anabranch balance blocks.txt -n 4 --json > four.json
 *   mpiexec -n 4 blocks_solver four.json run.h5 [frames] [options]
 *
 * A restart on another process count, from frame K (0-based) of an earlier file:
 *   anabranch balance blocks.txt -n 3 --json > three.json
 *   mpiexec -n 3 blocks_solver three.json again.h5 6 "" run.h5 2 [read_options]
 * copies frames 0..K into the new file, takes the state of frame K and runs on: the values
 * are the same as an uninterrupted run's (the raw format: the same file, byte for byte).
 * Every rank reads only its own pieces.
 *
 * The update is pointwise (a real solver exchanges halos first), so the values are the
 * same bits whatever the decomposition.
 */
#include <anabranch/anabranch.h>
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NVAR 5
#define CHECK(call)                                                        \
  do {                                                                     \
    if ((call) != AB_OK) {                                                 \
      fprintf(stderr, "blocks_solver: %s: %s\n", #call, ab_last_error()); \
      MPI_Finalize();                                                      \
      return 1;                                                            \
    }                                                                      \
  } while (0)

static const char* names[NVAR] = {"rho", "rhou", "rhov", "rhow", "rhoe"};

/* One step of the state of point (i, j, k) of block `id`, variable v. */
static double step(double q, int v, int n) { return 0.75 * q + 0.25 * (double)((v + 1) * n); }
static double initial(int64_t id, int64_t i, int64_t j, int64_t k, int v) {
  return 0.001 * (double)id + (double)i + 2.0 * (double)j + 3.0 * (double)k + (double)v;
}

int main(int argc, char** argv) {
  signal(SIGXFSZ, SIG_IGN); /* a file-size limit comes back as an error, not a kill */
  MPI_Init(&argc, &argv);
  if (argc < 3) {
    fprintf(stderr, "usage: blocks_solver ASSIGNMENT OUTPUT [frames] [options] [RESTART_FILE FRAME [read_options]]\n");
    MPI_Finalize();
    return 2;
  }
  const int frames = argc > 3 ? atoi(argv[3]) : 4;
  const char* options = argc > 4 ? argv[4] : "";
  const char* restart = argc > 6 ? argv[5] : NULL;
  const int restart_frame = argc > 6 ? atoi(argv[6]) : -1;
  const char* read_options = argc > 7 ? argv[7] : "";
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);

  ab_blocks* layout;
  CHECK(ab_blocks_create(&layout));
  CHECK(ab_blocks_set_halo(layout, 2, 2, 1));
  CHECK(ab_blocks_load(layout, argv[1], rank));
  int64_t nblocks, npieces;
  CHECK(ab_blocks_count(layout, &nblocks, &npieces));

  /* The state: NVAR arrays per piece, halos included; and the grid. */
  double** q = calloc((size_t)(npieces * NVAR + 1), sizeof(double*));
  double** xyz = calloc((size_t)(npieces * 3 + 1), sizeof(double*));
  int64_t (*range)[6] = calloc((size_t)npieces + 1, sizeof *range);
  int64_t (*mdims)[3] = calloc((size_t)npieces + 1, sizeof *mdims);
  int64_t* ids = calloc((size_t)npieces + 1, sizeof *ids);
  for (int64_t p = 0; p < npieces; ++p) {
    CHECK(ab_blocks_piece(layout, p, &ids[p], range[p], mdims[p]));
    const int64_t n = mdims[p][0] * mdims[p][1] * mdims[p][2];
    for (int c = 0; c < NVAR + 3; ++c) {
      double* a = malloc((size_t)n * sizeof(double));
      for (int64_t x = 0; x < n; ++x) a[x] = -1.0; /* halos: never written to the file */
      if (c < NVAR) q[p * NVAR + c] = a;
      else xyz[p * 3 + (c - NVAR)] = a;
    }
    for (int64_t k = range[p][4]; k < range[p][5]; ++k)
      for (int64_t j = range[p][2]; j < range[p][3]; ++j)
        for (int64_t i = range[p][0]; i < range[p][1]; ++i) {
          const int64_t at = ((k - range[p][4] + 1) * mdims[p][1] + (j - range[p][2] + 2)) * mdims[p][0] + (i - range[p][0] + 2);
          for (int v = 0; v < NVAR; ++v) q[p * NVAR + v][at] = initial(ids[p], i, j, k, v);
          xyz[p * 3 + 0][at] = (double)i + 40.0 * (double)(ids[p] % 16);
          xyz[p * 3 + 1][at] = (double)j + 40.0 * (double)(ids[p] / 16);
          xyz[p * 3 + 2][at] = (double)k;
        }
  }

  /* The restart file is opened first: an output named like it is then refused. */
  ab_block_reader* r = NULL;
  if (restart) {
    int64_t available;
    CHECK(ab_block_reader_open(MPI_COMM_WORLD, restart, layout, read_options, &r));
    CHECK(ab_block_reader_frames(r, &available, NULL));
    if (restart_frame < 0 || restart_frame >= available) {
      if (rank == 0) fprintf(stderr, "blocks_solver: %s holds %lld frames; frame %d asked\n", restart, (long long)available, restart_frame);
      MPI_Finalize();
      return 1;
    }
  }
  ab_block_writer* w;
  CHECK(ab_block_writer_open(MPI_COMM_WORLD, argv[2], layout, NVAR, names, options, &w));
  if (strstr(argv[2], ".h5")) CHECK(ab_block_writer_write_grid(w, (const double* const*)xyz));
  int first = 1;
  if (restart) {
    for (int f = 0; f <= restart_frame; ++f) { /* the frames before: copied, so the file is whole */
      double t;
      CHECK(ab_block_reader_time(r, f, &t));
      CHECK(ab_block_reader_read_frame(r, f, q));
      CHECK(ab_block_writer_write_frame(w, t, (const double* const*)q));
    }
    CHECK(ab_block_reader_close(r));
    first = restart_frame + 2;
  }
  for (int n = first; n <= frames; ++n) {
    for (int64_t p = 0; p < npieces; ++p)
      for (int64_t k = 0; k < range[p][5] - range[p][4]; ++k)
        for (int64_t j = 0; j < range[p][3] - range[p][2]; ++j)
          for (int64_t i = 0; i < range[p][1] - range[p][0]; ++i) {
            const int64_t at = ((k + 1) * mdims[p][1] + (j + 2)) * mdims[p][0] + (i + 2);
            for (int v = 0; v < NVAR; ++v) q[p * NVAR + v][at] = step(q[p * NVAR + v][at], v, n);
          }
    CHECK(ab_block_writer_write_frame(w, 0.1 * n, (const double* const*)q));
  }
  CHECK(ab_block_writer_close(w));
  if (rank == 0)
    printf("blocks_solver: %lld blocks, %d ranks, %d frames%s -> %s\n", (long long)nblocks, size, frames,
           restart ? " (restarted)" : "", argv[2]);
  for (int64_t p = 0; p < npieces * NVAR; ++p) free(q[p]);
  for (int64_t p = 0; p < npieces * 3; ++p) free(xyz[p]);
  free(q);
  free(xyz);
  free(range);
  free(mdims);
  free(ids);
  ab_blocks_free(layout);
  MPI_Finalize();
  return 0;
}
