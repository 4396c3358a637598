#include "partition/part_global.hpp"

#include <algorithm>
#include <memory>

#include "core/byteorder.hpp"
#include "core/error.hpp"
#include "formats/epart.hpp"
#include "formats/serafin.hpp"
#include "core/io.hpp"
#include "parallel/mpi_util.hpp"
#include "partition/partition_distributed.hpp"

namespace anabranch::pio {

Mesh read_part_global(MPI_Comm comm, const std::string& geometry, const std::string& partition) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  Mesh m;
  std::unique_ptr<serafin::Reader> geo;
  epart::Share share;
  std::int64_t nelem2 = 0, file_bytes = 0;
  // Each rank parses the lines that start in its share of the partition file's bytes.
  collective(comm, [&] {
    geo = std::make_unique<serafin::Reader>(geometry);
    const serafin::Header& h = geo->header();
    m.ndp = h.ndp;
    m.nplan = h.nplan();
    nelem2 = m.nplan > 1 ? h.nelem / (m.nplan - 1) : h.nelem;
    file_bytes = FileSource(partition).size();
    const Slices bytes{file_bytes, size};
    share = epart::read_share(partition, bytes.first(rank), bytes.first(rank + 1), size);
  });
  // The share's first line is the element after the shares before.
  const auto lines = static_cast<std::int64_t>(share.parts.size());
  std::int64_t before = 0, total = 0;
  MPI_Exscan(&lines, &before, 1, MPI_INT64_T, MPI_SUM, comm);
  if (rank == 0) before = 0;  // MPI_Exscan leaves rank 0's undefined
  MPI_Allreduce(&lines, &total, 1, MPI_INT64_T, MPI_SUM, comm);
  // Each line's element with its rows of IKLE (every layer of a 3D mesh), to the rank of its part.
  const serafin::Header& h = geo->header();
  const int layers = std::max(1, m.nplan - 1), row = 4 * m.ndp, stride = 1 + m.ndp;
  std::vector<std::vector<std::uint64_t>> out(static_cast<std::size_t>(size));
  collective(comm, [&] {  // the first bad line is the lowest rank's (a line past the geometry's count aside)
    if (share.bad_line >= 0 && before + share.bad_line <= nelem2)
      throw FormatError(partition, "line " + std::to_string(before + share.bad_line + 1), share.bad_at, share.bad_what);
  });
  collective(comm, [&] {
    if (total > nelem2 && before + lines > nelem2)
      throw FormatError(partition, "line " + std::to_string(nelem2 + 1), epart::line_offset(partition, share.first_byte, nelem2 - before),
                        "more lines than the geometry's " + std::to_string(nelem2) + " elements");
    if (total < nelem2)
      throw FormatError(partition, "line " + std::to_string(total + 1), file_bytes,
                        "the file ends after " + std::to_string(total) + " elements; the geometry has " + std::to_string(nelem2));
    constexpr std::int64_t kRows = std::int64_t{1} << 16;
    std::vector<unsigned char> buf;
    for (int layer = 0; layer < layers; ++layer)
      for (std::int64_t i = 0; i < lines; i += kRows) {
        const std::int64_t n = std::min(kRows, lines - i), first = before + i + layer * nelem2;
        const std::int64_t at = geo->ikle_offset() + 4 + first * row;
        buf.resize(static_cast<std::size_t>(n * row));
        geo->source().read_at(at, buf.data(), buf.size());
        for (std::int64_t e = 0; e < n; ++e) {
          auto& to = out[static_cast<std::size_t>(share.parts[static_cast<std::size_t>(i + e)])];
          to.push_back(static_cast<std::uint64_t>(first + e));
          for (int k = 0; k < m.ndp; ++k) {
            const auto v = load<std::int32_t>(buf.data() + e * row + 4 * k, h.byte_order);
            if (v < 1 || v > h.npoin)
              throw FormatError(geometry, "IKLE", at + e * row + 4 * k, "node " + std::to_string(v) + " outside 1.." + std::to_string(h.npoin));
            to.push_back(static_cast<std::uint64_t>(v));
          }
        }
      }
  });
  std::vector<std::int32_t>().swap(share.parts);
  const std::vector<std::uint64_t> got = exchange_words(comm, out);
  std::vector<std::vector<std::uint64_t>>().swap(out);
  // This rank's elements in increasing order (layer by layer), their IKLE in local numbering.
  const std::size_t count = got.size() / static_cast<std::size_t>(stride);
  std::vector<std::size_t> order(count);
  for (std::size_t i = 0; i < count; ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return got[a * stride] < got[b * stride]; });
  std::vector<std::int32_t> ikle;
  ikle.reserve(count * static_cast<std::size_t>(m.ndp));
  for (auto i : order)
    for (int k = 0; k < m.ndp; ++k) ikle.push_back(static_cast<std::int32_t>(got[i * stride + 1 + static_cast<std::size_t>(k)]));
  // KNOLG: the nodes of those elements, increasing; their coordinates each read by one rank.
  std::vector<std::int32_t> nodes(ikle.begin(), ikle.end());
  std::sort(nodes.begin(), nodes.end());
  nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());
  for (auto& v : ikle) v = static_cast<std::int32_t>(std::lower_bound(nodes.begin(), nodes.end(), v) - nodes.begin() + 1);
  for (auto& n : nodes) --n;  // 0-based
  const SharedRecord coordinates(comm, h.npoin, nodes);
  m.x = coordinates.read(*geo, geo->x_offset() + 4);
  m.y = coordinates.read(*geo, geo->y_offset() + 4);
  m.nelem = static_cast<std::int64_t>(count);
  m.npoin = static_cast<std::int64_t>(nodes.size());
  m.ikle = std::move(ikle);
  m.ipobo.reserve(nodes.size());
  for (auto n : nodes) m.ipobo.push_back(n + 1);
  return m;
}

}  // namespace anabranch::pio
