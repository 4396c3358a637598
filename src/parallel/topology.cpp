#include "parallel/topology.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/statvfs.h>
#include <unistd.h>
#ifdef __linux__
#include <linux/futex.h>
#include <sys/syscall.h>
#else
#include <sched.h>
#endif

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <new>

#include "core/error.hpp"
#include "core/io.hpp"
#include "parallel/mpi_util.hpp"

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

MPI_Comm split_node(MPI_Comm comm) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  MPI_Comm node = MPI_COMM_NULL;
  check_mpi(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node), "MPI_Comm_split_type");
  const char* env = std::getenv("ANABRANCH_TEST_NODES");
  const long emulated = env ? std::strtol(env, nullptr, 10) : 0;
  if (emulated > 1) {
    const int color = static_cast<int>(static_cast<long long>(rank) * emulated / size);
    MPI_Comm cut = MPI_COMM_NULL;
    check_mpi(MPI_Comm_split(node, color, rank, &cut), "MPI_Comm_split");
    MPI_Comm_free(&node);
    node = cut;
  }
  return node;
}

Topology::Topology(MPI_Comm comm) {
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  node_comm = split_node(comm);
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
// system; and the most ranks any node holds (one MPI_Allreduce).
std::pair<bool, int> file_system_and_node_size(MPI_Comm comm, MPI_Comm node_comm, const std::string& path) {
  int rank = 0, node_size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(node_comm, &node_size);
  int both[2] = {0, node_size};  // rank 0's file system; the largest node decides
  if (rank == 0) {
    const auto slash = path.rfind('/');
    const std::string fs = file_system_name(slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash));
    both[0] = fs == "lustre" || fs == "gpfs" || fs == "beegfs" || fs == "nfs" ? 1 : 0;
  }
  MPI_Allreduce(MPI_IN_PLACE, both, 2, MPI_INT, MPI_MAX, comm);
  return {both[0] == 1, both[1]};
}

}  // namespace

int auto_per_node(bool parallel_fs, int most, Aggregators role) {
  switch (role) {
    case Aggregators::Writers: return std::min(2, most);
    case Aggregators::Readers: return parallel_fs ? std::min(2, most) : most;
  }
  return 1;
}

int auto_writers_per_node(MPI_Comm comm, MPI_Comm node_comm, const std::string& path, Aggregators role) {
  const auto [parallel, most] = file_system_and_node_size(comm, node_comm, path);
  return auto_per_node(parallel, most, role);
}

NodeWriters choose_writers(MPI_Comm comm, MPI_Comm node_comm, int per_node, const std::string& path, Aggregators role) {
  const auto [parallel, most] = file_system_and_node_size(comm, node_comm, path);
  if (per_node <= 0) per_node = auto_per_node(parallel, most, role);
  int rank = 0, size = 1, node_rank = 0;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  MPI_Comm_rank(node_comm, &node_rank);
  NodeWriters w;
  w.is_writer = node_rank < std::max(1, per_node);
  std::vector<int> flags(static_cast<std::size_t>(size), 1);
  int me = w.is_writer ? 1 : 0;
  if (per_node < most) MPI_Allgather(&me, 1, MPI_INT, flags.data(), 1, MPI_INT, comm);  // else every rank of every node
  for (int r = 0; r < size; ++r)
    if (flags[static_cast<std::size_t>(r)]) {
      if (r == rank) w.index = static_cast<int>(w.ranks.size());
      w.ranks.push_back(r);
    }
  MPI_Group world, node;
  MPI_Comm_group(comm, &world);
  MPI_Comm_group(node_comm, &node);
  w.node_rank.assign(w.ranks.size(), MPI_UNDEFINED);
  MPI_Group_translate_ranks(world, static_cast<int>(w.ranks.size()), w.ranks.data(), node, w.node_rank.data());
  MPI_Group_free(&world);
  MPI_Group_free(&node);
  return w;
}

namespace {

// A name for a node's shared-memory object, unique on the machine while it exists.
std::string shm_name(long long pid, long long serial) { return "/anabranch." + std::to_string(pid) + "." + std::to_string(serial); }

}  // namespace

