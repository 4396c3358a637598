// The pieces the MPI-IO strategies share: open a shared file, truncate it, have rank 0
// write the header; close it.
#pragma once
#include <mpi.h>

#include <map>
#include <string>

#include "io/strategy.hpp"

namespace anabranch::pio {

// Collective over comm: opens (creating) path for writing, truncates it (setup.truncate), and has the rank
// whose comm rank is 0 write the header with setup.write_header. Returns the handle.
MPI_File open_shared_file(MPI_Comm comm, const StrategySetup& setup);
// Collective: closes the file.
void close_shared_file(MPI_Comm comm, MPI_File& fh);
// The hints the MPI-IO library holds for fh (empty for MPI_FILE_NULL).
std::map<std::string, std::string> hints_in_use(MPI_File fh);

}  // namespace anabranch::pio
