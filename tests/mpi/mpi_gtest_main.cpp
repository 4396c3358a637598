// GoogleTest main for MPI tests: every rank runs the tests; only rank 0 prints; the exit
// status is agreed across ranks so a failure on any rank fails the test.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdlib>

int main(int argc, char** argv) {
  // As the command line starts MPI (pio::MpiSession): Open MPI 4.1.4's read data sieving off,
  // so that the engine's collective reads run collectively here (where it is on, they read
  // independently: pio::collective_reads_safe, tested by the generated Python cases).
  ::setenv("OMPI_MCA_fbtl_posix_read_datasieving", "0", 0);
  MPI_Init(&argc, &argv);
  ::testing::InitGoogleTest(&argc, argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank != 0) {
    auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
  }
  int local = RUN_ALL_TESTS();
  int global = 0;
  MPI_Allreduce(&local, &global, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return global;
}
