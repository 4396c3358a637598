#include "pio/topology.hpp"

#include <sys/resource.h>
#ifdef __linux__
#include <linux/futex.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>
#else
#include <sched.h>
#endif

#include <algorithm>
#include <climits>
#include <cstring>
#include <ctime>
#include <new>

#include "core/error.hpp"
#include "core/io.hpp"
#include "pio/mpi_util.hpp"

namespace anabranch::pio {

namespace {
constexpr std::int64_t kLine = 64;
constexpr std::int64_t kControlBytes = 2 * kLine;
// With a core per rank, waiters poll this many times (about 1 ms) before they sleep: a
// sleeper takes tens of microseconds to wake, as long as a piece of a frame takes to write.
constexpr int kSpinPauses = 40000;

int online_cores() {
#ifdef __linux__
  return static_cast<int>(std::max(1L, ::sysconf(_SC_NPROCESSORS_ONLN)));
#else
  return 1;
#endif
}

inline void pause() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}
}  // namespace

// fence()'s barrier: how many of the node's ranks have arrived, and how many barriers
// have been passed (the word sleepers wait on).
struct NodeWindow::Control {
  alignas(kLine) std::uint32_t arrived = 0;
  alignas(kLine) std::uint32_t generation = 0;
};

Topology::Topology(MPI_Comm comm) {
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  check_mpi(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node_comm), "MPI_Comm_split_type");
  MPI_Comm_rank(node_comm, &node_rank);
  MPI_Comm_size(node_comm, &node_size);
  // Node numbers: leaders (node_rank 0) numbered by rank order.
  int leader = node_rank == 0 ? 1 : 0, before = 0;
  MPI_Exscan(&leader, &before, 1, MPI_INT, MPI_SUM, comm);
  if (rank == 0) before = 0;
  node_index = before;
  MPI_Bcast(&node_index, 1, MPI_INT, 0, node_comm);
  MPI_Allreduce(&leader, &nodes, 1, MPI_INT, MPI_SUM, comm);
}

Topology::~Topology() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized && node_comm != MPI_COMM_NULL) MPI_Comm_free(&node_comm);
}

namespace {

// Rank 0's answer, the same on every rank: whether path lies on a parallel or network file
// system; and the most ranks any node holds.
std::pair<bool, int> file_system_and_node_size(MPI_Comm comm, MPI_Comm node_comm, const std::string& path) {
  int rank = 0, node_size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(node_comm, &node_size);
  int parallel = 0;
  if (rank == 0) {
    const auto slash = path.rfind('/');
    const std::string fs = file_system_name(slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash));
    parallel = fs == "lustre" || fs == "gpfs" || fs == "beegfs" || fs == "nfs" ? 1 : 0;
  }
  MPI_Bcast(&parallel, 1, MPI_INT, 0, comm);
  int most = node_size;  // the largest node decides, so that every rank agrees
  MPI_Allreduce(MPI_IN_PLACE, &most, 1, MPI_INT, MPI_MAX, comm);
  return {parallel == 1, most};
}

}  // namespace

int auto_writers_per_node(MPI_Comm comm, MPI_Comm node_comm, const std::string& path, bool turns) {
  const auto [parallel, most] = file_system_and_node_size(comm, node_comm, path);
  return parallel || turns ? std::min(2, most) : 1;
}

int auto_readers_per_node(MPI_Comm comm, MPI_Comm node_comm, const std::string& path) {
  const auto [parallel, most] = file_system_and_node_size(comm, node_comm, path);
  return parallel ? std::min(2, most) : most;
}

NodeWriters choose_writers(MPI_Comm comm, MPI_Comm node_comm, int per_node, const std::string& path, bool turns) {
  if (per_node <= 0) per_node = auto_writers_per_node(comm, node_comm, path, turns);
  int rank = 0, size = 1, node_rank = 0;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  MPI_Comm_rank(node_comm, &node_rank);
  NodeWriters w;
  w.is_writer = node_rank < std::max(1, per_node);
  check_mpi(MPI_Comm_split(comm, w.is_writer ? 0 : MPI_UNDEFINED, rank, &w.comm), "MPI_Comm_split");
  std::vector<int> flags(static_cast<std::size_t>(size));
  int me = w.is_writer ? 1 : 0;
  MPI_Allgather(&me, 1, MPI_INT, flags.data(), 1, MPI_INT, comm);
  for (int r = 0; r < size; ++r)
    if (flags[static_cast<std::size_t>(r)]) w.ranks.push_back(r);
  if (w.is_writer) MPI_Comm_rank(w.comm, &w.index);
  return w;
}

