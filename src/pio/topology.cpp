#include "pio/topology.hpp"

#include <algorithm>
#include <cstring>

#include "core/io.hpp"
#include "pio/mpi_util.hpp"

namespace anabranch::pio {

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

int auto_writers_per_node(MPI_Comm comm, MPI_Comm node_comm, const std::string& path) {
  const auto [parallel, most] = file_system_and_node_size(comm, node_comm, path);
  return parallel ? std::min(2, most) : 1;
}

int auto_readers_per_node(MPI_Comm comm, MPI_Comm node_comm, const std::string& path) {
  const auto [parallel, most] = file_system_and_node_size(comm, node_comm, path);
  return parallel ? std::min(2, most) : most;
}

NodeWriters choose_writers(MPI_Comm comm, MPI_Comm node_comm, int per_node, const std::string& path) {
  if (per_node <= 0) per_node = auto_writers_per_node(comm, node_comm, path);
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
