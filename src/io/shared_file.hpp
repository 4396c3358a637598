// The pieces the MPI-IO strategies and readers share: open a shared file, truncate it, have
// rank 0 write the header; close it; open one to read.
#pragma once
#include <mpi.h>

#include <map>
#include <string>

#include "io/strategy.hpp"

namespace anabranch::pio {

// Collective over comm: opens (creating) path for writing, truncates it (setup.truncate), and has the rank
// whose comm rank is 0 write the header with setup.write_header. Returns the handle.
MPI_File open_shared_file(MPI_Comm comm, const StrategySetup& setup);
// Collective over comm: opens path to read, with the hints of ANABRANCH_MPIIO_HINTS and
// `hints` over them; errors returned, not fatal. IoError naming the file on every rank.
MPI_File open_input_file(MPI_Comm comm, const std::string& path, const Hints& hints);
// Collective: closes the file.
void close_shared_file(MPI_Comm comm, MPI_File& fh);
// The hints the MPI-IO library holds for fh (empty for MPI_FILE_NULL).
std::map<std::string, std::string> hints_in_use(MPI_File fh);

}  // namespace anabranch::pio