NodeWindow::NodeWindow(MPI_Comm comm, MPI_Comm node_comm, std::int64_t bytes, const std::string& what, int count,
                       bool populate)
    : ncounters(count) {
  int node_rank = 0;
  MPI_Comm_rank(node_comm, &node_rank);
  MPI_Comm_size(node_comm, &node_size);
  // The parts, in node rank order, each on pages of its own; node rank 0's part ends with
  // the barrier's words (fence()), on cache lines of their own, then the counters (arrive()).
  control_bytes = kControlBytes + (static_cast<std::int64_t>(count) * 4 + kLine - 1) / kLine * kLine;
  const auto page = static_cast<std::int64_t>(::sysconf(_SC_PAGESIZE));
  const std::int64_t own = node_rank == 0 ? (bytes + kLine - 1) / kLine * kLine + control_bytes : bytes;
  part_bytes.assign(static_cast<std::size_t>(node_size), 0);
  MPI_Allgather(&own, 1, MPI_INT64_T, part_bytes.data(), 1, MPI_INT64_T, node_comm);
  part_offset.assign(static_cast<std::size_t>(node_size) + 1, 0);
  for (int r = 0; r < node_size; ++r)
    part_offset[static_cast<std::size_t>(r) + 1] =
        part_offset[static_cast<std::size_t>(r)] + (part_bytes[static_cast<std::size_t>(r)] + page - 1) / page * page;
  const std::int64_t total = part_offset.back();
  const std::string why = what + " (" + std::to_string(bytes) + " bytes of shared memory on this rank; the option buffer_bytes sets it): ";
  // Node rank 0 makes the object (a file in /dev/shm on Linux); the others map it by name;
  // once every rank of comm has, the name goes, and the object with the last mapping. Its
  // pages come on first use (reserving them all at once cost a reader's open 2 ms at 8
  // ranks) or, with `populate`, now. So that a full /dev/shm is an error here and not a
  // SIGBUS later, its free room is checked and a failed populate is one. A file-size limit
  // below its size is refused first (writing past it would raise SIGXFSZ).
  static long long serial = 0;
  long long made[3] = {0, static_cast<long long>(::getpid()), serial++};  // {errno + 1 or 0, pid, serial}
  std::string failure;
  mapped = static_cast<std::size_t>(std::max<std::int64_t>(total, 1));
  // This rank's view of the object open as fd: 0, or why not (errno).
  auto map = [&](int fd) {
    void* p = ::mmap(nullptr, mapped, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) return errno;
    base = static_cast<unsigned char*>(p);
    return 0;
  };
  if (node_rank == 0) {
    struct rlimit rl {};
    if (::getrlimit(RLIMIT_FSIZE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY && static_cast<std::int64_t>(rl.rlim_cur) < total + (std::int64_t{1} << 20)) {
      failure = write_failure_reason("/dev/shm/x", static_cast<std::int64_t>(rl.rlim_cur) + 1);
      made[0] = EFBIG + 1;
    } else {
      const std::string name = shm_name(made[1], made[2]);
      const int fd = ::shm_open(name.c_str(), O_RDWR | O_CREAT | O_EXCL, 0600);
      int err = fd < 0 ? errno : (::ftruncate(fd, static_cast<off_t>(mapped)) ? errno : 0);
      struct statvfs room {};
      if (!err && ::fstatvfs(fd, &room) == 0 && static_cast<std::int64_t>(room.f_bavail) * static_cast<std::int64_t>(room.f_frsize) < total)
        err = ENOSPC;
      if (!err) err = map(fd);
      if (fd >= 0) ::close(fd);
      if (err) {
        if (fd >= 0) ::shm_unlink(name.c_str());
        failure = std::string("/dev/shm") + name + ": " + std::strerror(err);
        made[0] = err + 1;
      }
    }
  }
  MPI_Bcast(made, 3, MPI_LONG_LONG, 0, node_comm);
  const std::string name = shm_name(made[1], made[2]);
  if (node_rank != 0 && made[0] == 0) {
    const int fd = ::shm_open(name.c_str(), O_RDWR, 0600);
    const int err = fd < 0 ? errno : map(fd);
    if (fd >= 0) ::close(fd);
    if (err) failure = "/dev/shm" + name + ": " + std::strerror(err);
  } else if (node_rank != 0) {
    failure = "node rank 0 could not make it";
  }
  if (base) {
    control = reinterpret_cast<Control*>(base + part_offset[0] + part_bytes[0] - control_bytes);
    counters = reinterpret_cast<std::uint32_t*>(reinterpret_cast<unsigned char*>(control) + kControlBytes);
    if (node_rank == 0) {  // set before the agreement below, which every rank passes before using them
      new (control) Control();
      std::fill(counters, counters + ncounters, 0u);
    }
    mine = base + part_offset[static_cast<std::size_t>(node_rank)];
#if defined(__linux__) && defined(MADV_POPULATE_WRITE)
    // The whole window mapped in every rank now: faulting 16 MiB in page by page, every rank
    // for itself, cost the first frame 13 ms (4 ranks, 2 cores). Kernels before 5.14 refuse
    // the advice and the pages are mapped on first use.
    if (populate && ::madvise(base, mapped, MADV_POPULATE_WRITE) != 0 && (errno == EFAULT || errno == ENOMEM) && failure.empty())
      failure = "/dev/shm" + name + ": " + std::strerror(ENOSPC);
#else
    (void)populate;
#endif
  }
  try {
    collective(comm, [&] {
      if (!failure.empty()) throw IoError(why + failure);
    });
  } catch (...) {
    if (node_rank == 0 && made[0] == 0) ::shm_unlink(name.c_str());
    free();
    throw;
  }
  if (node_rank == 0) ::shm_unlink(name.c_str());
  __atomic_thread_fence(__ATOMIC_SEQ_CST);
  spin = node_size <= online_cores();
}

NodeWindow::~NodeWindow() { free(); }

unsigned char* NodeWindow::of(int node_rank) const {
  const auto r = static_cast<std::size_t>(node_rank);
  const std::int64_t size = part_bytes[r] - (node_rank == 0 ? control_bytes : 0);
  return size > 0 && base ? base + part_offset[r] : nullptr;
}

void NodeWindow::free() {
  if (base) ::munmap(base, mapped);
  base = mine = nullptr;
  control = nullptr;
  counters = nullptr;
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
  __atomic_thread_fence(__ATOMIC_SEQ_CST);
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
  __atomic_thread_fence(__ATOMIC_SEQ_CST);
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
