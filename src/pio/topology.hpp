// Where the ranks of a communicator run: the shared-memory (node) split, the node count,
// and which ranks write for their node.
#pragma once
#include <mpi.h>

#include <string>
#include <vector>

namespace anabranch::pio {

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

// Collective: host names of all ranks, gathered on every rank (seed 003's method of
// counting nodes by name).
std::vector<std::string> gather_host_names(MPI_Comm comm);

}  // namespace anabranch::pio
