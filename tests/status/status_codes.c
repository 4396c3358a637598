/* The C API's status codes, exactly as the header documents them, on every rank (run at 1,
 * 2 and 3 ranks): a refused argument is AB_ERR_USAGE, a file whose bytes are not its format
 * AB_ERR_FORMAT, a path the system refuses AB_ERR_IO, and ab_last_error() names the cause.
 * Exit status: 0 when every check holds, 1 otherwise (each failed check printed). */
#include <anabranch/anabranch.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int failures = 0;
static int rank = 0;

static void expect(int got, int want, const char* call, const char* text) {
  const char* why = ab_last_error();
  if (got != want) {
    fprintf(stderr, "rank %d: %s returned %d, expected %d (%s)\n", rank, call, got, want, why ? why : "");
    ++failures;
  } else if (want != AB_OK && (!why || !strstr(why, text))) {
    fprintf(stderr, "rank %d: %s: ab_last_error() \"%s\" does not name \"%s\"\n", rank, call, why ? why : "", text);
    ++failures;
  }
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  /* A folder of this run's own (rank 0 makes it; the same test runs at several rank counts at once). */
  char dir[4096] = {0}, garbage[4200], missing[4200];
  if (rank == 0) {
    snprintf(dir, sizeof dir, "%s/ab_status_XXXXXX", argc > 1 ? argv[1] : "/tmp");
    if (!mkdtemp(dir)) {
      perror(dir);
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
  }
  MPI_Bcast(dir, sizeof dir, MPI_CHAR, 0, MPI_COMM_WORLD);
  snprintf(garbage, sizeof garbage, "%s/garbage.slf", dir);
  snprintf(missing, sizeof missing, "%s/missing.slf", dir);
  if (rank == 0) {
    FILE* f = fopen(garbage, "wb");
    fputs("this is not a SERAFIN file, whatever its name says", f);
    fclose(f);
  }
  MPI_Barrier(MPI_COMM_WORLD);

  ab_header* h = NULL;
  expect(ab_header_create(&h), AB_OK, "ab_header_create", "");
  expect(ab_header_set_precision(h, 3), AB_ERR_USAGE, "ab_header_set_precision(h, 3)", "precision");
  expect(ab_header_add_variable(h, "A_NAME_OF_17_CHRS", "M"), AB_ERR_USAGE, "ab_header_add_variable(17 characters)",
         "16 characters");
  expect(ab_header_set_sizes(h, 2, 4, 3, 1), AB_OK, "ab_header_set_sizes", "");
  expect(ab_header_add_variable(h, "DEPTH", "M"), AB_OK, "ab_header_add_variable", "");
  const int32_t ikle[6] = {1, 2, 3, 2, 4, 3}, ipobo[4] = {1, 2, 3, 4};
  const double x[4] = {0, 1, 0, 1}, y[4] = {0, 0, 1, 1};
  expect(ab_header_set_mesh(h, ikle, ipobo, x, y), AB_OK, "ab_header_set_mesh", "");

  int32_t ids[4] = {1, 2, 3, 4};
  ab_writer* w = NULL;
  expect(ab_writer_open(MPI_COMM_WORLD, "/nonexistent-dir/x.slf", h, rank == 0 ? 4 : 0, ids, "strategy=aggregated", &w),
         AB_ERR_IO, "ab_writer_open(/nonexistent-dir/x.slf)", "/nonexistent-dir/x.slf");
  expect(ab_writer_open(MPI_COMM_WORLD, "/nonexistent-dir/x.slf", h, rank == 0 ? 4 : 0, ids, "strategy=nope", &w),
         AB_ERR_USAGE, "ab_writer_open(strategy=nope)", "nope");

  ab_reader* r = NULL;
  expect(ab_reader_open(MPI_COMM_WORLD, garbage, 0, ids, NULL, &r), AB_ERR_FORMAT, "ab_reader_open(garbage.slf)", "garbage.slf");
  expect(ab_reader_open(MPI_COMM_WORLD, missing, 0, ids, NULL, &r), AB_ERR_IO, "ab_reader_open(missing.slf)", "missing.slf");

  ab_blocks* b = NULL;
  const int64_t past[6] = {0, 5, 0, 4, 0, 3};  /* one past the block's end in i */
  expect(ab_blocks_create(&b), AB_OK, "ab_blocks_create", "");
  expect(ab_blocks_add_block(b, 1, 4, 4, 3), AB_OK, "ab_blocks_add_block", "");
  expect(ab_blocks_add_block(b, 2, 0, 4, 3), AB_ERR_USAGE, "ab_blocks_add_block(ni = 0)", "");
  const int rc = ab_blocks_add_piece(b, 1, past);
  ab_block_writer* bw = NULL;
  const char* names[1] = {"rho"};
  /* Refused when added, or when the writer sees the layout: either way a usage error. */
  expect(rc == AB_OK ? ab_block_writer_open(MPI_COMM_WORLD, garbage, b, 1, names, NULL, &bw) : rc, AB_ERR_USAGE,
         "a piece one past its block's end", "range");
  ab_blocks_free(b);
  ab_header_free(h);

  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) {
    unlink(garbage);
    rmdir(dir);
  }
  int all = 0;
  MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) printf("status codes: %s\n", all == 0 ? "every check holds" : "FAILED");
  MPI_Finalize();
  return all == 0 ? 0 : 1;
}