NodeWindow::NodeWindow(MPI_Comm comm, MPI_Comm node_comm, std::int64_t bytes, const std::string& what, int count,
                       bool populate)
    : ncounters(count) {
  std::int64_t node_bytes = bytes;  // one segment for the node's window
  MPI_Allreduce(MPI_IN_PLACE, &node_bytes, 1, MPI_INT64_T, MPI_SUM, node_comm);
  const std::string why = what + " (" + std::to_string(bytes) + " bytes of shared memory on this rank; the option buffer_bytes sets it): ";
  collective(comm, [&] {
    struct rlimit rl {};
    if (::getrlimit(RLIMIT_FSIZE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
        static_cast<std::int64_t>(rl.rlim_cur) < node_bytes + (std::int64_t{1} << 20))
      throw IoError(why + write_failure_reason("/dev/shm/x", static_cast<std::int64_t>(rl.rlim_cur) + 1));
  });
  MPI_Info info;
  MPI_Info_create(&info);
  MPI_Info_set(info, "alloc_shared_noncontig", "true");
  MPI_Comm_set_errhandler(node_comm, MPI_ERRORS_RETURN);
  int node_rank = 0;
  MPI_Comm_rank(node_comm, &node_rank);
  MPI_Comm_size(node_comm, &node_size);
  // Node rank 0's part ends with the barrier's words (fence()), on cache lines of their own,
  // then the counters (arrive()).
  control_bytes = kControlBytes + (static_cast<std::int64_t>(count) * 4 + kLine - 1) / kLine * kLine;
  const std::int64_t own = node_rank == 0 ? (bytes + kLine - 1) / kLine * kLine + control_bytes : bytes;
  void* base = nullptr;
  const int rc = MPI_Win_allocate_shared(static_cast<MPI_Aint>(own), 1, info, node_comm, &base, &win);
  MPI_Info_free(&info);
  // The barrier's words are set before the check below, a synchronisation every rank
  // passes, so that no rank uses them unset.
  MPI_Aint size0 = 0;
  int disp = 1;
  void* base0 = nullptr;
  if (rc == MPI_SUCCESS) {
    MPI_Win_shared_query(win, 0, &size0, &disp, &base0);
    control = reinterpret_cast<Control*>(static_cast<unsigned char*>(base0) + size0 - control_bytes);
    counters = reinterpret_cast<std::uint32_t*>(reinterpret_cast<unsigned char*>(control) + kControlBytes);
    if (node_rank == 0) {
      new (control) Control();
      std::fill(counters, counters + ncounters, 0u);
    }
  }
  collective(comm, [&] {
    if (rc != MPI_SUCCESS) throw IoError(why + write_failure_reason("/dev/shm/x", bytes));
  });
  mine = static_cast<unsigned char*>(base);
#if defined(__linux__) && defined(MADV_POPULATE_WRITE)
  // Every rank maps the whole node's window now, the pages allocated once: faulting 16 MiB
  // in page by page, every rank for itself, cost the first frame 13 ms (4 ranks, 2 cores).
  // Kernels before 5.14 refuse the advice and the pages come on first use, as before.
  if (populate)
    for (int r = 0; r < node_size; ++r) {
      MPI_Aint part = 0;
      int unit = 1;
      void* at = nullptr;
      MPI_Win_shared_query(win, r, &part, &unit, &at);
      if (part <= 0) continue;
      const auto page = static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE));
      const auto first = reinterpret_cast<std::uintptr_t>(at) / page * page;
      ::madvise(reinterpret_cast<void*>(first), reinterpret_cast<std::uintptr_t>(at) + static_cast<std::uintptr_t>(part) - first,
                MADV_POPULATE_WRITE);
    }
#endif
  MPI_Win_lock_all(MPI_MODE_NOCHECK, win);
  MPI_Win_sync(win);
  spin = node_size <= online_cores();
}

