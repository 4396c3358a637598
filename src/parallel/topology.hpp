// Where the ranks of a communicator run: the shared-memory (node) split, the node count,
// and which ranks write for their node.
#pragma once
#include <mpi.h>

#include <cstdint>
#include <string>
#include <vector>

namespace anabranch::pio {

// The ranks of comm that share memory with this one (MPI_Comm_split_type SHARED): a node.
// Every node split of anabranch goes through here. For tests only, ANABRANCH_TEST_NODES=N
// (N > 1) cuts each node further into N nodes of consecutive ranks of comm, so that the
// inter-node paths (values for other nodes' writers and readers by MPI) run on one machine
// under any MPI (MPICH's MPIR_CVAR_NUM_CLIQUES does the same inside MPICH). Node windows
// stay POSIX shared memory, which works within every emulated node.
MPI_Comm split_node(MPI_Comm comm);

struct Topology {
  int rank = 0, size = 1;
  MPI_Comm node_comm = MPI_COMM_NULL;  // ranks sharing memory with this one
  int node_rank = 0, node_size = 1;
  int node_index = 0, nodes = 1;       // this node's number and the node count
  std::vector<std::string> hosts;      // host name of each node (filled by describe())

  // Collective over comm.
  explicit Topology(MPI_Comm comm);
  ~Topology();
  Topology(const Topology&) = delete;
  Topology& operator=(const Topology&) = delete;
};

// Who aggregates, and so which automatic rule picks how many per node (see auto_per_node).
enum class Aggregators { Writers, Readers };

// The writers (or readers) of the aggregating strategies: the first `per_node` ranks of
// every node (so rank 0 always is one), their ranks in comm in increasing order, and their
// communicator: comm itself when every rank is one (no split made), else a new one.
struct NodeWriters {
  bool is_writer = false;
  int index = 0;               // this writer's number among the writers (writers only)
  std::vector<int> ranks;      // comm ranks of all writers
  std::vector<int> node_rank;  // per writer: its rank in node_comm (MPI_UNDEFINED: on another node)
};
// Collective over comm; node_comm: comm's shared-memory split. per_node 0: automatic, from
// the file system under `path` (writers_per_node=auto, readers_per_node=auto). One
// MPI_Allreduce, plus a gather when some ranks are not writers.
NodeWriters choose_writers(MPI_Comm comm, MPI_Comm node_comm, int per_node, const std::string& path,
                           Aggregators role = Aggregators::Writers);

// The automatic number per node, from whether the file system is parallel or networked and
// the most ranks a node holds:
// - Writers (the aggregated strategies, whose writers take turns at the file, one writing
//   while the other encodes): 2, or the node's ranks if fewer, on any file system (more
//   writers per node would contend for the node's network link on a parallel one, seed
//   003's rule; and the kernel serialises writes to one file on a node-local one).
// - Readers (aggregated reading): every rank of a node on a node-local file system, where
//   reads of one file run side by side (no inode lock as for writes) and each rank reading
//   1/P of the file contiguously is the raw pread ceiling's own pattern; 2 per node on a
//   parallel or network one, for the node's link as for writes.
int auto_per_node(bool parallel_fs, int most, Aggregators role);
// Collective: auto_per_node for the file system under `path`, decided on rank 0 of comm.
int auto_writers_per_node(MPI_Comm comm, MPI_Comm node_comm, const std::string& path,
                          Aggregators role = Aggregators::Writers);

// One shared-memory window per node: every rank gives `bytes` (0 for none) and can reach
// every other rank's part on its node. The memory is a POSIX shared-memory object (a file
// in /dev/shm on Linux) that node rank 0 makes and the others map; its name is gone once
// every rank has it, the memory with the last rank's mapping. Made by hand rather than with
// MPI_Win_allocate_shared, whose set-up and free took 3-6 ms of a reader's 12 ms open and
// close at 8 ranks on 2 cores. A file-size limit below its size, a full /dev/shm or a
// failed mapping is a failure naming `what` (every rank of comm throws the same error).
struct NodeWindow {
  unsigned char* base = nullptr;  // the node's window as this rank maps it
  std::size_t mapped = 0;
  std::vector<std::int64_t> part_bytes, part_offset;  // per node rank
  unsigned char* mine = nullptr;
  struct Control;              // the node's barrier, in node rank 0's part (see fence())
  Control* control = nullptr;
  std::uint32_t* counters = nullptr;  // `ncounters` words after it (see arrive())
  int ncounters = 0;
  std::int64_t control_bytes = 0;     // what node rank 0's part holds beyond its `bytes`
  int node_size = 1;
  bool spin = false;           // waiters spin a little before sleeping: a core per rank
  // Collective over comm; node_comm: its shared-memory split. `count`: how many arrival
  // counters the node shares (0 for none). `populate`: the pages are allocated and mapped
  // in every rank now rather than on first use (Linux 5.14 and later).
  NodeWindow(MPI_Comm comm, MPI_Comm node_comm, std::int64_t bytes, const std::string& what, int count = 0,
             bool populate = false);
  ~NodeWindow();  // free()
  NodeWindow(const NodeWindow&) = delete;
  NodeWindow& operator=(const NodeWindow&) = delete;
  // The part of node rank r (nullptr when it gave none).
  unsigned char* of(int node_rank) const;
  // Unmaps this rank's view (the memory goes with the node's last view); not collective.
  void free();
  // Makes this node's writes visible to its ranks: every rank of the node has arrived
  // before any goes on. Waiting ranks sleep (a futex in the window, Linux) rather than
  // poll as MPI_Barrier does, so that on a node with more ranks than cores the ranks
  // still working (encoding, writing) get the cores; elsewhere, MPI_Barrier.
  void fence(MPI_Comm node_comm) const;
  // Point-to-point progress without a barrier: arrive(i) publishes this rank's writes and
  // adds one to counter i; done(i, target) tells (and wait(i, target) sleeps until) it
  // has reached target, after which the arrivals' writes are visible. Counters only grow
  // (modulo 2^32: targets are compared by difference); the node's ranks agree on targets.
  void arrive(int i) const;
  bool done(int i, std::uint32_t target) const;
  void wait(int i, std::uint32_t target) const;
};

// Collective: host names of all ranks, gathered on every rank (seed 003's method of
// counting nodes by name).
std::vector<std::string> gather_host_names(MPI_Comm comm);

}  // namespace anabranch::pio
