#include "parallel/mpi_util.hpp"

#include <sched.h>
#include <sys/resource.h>
#include <sys/statvfs.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
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

std::string one_line(const std::string& text) {
  // MPICH: "Other I/O error , error stack:\nF(80): Other I/O error No space left on device"
  std::string out = text;
  const auto stack = text.find(", error stack:");
  if (stack != std::string::npos) {
    out = text.substr(0, stack);
    std::string last = text.substr(text.find_last_of('\n') == std::string::npos ? stack : text.find_last_of('\n') + 1);
    const auto at = last.rfind("): ");
    if (at != std::string::npos) last = last.substr(at + 3);
    if (!last.empty() && out.find(last) == std::string::npos) out += " (" + last + ")";
  }
  for (char& c : out)
    if (c == '\n' || c == '\r' || c == '\t') c = ' ';
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

std::string mpi_error_text(int rc) {
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(rc, text, &len);
  return one_line(std::string(text, static_cast<std::size_t>(len)));
}

void check_mpi(int rc, const char* what) {
  if (rc == MPI_SUCCESS) return;
  throw MpiError(std::string(what) + " failed: " + mpi_error_text(rc));
}

int wait_file_request(MPI_Request& request, MPI_Status& status) {
  int done = 0, rc = MPI_SUCCESS;
  while (!done && rc == MPI_SUCCESS) {
    rc = MPI_Request_get_status(request, &done, &status);
    if (!done) sched_yield();
  }
  if (done) MPI_Request_free(&request);
  return rc;
}

std::string write_failure_reason(const std::string& path, std::int64_t end) {
  const auto slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
  struct statvfs fs {};
  const bool full = ::statvfs(dir.c_str(), &fs) == 0 && (fs.f_bavail == 0 || fs.f_favail == 0);
  struct rlimit rl {};
  if (::getrlimit(RLIMIT_FSIZE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY) {
    const auto limit = static_cast<std::int64_t>(rl.rlim_cur);
    if (end > limit || (end < 0 && !full))
      return "File too large: the file-size limit (ulimit -f) is " + std::to_string(limit) + " bytes";
  }
  if (full) return "No space left on device";
  return "disk full or quota exceeded?";
}

void check_written(int rc, const MPI_Status& status, std::int64_t asked, const std::string& path, std::int64_t offset,
                   const char* what) {
  int count = 0;
  std::int64_t end = offset + asked;
  if (rc != MPI_SUCCESS) {
    // MPICH's ROMIO fails the call on a full disk or a file-size limit where Open MPI
    // returns a short count: both are the same line, naming the file, the byte and why.
    // In a collective write the failing piece may be another rank's (an aggregator's):
    // where it ended is not known.
    int cls = MPI_ERR_OTHER;
    MPI_Error_class(rc, &cls);
    if (cls != MPI_ERR_IO && cls != MPI_ERR_NO_SPACE && cls != MPI_ERR_QUOTA && cls != MPI_ERR_FILE) check_mpi(rc, what);
    end = -1;
  } else {
    MPI_Get_count(&status, MPI_BYTE, &count);
    if (count == MPI_UNDEFINED || count >= asked) return;
  }
  throw IoError("cannot write " + path + ": " + std::to_string(count) + " of " + std::to_string(asked) +
                " bytes written from byte " + std::to_string(offset) + ": " + write_failure_reason(path, end));
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

std::string broadcast(MPI_Comm comm, std::string bytes, int root) {
  if (comm == MPI_COMM_NULL) return bytes;
  long long n = static_cast<long long>(bytes.size());
  MPI_Bcast(&n, 1, MPI_LONG_LONG, root, comm);
  bytes.resize(static_cast<std::size_t>(n));
  if (n > 0) MPI_Bcast(bytes.data(), static_cast<int>(n), MPI_CHAR, root, comm);
  return bytes;
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

bool MpiSession::started() {
  int initialized = 0;
  MPI_Initialized(&initialized);
  return initialized != 0;
}

namespace {
// Open MPI's version at run time (0 0 0 under another MPI).
std::array<int, 3> open_mpi_version() {
  std::array<int, 3> v{0, 0, 0};
#ifdef OPEN_MPI
  char text[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int n = 0;
  MPI_Get_library_version(text, &n);
  if (const char* at = std::strstr(text, "Open MPI v")) std::sscanf(at, "Open MPI v%d.%d.%d", &v[0], &v[1], &v[2]);
#endif
  return v;
}
}  // namespace

bool collective_reads_safe(MPI_Comm comm) {
  static int known = -1;  // this process's answer, once
  if (known < 0) {
    known = 1;
    const auto v = open_mpi_version();
    int provided = 0;
    if (v[0] == 4 && v[1] == 1 && v[2] < 5 && MPI_T_init_thread(MPI_THREAD_SINGLE, &provided) == MPI_SUCCESS) {
      int index = 0;
      if (MPI_T_cvar_get_index("fbtl_posix_read_datasieving", &index) == MPI_SUCCESS) {  // absent: ompio not in use
        MPI_T_cvar_handle handle;
        int count = 0, on = 1;
        if (MPI_T_cvar_handle_alloc(index, nullptr, &handle, &count) == MPI_SUCCESS) {
          if (MPI_T_cvar_read(handle, &on) == MPI_SUCCESS) known = on ? 0 : 1;
          MPI_T_cvar_handle_free(&handle);
        }
      }
      MPI_T_finalize();
    }
  }
  int all = known;
  MPI_Allreduce(MPI_IN_PLACE, &all, 1, MPI_INT, MPI_MIN, comm);
  return all == 1;
}

MpiSession::MpiSession(int* argc, char*** argv) {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) {
#if defined(OPEN_MPI) && OMPI_MAJOR_VERSION == 4 && OMPI_MINOR_VERSION == 1 && OMPI_RELEASE_VERSION < 5
    // Collective reads of overlapping bytes lose data with ompio's read data sieving in this
    // Open MPI (collective_reads_safe): off, unless the environment chose.
    ::setenv("OMPI_MCA_fbtl_posix_read_datasieving", "0", 0);
#endif
    // Alone (no launcher), Open MPI starts a PMIx server for this one process whose data store
    // is a file it sizes with ftruncate: under a file-size limit below that size (ulimit -f, a
    // full disk's stand-in) MPI_Init dies of SIGXFSZ before anabranch can say anything. Its
    // in-memory store serves one process as well.
    if (!started_by_launcher()) ::setenv("PMIX_MCA_gds", "hash", 0);
    int provided = 0;
    MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided);
    owned_ = true;
  }
  MPI_Comm_rank(MPI_COMM_WORLD, &g_world_rank);
}

namespace {
int g_later = 0;               // FinalizeLater scopes alive
bool g_finalize_due = false;   // a session ended inside one
void (*g_before_finalize)() = nullptr;

void finalize() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized) return;
  if (g_before_finalize) g_before_finalize();  // HDF5 closes what is left while MPI still runs
  MPI_Finalize();
}
}  // namespace

void before_finalize(void (*f)()) { g_before_finalize = f; }

MpiSession::~MpiSession() {
  if (!owned_) return;
  if (g_later > 0)
    g_finalize_due = true;
  else
    finalize();
}

FinalizeLater::FinalizeLater() { ++g_later; }

FinalizeLater::~FinalizeLater() {
  if (--g_later > 0 || !g_finalize_due) return;
  g_finalize_due = false;
  finalize();
}

void write_at(MPI_File fh, std::int64_t offset, const void* data, std::int64_t n, const std::string& path) {
  const auto* p = static_cast<const char*>(data);
  constexpr std::int64_t kMax = std::numeric_limits<int>::max() / 2;
  while (n > 0) {
    const int chunk = static_cast<int>(std::min(n, kMax));
    MPI_Status st;
    check_written(MPI_File_write_at(fh, offset, p, chunk, MPI_BYTE, &st), st, chunk, path, offset, "MPI_File_write_at");
    p += chunk;
    offset += chunk;
    n -= chunk;
  }
}

}  // namespace anabranch::pio
