#include "pio/shared_file.hpp"

#include "core/error.hpp"
#include "pio/mpi_util.hpp"

namespace anabranch::pio {

MPI_File open_shared_file(MPI_Comm comm, const StrategySetup& setup) {
  MPI_File fh = MPI_FILE_NULL;
  int rc = MPI_File_open(comm, setup.path.c_str(), MPI_MODE_CREATE | MPI_MODE_WRONLY, setup.info, &fh);
  collective(comm, [&] {
    if (rc != MPI_SUCCESS) check_mpi(rc, ("MPI_File_open " + setup.path).c_str());
  });
  MPI_File_set_errhandler(fh, MPI_ERRORS_RETURN);
  // Truncate a file left from before, and only then: on ext4, truncating to 0 makes close()
  // start writing back the whole file (its protection for replace-by-truncate), a cost of
  // tens of milliseconds that a new file does not pay.
  MPI_Offset existing = 0;
  rc = MPI_File_get_size(fh, &existing);
  collective(comm, [&] { check_mpi(rc, "MPI_File_get_size"); });
  if (existing > 0) {
    rc = MPI_File_set_size(fh, 0);
    collective(comm, [&] { check_mpi(rc, "MPI_File_set_size"); });
  }
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  try {
    collective(comm, [&] {
      if (rank == 0 && setup.write_header) {
        MpiFileSink sink(fh, setup.final_path.empty() ? setup.path : setup.final_path);
        setup.write_header(sink);
        sink.flush();
      }
    });
  } catch (...) {
    MPI_File_close(&fh);  // every rank is here: the header could not be written
    throw;
  }
  return fh;
}

void close_shared_file(MPI_Comm comm, MPI_File& fh) {
  if (fh == MPI_FILE_NULL) return;
  int rc = MPI_File_close(&fh);
  collective(comm, [&] { check_mpi(rc, "MPI_File_close"); });
}

}  // namespace anabranch::pio
