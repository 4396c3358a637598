// The partitioner under mpiexec: TELEMAC's case files (control sections, friction zones) on slices.
#include "partition/distributed_util.hpp"

#include <limits>

#include "core/error.hpp"

namespace anabranch::pio {

namespace dist {

// The section walks' view of a mesh held in slices: a node's coordinates read from the file
// when needed; the nearest nodes found on every rank's own range of nodes (streamed), then
// agreed; the slice's elements around the nodes of the walks' discs (a walk only visits
// nodes nearer its end than its beginning) indexed once; each step of a walk agreed among
// the ranks' own first nearest vertices (element order, then vertex order: partel's).
partel::SectionMesh sliced_mesh(MPI_Comm comm, const serafin::Reader& geo, const MeshSlice& s) {
  struct State {
    MPI_Comm comm;
    const serafin::Reader* geo;
    const MeshSlice* s;
    std::vector<std::uint64_t> around;  // (node << 32 | slice element), increasing
    std::pair<double, double> xy(std::int32_t n) const {
      const auto& h = geo->header();
      const int rs = h.precision == Precision::Double ? 8 : 4;
      double v[2];
      for (int c = 0; c < 2; ++c) {
        unsigned char b[8];
        geo->source().read_at((c ? geo->y_offset() : geo->x_offset()) + 4 + static_cast<std::int64_t>(n) * rs, b, static_cast<std::size_t>(rs));
        v[c] = rs == 8 ? load<double>(b, h.byte_order) : static_cast<double>(load<float>(b, h.byte_order));
      }
      return {v[0], v[1]};
    }
    // fn(node, x, y) for this rank's own range of nodes, read in chunks.
    void own_nodes(const std::function<void(std::int32_t, double, double)>& fn) const {
      const Slices nodes{s->npoin, comm_size(comm)};
      const int rank = comm_rank(comm);
      constexpr std::int64_t kChunk = std::int64_t{1} << 18;
      std::vector<std::int32_t> chunk;
      for (std::int64_t a = nodes.first(rank), b = nodes.first(rank + 1); a < b; a += kChunk) {
        chunk.resize(static_cast<std::size_t>(std::min(kChunk, b - a)));
        for (std::size_t i = 0; i < chunk.size(); ++i) chunk[i] = static_cast<std::int32_t>(a + static_cast<std::int64_t>(i));
        const auto x = read_reals_of(*geo, geo->x_offset() + 4, chunk), y = read_reals_of(*geo, geo->y_offset() + 4, chunk);
        for (std::size_t i = 0; i < chunk.size(); ++i) fn(chunk[i], x[i], y[i]);
      }
    }
  };
  auto st = std::make_shared<State>(State{comm, &geo, &s, {}});
  partel::SectionMesh m;
  m.npoin = s.npoin;
  m.d2 = [st](std::int32_t a, std::int32_t b) {
    std::pair<double, double> pa, pb;
    collective(st->comm, [&] { pa = st->xy(a), pb = st->xy(b); });
    const double dx = pa.first - pb.first, dy = pa.second - pb.second;
    return dx * dx + dy * dy;
  };
  m.nearest = [st](const std::vector<double>& xy) {
    struct Loc {
      double d;
      int node;
    };
    const std::size_t n = xy.size() / 2;
    std::vector<Loc> best(n, Loc{std::numeric_limits<double>::infinity(), std::numeric_limits<int>::max()});
    collective(st->comm, [&] {
      st->own_nodes([&](std::int32_t node, double x, double y) {
        for (std::size_t j = 0; j < n; ++j) {
          const double d = (xy[2 * j] - x) * (xy[2 * j] - x) + (xy[2 * j + 1] - y) * (xy[2 * j + 1] - y);
          if (d < best[j].d) best[j] = {d, node};
        }
      });
    });
    // The smallest distance, the lowest node among equals: the first of equals.
    check_mpi(MPI_Allreduce(MPI_IN_PLACE, best.data(), static_cast<int>(n), MPI_DOUBLE_INT, MPI_MINLOC, st->comm), "MPI_Allreduce");
    std::vector<std::int32_t> r;
    for (const auto& b : best) r.push_back(b.node);
    return r;
  };
  m.prepare = [st](const std::vector<std::pair<std::int32_t, std::int32_t>>& ends) {
    std::vector<std::uint64_t> near;
    collective(st->comm, [&] {
      std::vector<std::pair<double, double>> centre;
      std::vector<double> r2;
      for (auto [b, e] : ends) {
        centre.push_back(st->xy(e));
        const auto pb = st->xy(b);
        r2.push_back((pb.first - centre.back().first) * (pb.first - centre.back().first) +
                     (pb.second - centre.back().second) * (pb.second - centre.back().second));
      }
      st->own_nodes([&](std::int32_t node, double x, double y) {
        for (std::size_t j = 0; j < centre.size(); ++j)
          if ((x - centre[j].first) * (x - centre[j].first) + (y - centre[j].second) * (y - centre[j].second) <= r2[j]) {
            near.push_back(static_cast<std::uint64_t>(node));
            break;
          }
      });
    });
    std::vector<std::int32_t> in;  // the walks' nodes, increasing
    for (auto n : all_words(st->comm, near)) in.push_back(static_cast<std::int32_t>(n));
    for (auto [b, e] : ends) in.push_back(b);
    std::sort(in.begin(), in.end());
    const MeshSlice& sl = *st->s;
    for (std::int64_t i = 0; i < sl.count(); ++i)
      for (int k = 0; k < sl.ndp; ++k)
        if (const std::int32_t v = sl.ikle[static_cast<std::size_t>(i * sl.ndp + k)] - 1; std::binary_search(in.begin(), in.end(), v))
          st->around.push_back((static_cast<std::uint64_t>(v) << 32) | static_cast<std::uint64_t>(i));
    radix_sort(st->around);
  };
  m.step = [st](std::int32_t pt, std::int32_t to, double& dist) {
    // This rank's candidate: distance, position (element * 3 + vertex), vertex.
    double mine[3] = {std::numeric_limits<double>::infinity(), 0, -1};
    collective(st->comm, [&] {
      const MeshSlice& sl = *st->s;
      const auto pto = st->xy(to);
      const std::uint64_t key = static_cast<std::uint64_t>(pt) << 32;
      double best = dist;
      for (auto it = std::lower_bound(st->around.begin(), st->around.end(), key); it != st->around.end() && (*it >> 32) == static_cast<std::uint64_t>(pt); ++it) {
        const auto i = static_cast<std::int64_t>(*it & 0xffffffffu);
        for (int k = 0; k < sl.ndp; ++k) {
          const std::int32_t v = sl.ikle[static_cast<std::size_t>(i * sl.ndp + k)] - 1;
          const auto pv = st->xy(v);
          const double d = (pv.first - pto.first) * (pv.first - pto.first) + (pv.second - pto.second) * (pv.second - pto.second);
          if (d < best) {
            best = d;
            mine[0] = d, mine[1] = static_cast<double>((sl.first + i) * sl.ndp + k), mine[2] = v;
          }
        }
      }
    });
    // The smallest distance, then the first position (every candidate is nearer than dist):
    // two reductions, whatever the number of ranks.
    const double inf = std::numeric_limits<double>::infinity();
    double bd = mine[2] >= 0 ? mine[0] : inf;
    check_mpi(MPI_Allreduce(MPI_IN_PLACE, &bd, 1, MPI_DOUBLE, MPI_MIN, st->comm), "MPI_Allreduce");
    struct {
      double position;
      int vertex;
    } first{mine[2] >= 0 && mine[0] == bd ? mine[1] : inf, static_cast<int>(mine[2])};
    check_mpi(MPI_Allreduce(MPI_IN_PLACE, &first, 1, MPI_DOUBLE_INT, MPI_MINLOC, st->comm), "MPI_Allreduce");
    const std::int32_t next = bd < inf ? static_cast<std::int32_t>(first.vertex) : pt;
    if (next != pt) dist = bd;
    return next;
  };
  return m;
}

// The friction zones ("node, zone" records, one per node) of the rank's nodes (`held`, 2D,
// increasing), each rank parsing the lines that start in its share of the file's bytes: a
// line is a record when it holds two values (then record j is line j, as TELEMAC's READ
// takes them); the pairs go to the ranks whose node ranges hold them (a later line wins,
// as it does when read in order), which answer the ranks holding the nodes. Anything else
// (a record over several lines, a blank or short line among the first npoin, a bad value,
// too few lines) and every rank reads the file whole as before, which says what is wrong.
std::optional<std::vector<std::int64_t>> zones_by_shares(MPI_Comm comm, const std::string& path, std::int64_t npoin,
                                                         const std::vector<std::int32_t>& held) {
  const int size = comm_size(comm), rank = comm_rank(comm);
  std::vector<std::int64_t> pairs;  // node (0-based), zone, in line order
  std::int64_t lines = 0, simple_before = -1;  // the first line (share-counted) that is not a plain record
  bool io_error = false;
  try {
    const FileSource src(path);
    const Slices shares{src.size(), size};
    std::int64_t begin = shares.first(rank), end = shares.first(rank + 1);
    if (begin < end) {
      if (begin > 0) {  // the first line starting in the share
        char c = 0;
        src.read_at(begin - 1, &c, 1);
        while (c != '\n' && begin < src.size()) src.read_at(begin++, &c, 1);
      }
      std::string text;
      constexpr std::int64_t kPiece = std::int64_t{1} << 20;
      for (std::int64_t at = begin; at < src.size(); at += kPiece) {  // to the end of the last line starting before `end`
        const auto n = static_cast<std::size_t>(std::min(kPiece, src.size() - at));
        const std::size_t was = text.size();
        text.resize(was + n);
        src.read_at(at, text.data() + was, n);
        if (at + static_cast<std::int64_t>(n) >= end && text.find('\n', static_cast<std::size_t>(std::max<std::int64_t>(end - 1 - begin, 0))) != std::string::npos)
          break;
      }
      std::size_t pos = 0;
      while (pos < text.size() && begin + static_cast<std::int64_t>(pos) < end) {
        const std::size_t eol = std::min(text.find('\n', pos), text.size());
        // The line's values, as a list-directed READ splits them, up to a slash.
        std::vector<std::string> v;
        for (std::size_t i = pos; i < eol && v.size() < 2;) {
          const char c = text[i];
          if (c == ' ' || c == '\t' || c == '\r' || c == ',') {
            ++i;
            continue;
          }
          if (c == '/' || c == '\'' || c == '"') break;
          const std::size_t j = std::min(text.find_first_of(" \t\r,/", i), eol);
          v.emplace_back(text, i, j - i);
          i = j;
        }
        std::int64_t node = 0, zone = 0;
        bool plain = v.size() == 2;
        for (int k = 0; plain && k < 2; ++k) {
          char* stop = nullptr;
          (k ? zone : node) = std::strtoll(v[static_cast<std::size_t>(k)].c_str(), &stop, 10);
          plain = *stop == '\0' && !v[static_cast<std::size_t>(k)].empty();
        }
        if (!plain || node < 1 || node > npoin) {
          if (simple_before < 0) simple_before = lines;
        } else if (simple_before < 0) {
          pairs.push_back(node - 1);
          pairs.push_back(zone);
        }
        ++lines;
        pos = eol + 1;
      }
    }
  } catch (const Error&) {
    io_error = true;
  }
  std::int64_t before = 0, total = 0;
  MPI_Exscan(&lines, &before, 1, MPI_INT64_T, MPI_SUM, comm);
  if (rank == 0) before = 0;
  MPI_Allreduce(&lines, &total, 1, MPI_INT64_T, MPI_SUM, comm);
  // Fine when every line before npoin is a record (lines past it are not read at all).
  int fine = !io_error && total >= npoin && (simple_before < 0 || before + simple_before >= npoin);
  MPI_Allreduce(MPI_IN_PLACE, &fine, 1, MPI_INT, MPI_MIN, comm);
  if (!fine) return std::nullopt;
  // The first npoin records only, to the ranks of their nodes.
  const Slices nodes{npoin, size};
  std::vector<std::vector<std::uint64_t>> out(static_cast<std::size_t>(size));
  for (std::size_t i = 0; i + 1 < pairs.size() && before + static_cast<std::int64_t>(i / 2) < npoin; i += 2) {
    auto& to = out[static_cast<std::size_t>(nodes.owner(pairs[i]))];
    to.push_back(static_cast<std::uint64_t>(pairs[i]));
    to.push_back(static_cast<std::uint64_t>(pairs[i + 1]));
  }
  std::vector<std::int64_t>().swap(pairs);
  const std::int64_t first = nodes.first(rank);
  std::vector<std::int64_t> zone(static_cast<std::size_t>(nodes.first(rank + 1) - first), 0);
  const auto got = exchange_words(comm, out);
  for (std::size_t i = 0; i + 1 < got.size(); i += 2)  // in line order: a later line wins
    zone[static_cast<std::size_t>(static_cast<std::int64_t>(got[i]) - first)] = static_cast<std::int64_t>(got[i + 1]);
  // Each rank's nodes asked of the ranks holding their zones; the answers come in the order asked.
  std::vector<int> counts(static_cast<std::size_t>(size), 0);
  for (auto n : held) ++counts[static_cast<std::size_t>(nodes.owner(n))];
  std::vector<int> asked_counts;
  std::vector<std::uint64_t> asked = exchange(comm, std::vector<std::uint64_t>(held.begin(), held.end()), counts, &asked_counts);
  for (auto& q : asked) q = static_cast<std::uint64_t>(zone[static_cast<std::size_t>(static_cast<std::int64_t>(q) - first)]);
  const auto answers = exchange(comm, asked, asked_counts);
  return std::vector<std::int64_t>(answers.begin(), answers.end());
}

// One part being written here.

}  // namespace dist

}  // namespace anabranch::pio
