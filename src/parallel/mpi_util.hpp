// MPI helpers: error checks that throw, and agreement on failure across ranks so that one
// failing rank never leaves the others waiting in the next collective call.
#pragma once
#include <mpi.h>

#include <cstdint>
#include <exception>
#include <functional>
#include <string>
#include <vector>

namespace anabranch::pio {

// text on one line: newlines blanked, an MPICH error stack cut to its first and last lines.
std::string one_line(const std::string& text);
// MPI_Error_string of rc, on one line.
std::string mpi_error_text(int rc);
// Throws MpiError naming `what` when rc is not MPI_SUCCESS.
void check_mpi(int rc, const char* what);

// Checks an MPI-IO write of `asked` bytes at byte `offset` of `path` (the user's name for the
// file): throws MpiError when rc failed, IoError when the status counts fewer bytes (MPI-IO
// libraries report a full disk or a file-size limit as a short count, not as an error):
// "cannot write PATH: K of M bytes written from byte N: No space left on device".
void check_written(int rc, const MPI_Status& status, std::int64_t asked, const std::string& path, std::int64_t offset,
                   const char* what);
// Why a write to path up to byte `end` (-1: not known) failed, as well as can be told after
// the fact: the file-size limit, a full file system, or a guess.
std::string write_failure_reason(const std::string& path, std::int64_t end);

// Whether this MPI's nonblocking MPI-IO writes can be used: a failed one must complete its
// request with the error. Open MPI's do. ROMIO's (MPICH and the MPIs built on it: Intel MPI,
// Cray MPICH, MVAPICH) never complete: its poll function waits for aio_error() to say 0, so
// a full disk or a file-size limit hangs MPI_Wait forever; there anabranch writes with
// blocking calls (aggregated-async then overlaps nothing, and writes the same file).
constexpr bool nonblocking_file_writes() {
#ifdef OPEN_MPI
  return true;
#else
  return false;
#endif
}
// Whether this MPI's collective reads (MPI_File_read_all) give the file's bytes where ranks
// ask for overlapping bytes (a node or a record read by several ranks). Open MPI 4.1.0 to
// 4.1.4's own MPI-IO (ompio, Debian 12's default) does not while its read data sieving is on:
// it sizes the sieving buffer from the last request of a sorted list, not the largest, and
// hands out zeros past it (open-mpi/ompi#10546, fixed in 4.1.5). Collective over comm, after
// a file is open (ompio's components load then): false on every rank when any rank runs such
// an Open MPI with fbtl_posix_read_datasieving on (MPI_T says which). A command line started
// by anabranch turns it off before MPI_Init (MpiSession); the readers read independently
// where it is still on.
bool collective_reads_safe(MPI_Comm comm);

// Waits for a nonblocking MPI-IO request (MPI_File_iwrite_at, ...) and frees it; returns
// the MPI return code, the status in `status` (check_written reads both). Polled with
// MPI_Request_get_status, not MPI_Wait'ed: Open MPI's MPI_Wait on a failed file request
// calls a file error handler through a null pointer (a crash, then a hang of the other
// ranks) where get_status reports the short count.
int wait_file_request(MPI_Request& request, MPI_Status& status);

// MPI_COMM_NULL stands for a process running alone without MPI (not started by an MPI
// launcher): collective(), agree() and allreduce() then call no MPI function.

// Whether an MPI launcher (mpiexec, mpirun, srun) started this process: MPI's start-up
// (a few tenths of a second) is only worth paying then.
bool started_by_launcher();

// MPI_Allreduce in place; nothing to do on MPI_COMM_NULL.
void allreduce(MPI_Comm comm, void* buffer, int count, MPI_Datatype type, MPI_Op op);
// Collective: root's bytes, on every rank (nothing to do on MPI_COMM_NULL).
std::string broadcast(MPI_Comm comm, std::string bytes, int root = 0);

// Collective: runs fn on every rank; if it threw on any rank, every rank throws the error of
// the lowest failing rank (same type class: usage, format, I/O or MPI error).
void collective(MPI_Comm comm, const std::function<void()>& fn);

// Collective: agrees on a failure captured earlier (nullptr: this rank is fine).
void agree(MPI_Comm comm, std::exception_ptr error);

// Where each of `counts` starts when they are laid one after another (MPI's displacements);
// their sum in `total`.
inline std::vector<int> displacements(const std::vector<int>& counts, std::int64_t& total) {
  std::vector<int> at(counts.size(), 0);
  total = 0;
  for (std::size_t i = 0; i < counts.size(); ++i) {
    at[i] = static_cast<int>(total);
    total += counts[i];
  }
  return at;
}
// Collective all-to-all of items grouped by destination: `out` holds counts[d] items for rank
// d, in rank order. Puts what this rank receives in `in` (its memory kept: a caller
// exchanging the same sizes again touches no new pages), grouped by source rank; in
// `received`, when given, how many items came from each rank. Items are whole 4-byte words
// (sent as 8-byte words when they are whole ones).
template <class T>
void exchange_into(MPI_Comm comm, const std::vector<T>& out, const std::vector<int>& counts, std::vector<T>& in,
                   std::vector<int>* received = nullptr) {
  static_assert(sizeof(T) % 4 == 0, "items of whole 4-byte words");
  constexpr bool wide = sizeof(T) % 8 == 0;  // sent as 8-byte words, or as 4-byte ones
  constexpr int words = static_cast<int>(sizeof(T) / (wide ? 8 : 4));
  const MPI_Datatype word = wide ? MPI_UINT64_T : MPI_UINT32_T;
  int size = 1;
  MPI_Comm_size(comm, &size);
  const auto P = static_cast<std::size_t>(size);
  std::vector<int> rcounts(P), sc(P), rc(P), sd(P + 1, 0), rd(P + 1, 0);
  check_mpi(MPI_Alltoall(counts.data(), 1, MPI_INT, rcounts.data(), 1, MPI_INT, comm), "MPI_Alltoall");
  for (std::size_t d = 0; d < P; ++d) {
    sc[d] = counts[d] * words;
    rc[d] = rcounts[d] * words;
    sd[d + 1] = sd[d] + sc[d];
    rd[d + 1] = rd[d] + rc[d];
  }
  in.resize(static_cast<std::size_t>(rd.back() / words));
  check_mpi(MPI_Alltoallv(out.data(), sc.data(), sd.data(), word, in.data(), rc.data(), rd.data(), word, comm), "MPI_Alltoallv");
  if (received) *received = std::move(rcounts);
}
// The same, returning what this rank receives.
template <class T>
std::vector<T> exchange(MPI_Comm comm, const std::vector<T>& out, const std::vector<int>& counts, std::vector<int>* received = nullptr) {
  std::vector<T> in;
  exchange_into(comm, out, counts, in, received);
  return in;
}
// Collective: every rank's items one after another, in rank order, on root (empty
// elsewhere). Items are whole 8-byte words.
template <class T>
std::vector<T> gather(MPI_Comm comm, const std::vector<T>& mine, int root = 0) {
  static_assert(sizeof(T) % 8 == 0, "items of whole 8-byte words");
  constexpr int words = sizeof(T) / 8;
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  const int n = static_cast<int>(mine.size()) * words;
  std::vector<int> counts(static_cast<std::size_t>(size));
  check_mpi(MPI_Gather(&n, 1, MPI_INT, counts.data(), 1, MPI_INT, root, comm), "MPI_Gather");
  std::int64_t total = 0;
  const std::vector<int> at = displacements(counts, total);
  std::vector<T> all(rank == root ? static_cast<std::size_t>(total / words) : 0);
  check_mpi(MPI_Gatherv(mine.data(), n, MPI_UINT64_T, all.data(), counts.data(), at.data(), MPI_UINT64_T, root, comm), "MPI_Gatherv");
  return all;
}
// MPI datatype for std::int64_t.
inline MPI_Datatype mpi_int64() { return MPI_INT64_T; }

// Called before MPI_Finalize when a session ends (a library loaded at run time, HDF5,
// closes what is left while MPI still runs); the last registered.
void before_finalize(void (*f)());

// Writes all n bytes at offset with MPI_File_write_at (independent); throws MpiError, or
// IoError naming path when fewer bytes were written (full disk, file-size limit).
void write_at(MPI_File fh, std::int64_t offset, const void* data, std::int64_t n, const std::string& path);

// Initialises MPI for the lifetime of the object if nobody did (commands that may run
// under mpiexec or alone). Inside a FinalizeLater scope, the finalize waits for its end.
class MpiSession {
 public:
  MpiSession(int* argc, char*** argv);
  ~MpiSession();
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;
  // Rank in MPI_COMM_WORLD of the last session (0 if none), still known after finalize.
  static int world_rank();
  // Whether MPI has been started (by a session or by the caller).
  static bool started();

 private:
  bool owned_ = false;
};

// While alive, MPI started by a MpiSession is finalized only when this scope ends: the
// command line reports a failure on rank 0 before any rank finalizes (a rank that finalizes
// and exits first has the launcher kill rank 0 before it has said why).
class FinalizeLater {
 public:
  FinalizeLater();
  ~FinalizeLater();
  FinalizeLater(const FinalizeLater&) = delete;
  FinalizeLater& operator=(const FinalizeLater&) = delete;
};

}  // namespace anabranch::pio
