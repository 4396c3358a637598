#include "pio/mpi_util.hpp"

#include <cstdlib>
#include <vector>

#include "core/error.hpp"

namespace anabranch::pio {
namespace {

enum Kind : int { kNone = 0, kUsage, kFormat, kIo, kMpi, kOther };

int kind_of(std::exception_ptr e, std::string& message) {
  try {
    std::rethrow_exception(e);
  } catch (const UsageError& x) {
    message = x.what();
    return kUsage;
  } catch (const FormatError& x) {
    message = x.what();
    return kFormat;
  } catch (const IoError& x) {
    message = x.what();
    return kIo;
  } catch (const MpiError& x) {
    message = x.what();
    return kMpi;
  } catch (const std::exception& x) {
    message = x.what();
    return kOther;
  }
}

}  // namespace

void check_mpi(int rc, const char* what) {
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(rc, text, &len);
  throw MpiError(std::string(what) + " failed: " + std::string(text, static_cast<std::size_t>(len)));
}

bool started_by_launcher() {
  // Open MPI, PMIx (Open MPI 5, Slurm), MPICH's Hydra and PMI-1/2 launchers (Intel MPI,
  // MVAPICH, srun --mpi=pmi2).
  for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK", "PMI_SIZE", "PMI_FD", "MPI_LOCALNRANKS"})
    if (std::getenv(v)) return true;
  return false;
}

void allreduce(MPI_Comm comm, void* buffer, int count, MPI_Datatype type, MPI_Op op) {
  if (comm == MPI_COMM_NULL) return;
  check_mpi(MPI_Allreduce(MPI_IN_PLACE, buffer, count, type, op, comm), "MPI_Allreduce");
}

void agree(MPI_Comm comm, std::exception_ptr error) {
  if (comm == MPI_COMM_NULL) {
    if (error) std::rethrow_exception(error);
    return;
  }
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  std::string message;
  int kind = error ? kind_of(error, message) : kNone;
  // The lowest failing rank speaks for all.
  int key = kind != kNone ? rank : size, lowest = size;
  MPI_Allreduce(&key, &lowest, 1, MPI_INT, MPI_MIN, comm);
  if (lowest == size) return;
  int head[2] = {kind, static_cast<int>(message.size())};
  MPI_Bcast(head, 2, MPI_INT, lowest, comm);
  std::vector<char> text(static_cast<std::size_t>(head[1]));
  if (rank == lowest) text.assign(message.begin(), message.end());
  if (head[1] > 0) MPI_Bcast(text.data(), head[1], MPI_CHAR, lowest, comm);
  std::string what(text.begin(), text.end());
  if (rank != lowest && size > 1) what = "rank " + std::to_string(lowest) + ": " + what;
  switch (head[0]) {
    case kUsage: throw UsageError(what);
    case kFormat: throw FormatError(what);
    case kIo: throw IoError(what);
    case kMpi: throw MpiError(what);
    default: throw Error(what);
  }
}

void collective(MPI_Comm comm, const std::function<void()>& fn) {
  std::exception_ptr error;
  try {
    fn();
  } catch (...) {
    error = std::current_exception();
  }
  agree(comm, error);
}

namespace {
int g_world_rank = 0;
}

int MpiSession::world_rank() { return g_world_rank; }

MpiSession::MpiSession(int* argc, char*** argv) {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) {
    int provided = 0;
    MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided);
    owned_ = true;
  }
  MPI_Comm_rank(MPI_COMM_WORLD, &g_world_rank);
}

MpiSession::~MpiSession() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (owned_ && !finalized) MPI_Finalize();
}

}  // namespace anabranch::pio
