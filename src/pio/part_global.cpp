#include "pio/part_global.hpp"

#include <algorithm>

#include "core/byteorder.hpp"
#include "core/error.hpp"
#include "formats/epart.hpp"
#include "formats/serafin.hpp"
#include "pio/mpi_util.hpp"

namespace anabranch::pio {
namespace {

// Calls fn(first, count, bytes) for the chunks of a record of `n` items of `size` bytes at
// `offset` that hold any of the sorted `wanted` items.
template <class Fn>
void chunks_with(const serafin::Reader& r, std::int64_t offset, std::int64_t n, int size, const std::vector<std::int64_t>& wanted,
                 Fn&& fn) {
  constexpr std::int64_t kChunk = std::int64_t{1} << 18;
  std::vector<unsigned char> buf;
  for (auto it = wanted.begin(); it != wanted.end();) {
    const std::int64_t first = *it / kChunk * kChunk, count = std::min(kChunk, n - first);
    buf.resize(static_cast<std::size_t>(count * size));
    r.source().read_at(offset + first * size, buf.data(), buf.size());
    fn(first, count, buf.data());
    it = std::lower_bound(it, wanted.end(), first + count);
  }
}

}  // namespace

Mesh read_part_global(MPI_Comm comm, const std::string& geometry, const std::string& partition) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  Mesh m;
  collective(comm, [&] {
    const serafin::Reader geo(geometry);
    const serafin::Header& h = geo.header();
    m.ndp = h.ndp;
    m.nplan = h.nplan();
    const std::int64_t nelem2 = m.nplan > 1 ? h.nelem / (m.nplan - 1) : h.nelem;
    const std::vector<std::int64_t> base = epart::elements_of(partition, rank, size, nelem2);
    std::vector<std::int64_t> elems;
    for (int layer = 0; layer < std::max(1, m.nplan - 1); ++layer)
      for (auto e : base) elems.push_back(e + layer * nelem2);
    // IKLE of this rank's elements.
    std::vector<std::int32_t> ikle;
    ikle.reserve(elems.size() * static_cast<std::size_t>(m.ndp));
    const int row = 4 * m.ndp;
    chunks_with(geo, geo.ikle_offset() + 4, h.nelem, row, elems, [&](std::int64_t first, std::int64_t count, const unsigned char* b) {
      for (auto it = std::lower_bound(elems.begin(), elems.end(), first); it != elems.end() && *it < first + count; ++it)
        for (int k = 0; k < m.ndp; ++k) {
          const auto v = load<std::int32_t>(b + (*it - first) * row + 4 * k, h.byte_order);
          if (v < 1 || v > h.npoin)
            throw FormatError(geometry, "IKLE", geo.ikle_offset() + 4 + *it * row + 4 * k,
                              "node " + std::to_string(v) + " outside 1.." + std::to_string(h.npoin));
          ikle.push_back(v);
        }
    });
    // KNOLG: the nodes of those elements, increasing; IKLE renumbered locally.
    std::vector<std::int64_t> nodes(ikle.begin(), ikle.end());
    std::sort(nodes.begin(), nodes.end());
    nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());
    for (auto& v : ikle) v = static_cast<std::int32_t>(std::lower_bound(nodes.begin(), nodes.end(), v) - nodes.begin() + 1);
    for (auto& n : nodes) --n;  // 0-based for the coordinate reads
    const int rs = geo.layout().real_bytes;
    for (int c = 0; c < 2; ++c) {
      std::vector<double>& out = c == 0 ? m.x : m.y;
      chunks_with(geo, (c == 0 ? geo.x_offset() : geo.y_offset()) + 4, h.npoin, rs, nodes,
                  [&](std::int64_t first, std::int64_t count, const unsigned char* b) {
                    for (auto it = std::lower_bound(nodes.begin(), nodes.end(), first); it != nodes.end() && *it < first + count; ++it)
                      out.push_back(rs == 8 ? load<double>(b + (*it - first) * 8, h.byte_order)
                                            : static_cast<double>(load<float>(b + (*it - first) * 4, h.byte_order)));
                  });
    }
    m.nelem = static_cast<std::int64_t>(elems.size());
    m.npoin = static_cast<std::int64_t>(nodes.size());
    m.ikle = std::move(ikle);
    m.ipobo.reserve(nodes.size());
    for (auto n : nodes) m.ipobo.push_back(static_cast<std::int32_t>(n + 1));
  });
  return m;
}

}  // namespace anabranch::pio
