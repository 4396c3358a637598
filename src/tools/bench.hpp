// The bench engine behind `anabranch bench` (and ab_command("bench") in C, Fortran and
// Python): the write strategies, and with `read` the read strategies, measured on one
// decomposition in one run, beside the file system's own rates; every file verified.
#pragma once
#include <mpi.h>

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

namespace anabranch::pio {

struct BenchOptions {
  std::int64_t generate = 200000;
  std::string mesh, plan, dir = ".", output, strategies = "all";
  int vars = 4, frames = 5, repeat = 3;
  std::string writers = "auto";
  bool read = false;
};

// Collective over comm: the measurements, as the JSON report `anabranch bench --json` prints
// (complete on rank 0). print: rank 0 prints a line per strategy as it goes.
nlohmann::json bench(MPI_Comm comm, const BenchOptions& options, bool print);
// True when every file of the report was verified.
bool bench_verified(const nlohmann::json& report);

}  // namespace anabranch::pio
