// The MPI test harness itself: a collective result every rank must agree on.
#include <gtest/gtest.h>
#include <mpi.h>

#include <numeric>
#include <vector>

TEST(MpiSmoke, AllreduceSumOfRanks) {
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  long long sum = 0, mine = rank;
  MPI_Allreduce(&mine, &sum, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
  EXPECT_EQ(sum, static_cast<long long>(size) * (size - 1) / 2);
}

TEST(MpiSmoke, GatherKeepsRankOrder) {
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  std::vector<int> all(static_cast<std::size_t>(size), -1);
  int mine = rank * rank;
  MPI_Allgather(&mine, 1, MPI_INT, all.data(), 1, MPI_INT, MPI_COMM_WORLD);
  for (int r = 0; r < size; ++r) EXPECT_EQ(all[static_cast<std::size_t>(r)], r * r);
}
