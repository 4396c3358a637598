#include "io/node_blocks.hpp"

#include <algorithm>
#include <cstring>

#include "core/error.hpp"
#include "parallel/mpi_util.hpp"

namespace anabranch::pio {

NodeBlocks::NodeBlocks(MPI_Comm comm, const std::vector<std::int64_t>& owned, std::int64_t npoin, std::int64_t block)
    : comm_(comm), owned_(static_cast<std::int64_t>(owned.size())) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  block = std::max<std::int64_t>(block, 1);
  send_counts_.assign(static_cast<std::size_t>(size), 0);
  std::int64_t outside = 0;
  for (auto g : owned) {
    const std::int64_t to = g / block;
    if (g < 0 || to >= size) ++outside;
    else ++send_counts_[static_cast<std::size_t>(to)];  // increasing: grouped by block
  }
  std::int64_t bad = outside;
  allreduce(comm, &bad, 1, MPI_INT64_T, MPI_SUM);
  if (bad > 0) throw UsageError("compressed output: a rank owns a node outside the mesh");
  const std::vector<std::int64_t> got = exchange(comm, owned, send_counts_);
  first_ = std::min(npoin, rank * block);
  count_ = std::min(npoin, first_ + block) - first_;
  std::int64_t wrong = static_cast<std::int64_t>(got.size()) != count_ ? 1 : 0;
  allreduce(comm, &wrong, 1, MPI_INT64_T, MPI_SUM);
  if (wrong > 0) throw UsageError("compressed output: the ranks' nodes do not cover the mesh once each");
  place_.resize(got.size());
  for (std::size_t i = 0; i < got.size(); ++i) place_[i] = got[i] - first_;
}

void NodeBlocks::gather(const ValueEncoder& values, int array, int value_bytes, unsigned char* out) const {
  const int words = value_bytes / 4;  // a value's 4-byte words
  std::vector<std::uint32_t> mine(static_cast<std::size_t>(owned_ * words));
  if (owned_ > 0) values.encode(array, 0, owned_, reinterpret_cast<unsigned char*>(mine.data()));
  std::vector<int> counts(send_counts_.size());
  for (std::size_t d = 0; d < counts.size(); ++d) counts[d] = send_counts_[d] * words;
  const std::vector<std::uint32_t> got = exchange(comm_, mine, counts);
  for (std::size_t i = 0; i < place_.size(); ++i)
    std::memcpy(out + place_[i] * value_bytes, got.data() + i * static_cast<std::size_t>(words), static_cast<std::size_t>(value_bytes));
}

}  // namespace anabranch::pio