NodeWindow::~NodeWindow() = default;

unsigned char* NodeWindow::of(int node_rank) const {
  MPI_Aint size = 0;
  int disp = 1;
  void* ptr = nullptr;
  MPI_Win_shared_query(win, node_rank, &size, &disp, &ptr);
  if (node_rank == 0) size -= control_bytes;
  return size > 0 ? static_cast<unsigned char*>(ptr) : nullptr;
}

void NodeWindow::free() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized || win == MPI_WIN_NULL) return;
  MPI_Win_unlock_all(win);
  MPI_Win_free(&win);
}

namespace {

#ifdef __linux__
// Sleeps while *word == seen, at most 0.1 s (the caller rechecks whatever happens).
void futex_wait(std::uint32_t* word, std::uint32_t seen) {
  const struct timespec tick {0, 100000000};
  ::syscall(SYS_futex, word, FUTEX_WAIT, seen, &tick, nullptr, 0);
}
void futex_wake_all(std::uint32_t* word) { ::syscall(SYS_futex, word, FUTEX_WAKE, INT_MAX, nullptr, nullptr, 0); }
#else
void futex_wait(std::uint32_t*, std::uint32_t) { sched_yield(); }
void futex_wake_all(std::uint32_t*) {}
#endif

}  // namespace

void NodeWindow::arrive(int i) const {
  // Stores to the window become visible before the count moves (release); a waiter that
  // sees the count (acquire) sees them. The wake is for waiters asleep on the old value.
  __atomic_add_fetch(&counters[i], 1, __ATOMIC_RELEASE);
  futex_wake_all(&counters[i]);
}

bool NodeWindow::done(int i, std::uint32_t target) const {
  return static_cast<std::int32_t>(__atomic_load_n(&counters[i], __ATOMIC_ACQUIRE) - target) >= 0;
}

void NodeWindow::wait(int i, std::uint32_t target) const {
  for (int k = 0; spin && k < kSpinPauses && !done(i, target); ++k) pause();
  for (;;) {
    const std::uint32_t seen = __atomic_load_n(&counters[i], __ATOMIC_ACQUIRE);
    if (static_cast<std::int32_t>(seen - target) >= 0) return;
    futex_wait(&counters[i], seen);
  }
}

void NodeWindow::fence(MPI_Comm node_comm) const {
  MPI_Win_sync(win);
#ifdef __linux__
  (void)node_comm;
  // A sense-counting barrier: the last rank to arrive resets the count, moves the
  // generation on and wakes the sleepers; the others wait for the generation to move.
  const std::uint32_t gen = __atomic_load_n(&control->generation, __ATOMIC_ACQUIRE);
  if (__atomic_add_fetch(&control->arrived, 1, __ATOMIC_ACQ_REL) == static_cast<std::uint32_t>(node_size)) {
    __atomic_store_n(&control->arrived, 0, __ATOMIC_RELAXED);
    __atomic_add_fetch(&control->generation, 1, __ATOMIC_RELEASE);
    futex_wake_all(&control->generation);
  } else {
    for (int i = 0; spin && i < kSpinPauses && __atomic_load_n(&control->generation, __ATOMIC_ACQUIRE) == gen; ++i) pause();
    while (__atomic_load_n(&control->generation, __ATOMIC_ACQUIRE) == gen) futex_wait(&control->generation, gen);
  }
#else
  MPI_Barrier(node_comm);
#endif
  MPI_Win_sync(win);
}

std::vector<std::string> gather_host_names(MPI_Comm comm) {
  int size = 1;
  MPI_Comm_size(comm, &size);
  char name[MPI_MAX_PROCESSOR_NAME] = {0};
  int len = 0;
  MPI_Get_processor_name(name, &len);
  std::vector<char> all(static_cast<std::size_t>(size) * MPI_MAX_PROCESSOR_NAME);
  MPI_Allgather(name, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, all.data(), MPI_MAX_PROCESSOR_NAME, MPI_CHAR, comm);
  std::vector<std::string> out;
  for (int r = 0; r < size; ++r) out.emplace_back(all.data() + static_cast<std::size_t>(r) * MPI_MAX_PROCESSOR_NAME);
  return out;
}

}  // namespace anabranch::pio
