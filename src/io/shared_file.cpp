#include "io/shared_file.hpp"

#include <unistd.h>

#include <cstdio>

#include "core/error.hpp"
#include "core/io.hpp"
#include "core/outputs.hpp"
#include "parallel/mpi_util.hpp"
#include "io/strategy.hpp"

namespace anabranch::pio {

MPI_File open_shared_file(MPI_Comm comm, const StrategySetup& setup) {
  MPI_File fh = MPI_FILE_NULL;
  int rc = MPI_File_open(comm, setup.path.c_str(), MPI_MODE_CREATE | MPI_MODE_WRONLY, setup.info, &fh);
  collective(comm, [&] {
    if (rc != MPI_SUCCESS) throw IoError("cannot create " + setup.path + ": " + mpi_error_text(rc));
  });
  MPI_File_set_errhandler(fh, MPI_ERRORS_RETURN);
  // Truncate a file left from before (unless it is the one the caller made: HDF5's), and
  // only then: on ext4, truncating to 0 makes close() start writing back the whole file (its
  // protection for replace-by-truncate), a cost of tens of milliseconds that a new file does
  // not pay. Every rank decides alike, on the size agreed before any rank truncates (a rank
  // asking after another's truncation would skip the collective MPI_File_set_size and hang).
  if (setup.truncate) {
    MPI_Offset existing = 0;
    rc = MPI_File_get_size(fh, &existing);
    collective(comm, [&] { check_mpi(rc, "MPI_File_get_size"); });
    long long biggest = static_cast<long long>(existing);
    MPI_Allreduce(MPI_IN_PLACE, &biggest, 1, MPI_LONG_LONG, MPI_MAX, comm);
    if (biggest > 0) {
      rc = MPI_File_set_size(fh, 0);
      collective(comm, [&] { check_mpi(rc, "MPI_File_set_size"); });
    }
  }
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  const std::string& name = setup.final_path.empty() ? setup.path : setup.final_path;
  try {
    collective(comm, [&] {
      if (rank == 0 && setup.write_header) {
        MpiFileSink sink(fh, name);
        setup.write_header(sink);
        sink.flush();
      }
      // The mesh records from the geometry file, a share per rank (O(N/P) read and written each).
      if (setup.copy_mesh) {
        int size = 1;
        MPI_Comm_size(comm, &size);
        setup.copy_mesh(rank, size, [&](std::int64_t offset, const void* data, std::size_t n) {
          write_at(fh, offset, data, static_cast<std::int64_t>(n), name);
        });
      }
    });
  } catch (...) {
    MPI_File_close(&fh);  // every rank is here: the header could not be written
    throw;
  }
  return fh;
}

MPI_File open_input_file(MPI_Comm comm, const std::string& path, const Hints& hints) {
  Hints all = Hints::from_environment();
  all.merge(hints);
  MPI_Info info = all.to_info();
  MPI_File fh = MPI_FILE_NULL;
  const int rc = MPI_File_open(comm, path.c_str(), MPI_MODE_RDONLY, info, &fh);
  if (info != MPI_INFO_NULL) MPI_Info_free(&info);  // the file keeps its own copy
  collective(comm, [&] {
    if (rc != MPI_SUCCESS) throw IoError("cannot open " + path + ": " + mpi_error_text(rc));
  });
  MPI_File_set_errhandler(fh, MPI_ERRORS_RETURN);
  return fh;
}

void close_shared_file(MPI_Comm comm, MPI_File& fh) {
  if (fh == MPI_FILE_NULL) return;
  int rc = MPI_File_close(&fh);
  collective(comm, [&] { check_mpi(rc, "MPI_File_close"); });
}

std::map<std::string, std::string> hints_in_use(MPI_File fh) {
  std::map<std::string, std::string> out;
  if (fh == MPI_FILE_NULL) return out;
  MPI_Info info = MPI_INFO_NULL;
  if (MPI_File_get_info(fh, &info) != MPI_SUCCESS || info == MPI_INFO_NULL) return out;
  int n = 0;
  MPI_Info_get_nkeys(info, &n);
  for (int i = 0; i < n; ++i) {
    char key[MPI_MAX_INFO_KEY + 1];
    MPI_Info_get_nthkey(info, i, key);
    int len = 0, flag = 0;
    MPI_Info_get_valuelen(info, key, &len, &flag);
    std::string value(static_cast<std::size_t>(len) + 1, '\0');
    MPI_Info_get(info, key, len + 1, value.data(), &flag);
    value.resize(static_cast<std::size_t>(len));
    out[key] = value;
  }
  MPI_Info_free(&info);
  return out;
}

OutputName::OutputName(MPI_Comm comm, std::string path, bool temporary) : comm_(comm), path_(std::move(path)), open_(path_) {
  MPI_Comm_rank(comm_, &rank_);
  if (!temporary) return;
  long long pid = rank_ == 0 ? static_cast<long long>(::getpid()) : 0;
  MPI_Bcast(&pid, 1, MPI_LONG_LONG, 0, comm_);
  open_ = path_ + ".tmp." + std::to_string(pid);
  register_temporary(open_);
  pending_ = true;
}

void OutputName::check_size(std::int64_t expected, std::int64_t frames) const {
  collective(comm_, [&] {
    if (rank_ != 0) return;
    const std::int64_t size = file_size(open_);
    if (size != expected)
      throw IoError("cannot write " + path_ + ": the file holds " + std::to_string(size) + " bytes where " + std::to_string(frames) +
                    " frames make " + std::to_string(expected) + " (" + write_failure_reason(open_, expected) + ")");
  });
}

void OutputName::commit() {
  if (!pending_) return;
  collective(comm_, [&] {
    if (rank_ != 0) return;
    refuse_open_input(path_);
    if (std::rename(open_.c_str(), path_.c_str()) != 0) throw IoError::from_errno("cannot rename " + open_ + " to", path_);
  });
  release_temporary(open_);
  pending_ = false;
}

void OutputName::discard() {
  if (!pending_) return;
  if (rank_ == 0) ::unlink(open_.c_str());
  release_temporary(open_);
  pending_ = false;
}

}  // namespace anabranch::pio
