#include "pio/partition_distributed.hpp"

#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <limits>

#include "core/byteorder.hpp"
#include "core/error.hpp"
#include "core/io.hpp"
#include "core/outputs.hpp"
#include "partition/partitioner.hpp"
#include "pio/mpi_util.hpp"
#include "pio/strategy.hpp"

#ifdef ANABRANCH_HAVE_PTSCOTCH
#include <ptscotch.h>
#endif

namespace anabranch::pio {

int Slices::owner(std::int64_t e) const {
  const std::int64_t q = n / size, rem = n % size;
  if (e < (q + 1) * rem) return static_cast<int>(e / (q + 1));
  return static_cast<int>(rem + (e - (q + 1) * rem) / q);
}

namespace {

int comm_rank(MPI_Comm comm) {
  int r = 0;
  MPI_Comm_rank(comm, &r);
  return r;
}
int comm_size(MPI_Comm comm) {
  int s = 1;
  MPI_Comm_size(comm, &s);
  return s;
}

// All-to-all of items grouped by destination: `out` sorted by destination with counts[d]
// items for rank d. Returns what this rank receives, grouped by source.
template <class T>
std::vector<T> exchange(MPI_Comm comm, const std::vector<T>& out, const std::vector<int>& counts) {
  const int size = comm_size(comm);
  static_assert(sizeof(T) % 8 == 0, "items of whole 8-byte words");
  constexpr int words = sizeof(T) / 8;
  std::vector<int> rcounts(static_cast<std::size_t>(size)), sdispl(static_cast<std::size_t>(size) + 1, 0),
      rdispl(static_cast<std::size_t>(size) + 1, 0), sc(static_cast<std::size_t>(size)), rc(static_cast<std::size_t>(size));
  check_mpi(MPI_Alltoall(counts.data(), 1, MPI_INT, rcounts.data(), 1, MPI_INT, comm), "MPI_Alltoall");
  for (int d = 0; d < size; ++d) {
    const auto i = static_cast<std::size_t>(d);
    sc[i] = counts[i] * words;
    rc[i] = rcounts[i] * words;
    sdispl[i + 1] = sdispl[i] + sc[i];
    rdispl[i + 1] = rdispl[i] + rc[i];
  }
  std::vector<T> in(static_cast<std::size_t>(rdispl.back() / words));
  check_mpi(MPI_Alltoallv(out.data(), sc.data(), sdispl.data(), MPI_UINT64_T, in.data(), rc.data(), rdispl.data(), MPI_UINT64_T,
                          comm),
            "MPI_Alltoallv");
  return in;
}

// Groups items by destination (a stable counting sort); dest(item) in 0..size-1.
template <class T, class Dest>
std::vector<T> by_destination(std::vector<T>&& items, int size, Dest dest, std::vector<int>& counts) {
  counts.assign(static_cast<std::size_t>(size), 0);
  for (const auto& it : items) ++counts[static_cast<std::size_t>(dest(it))];
  std::vector<std::int64_t> at(static_cast<std::size_t>(size) + 1, 0);
  for (int d = 0; d < size; ++d) at[static_cast<std::size_t>(d) + 1] = at[static_cast<std::size_t>(d)] + counts[static_cast<std::size_t>(d)];
  std::vector<T> out(items.size());
  for (const auto& it : items) out[static_cast<std::size_t>(at[static_cast<std::size_t>(dest(it))]++)] = it;
  std::vector<T>().swap(items);
  return out;
}

// One element edge: its two nodes (the lower in the high half), the element, and (for the
// quality report) the element's part.
struct EdgeRecord {
  std::uint64_t key;
  std::uint64_t elem_part;  // element in the low 32 bits, part in the high ones
  std::int64_t elem() const { return static_cast<std::int64_t>(elem_part & 0xffffffffu); }
  std::int64_t part() const { return static_cast<std::int64_t>(elem_part >> 32); }
};

// Every edge of the slice's elements, sent to the rank its key hashes to; there, sorted by
// key, an edge's records sit together (two for an edge inside the mesh). An edge whose two
// elements are both in the slice is matched here and never sent (a slice of neighbouring
// elements sends only its rim).
template <class OnPair>
void edge_pairs(MPI_Comm comm, const MeshSlice& s, const std::vector<std::int32_t>& parts, OnPair&& on_pair) {
  const int size = comm_size(comm);
  std::vector<EdgeRecord> edges;
  edges.reserve(static_cast<std::size_t>(s.count() * s.ndp));
  for (std::int64_t i = 0; i < s.count(); ++i) {
    const std::int32_t* v = s.ikle.data() + i * s.ndp;
    const std::uint64_t part = parts.empty() ? 0 : static_cast<std::uint64_t>(parts[static_cast<std::size_t>(i)]);
    for (int k = 0; k < s.ndp; ++k) {
      auto a = static_cast<std::uint64_t>(v[k]), b = static_cast<std::uint64_t>(v[(k + 1) % s.ndp]);
      if (a > b) std::swap(a, b);
      edges.push_back({(a << 32) | b, (part << 32) | static_cast<std::uint64_t>(s.first + i)});
    }
  }
  auto by_key = [](const EdgeRecord& x, const EdgeRecord& y) { return x.key != y.key ? x.key < y.key : x.elem_part < y.elem_part; };
  // Match inside the slice first: what is left is the rim (and the mesh's own boundary).
  std::sort(edges.begin(), edges.end(), by_key);
  std::size_t kept = 0;
  for (std::size_t i = 0; i < edges.size();) {
    std::size_t j = i + 1;
    while (j < edges.size() && edges[j].key == edges[i].key) ++j;
    if (j - i >= 2) {
      for (std::size_t a = i; a < j; ++a)
        for (std::size_t b = a + 1; b < j; ++b) on_pair(edges[a], edges[b]);
    } else {
      edges[kept++] = edges[i];
    }
    i = j;
  }
  edges.resize(kept);
  edges.shrink_to_fit();
  if (size == 1) return;
  std::vector<int> counts;
  auto dest = [size](const EdgeRecord& r) { return static_cast<int>((r.key * 0x9E3779B97F4A7C15ull >> 33) % static_cast<std::uint64_t>(size)); };
  edges = by_destination(std::move(edges), size, dest, counts);
  std::vector<EdgeRecord> got = exchange(comm, edges, counts);
  std::vector<EdgeRecord>().swap(edges);
  std::sort(got.begin(), got.end(), by_key);
  for (std::size_t i = 0; i < got.size();) {
    std::size_t j = i + 1;
    while (j < got.size() && got[j].key == got[i].key) ++j;
    for (std::size_t a = i; a < j; ++a)
      for (std::size_t b = a + 1; b < j; ++b) on_pair(got[a], got[b]);
    i = j;
  }
}

// Reads the reals of `nodes` (sorted, 0-based) from a NPOIN-real record at `offset` (after
// its marker), to doubles; the record is read in chunks holding any wanted node.
std::vector<double> read_reals_of(const serafin::Reader& r, std::int64_t offset, const std::vector<std::int32_t>& nodes) {
  const auto& h = r.header();
  const int rs = h.precision == Precision::Double ? 8 : 4;
  constexpr std::int64_t kChunk = std::int64_t{1} << 18;
  std::vector<double> out;
  out.reserve(nodes.size());
  std::vector<unsigned char> buf;
  for (auto it = nodes.begin(); it != nodes.end();) {
    const std::int64_t first = *it / kChunk * kChunk, count = std::min(kChunk, h.npoin - first);
    buf.resize(static_cast<std::size_t>(count * rs));
    r.source().read_at(offset + first * rs, buf.data(), buf.size());
    for (; it != nodes.end() && *it < first + count; ++it) {
      const unsigned char* p = buf.data() + (*it - first) * rs;
      out.push_back(rs == 8 ? load<double>(p, h.byte_order) : static_cast<double>(load<float>(p, h.byte_order)));
    }
  }
  return out;
}

}  // namespace

MeshSlice read_mesh_slice(MPI_Comm comm, const serafin::Reader& mesh) {
  MeshSlice s;
  collective(comm, [&] {
    const auto& h = mesh.header();
    const int nplan = h.nplan();
    if (nplan > 1 && h.ndp != 6)
      throw UsageError(mesh.name() + ": a 3D mesh must be made of prisms (NDP 6), this one has NDP " + std::to_string(h.ndp));
    s.ndp = nplan > 1 ? 3 : h.ndp;
    s.nelem = nplan > 1 ? h.nelem / (nplan - 1) : h.nelem;
    s.npoin = h.npoin / nplan;
    const Slices slices{s.nelem, comm_size(comm)};
    const int rank = comm_rank(comm);
    s.first = slices.first(rank);
    const std::int64_t count = slices.first(rank + 1) - s.first, row = 4 * h.ndp;
    s.ikle.resize(static_cast<std::size_t>(count * s.ndp));
    constexpr std::int64_t kRows = std::int64_t{1} << 16;
    std::vector<unsigned char> buf;
    for (std::int64_t i = 0; i < count; i += kRows) {
      const std::int64_t n = std::min(kRows, count - i), at = mesh.ikle_offset() + 4 + (s.first + i) * row;
      buf.resize(static_cast<std::size_t>(n * row));
      mesh.source().read_at(at, buf.data(), buf.size());
      for (std::int64_t e = 0; e < n; ++e)
        for (int k = 0; k < s.ndp; ++k) {
          const auto v = load<std::int32_t>(buf.data() + e * row + 4 * k, h.byte_order);
          if (v < 1 || v > s.npoin)
            throw FormatError(mesh.name(), "IKLE", at + e * row + 4 * k,
                              "node " + std::to_string(v) + " outside 1.." + std::to_string(s.npoin));
          s.ikle[static_cast<std::size_t>((i + e) * s.ndp + k)] = v;
        }
    }
  });
  return s;
}

std::vector<std::int32_t> read_weights_slice(MPI_Comm comm, const std::string& path, const MeshSlice& slice) {
  std::vector<std::int32_t> w;
  collective(comm, [&] {
    // A text file of one integer per element: every rank scans it (numbers are short) and
    // keeps its slice.
    std::ifstream in(path);
    if (!in) throw IoError::from_errno("cannot open", path);
    const std::int64_t last = slice.first + slice.count();
    std::int64_t i = 0;
    long long v;
    while (in >> v) {
      if (v < 0 || v > 1000000000)
        throw FormatError(path + ": weight " + std::to_string(i + 1) + " = " + std::to_string(v) + " is out of range 0..1e9");
      if (i >= slice.first && i < last) w.push_back(static_cast<std::int32_t>(v));
      ++i;
    }
    if (!in.eof()) throw FormatError(path + ": entry " + std::to_string(i + 1) + " is not an integer");
    if (i != slice.nelem)
      throw UsageError(path + ": " + std::to_string(i) + " weights for " + std::to_string(slice.nelem) + " (2D) elements");
  });
  return w;
}

std::vector<std::int32_t> partition_sfc_distributed(MPI_Comm comm, const serafin::Reader& mesh, const MeshSlice& s,
                                                    int nparts, const std::vector<std::int32_t>& weights) {
  const int size = comm_size(comm), rank = comm_rank(comm);
  const std::int64_t n = s.count();
  std::vector<std::int32_t> parts(static_cast<std::size_t>(n), 0);
  if (nparts <= 1 || s.nelem == 0) return parts;
  struct Key {
    std::uint64_t key;
    std::uint64_t weight;
  };
  std::vector<Key> keys(static_cast<std::size_t>(n));
  double box[4];  // -xmin, xmax, -ymin, ymax
  collective(comm, [&] {
    // The bounding box of every node (all planes), each rank its share of the X and Y records.
    const auto& h = mesh.header();
    const Slices nodes{h.npoin, size};
    std::vector<std::int32_t> mine;
    for (std::int64_t i = nodes.first(rank); i < nodes.first(rank + 1); ++i) mine.push_back(static_cast<std::int32_t>(i));
    box[0] = box[1] = box[2] = box[3] = -std::numeric_limits<double>::infinity();
    for (int c = 0; c < 2; ++c) {
      const auto v = read_reals_of(mesh, (c ? mesh.y_offset() : mesh.x_offset()) + 4, mine);
      for (double d : v) box[2 * c] = std::max(box[2 * c], -d), box[2 * c + 1] = std::max(box[2 * c + 1], d);
    }
    // The coordinates of the slice's nodes.
    std::vector<std::int32_t> used(s.ikle);
    for (auto& u : used) --u;
    std::sort(used.begin(), used.end());
    used.erase(std::unique(used.begin(), used.end()), used.end());
    const auto x = read_reals_of(mesh, mesh.x_offset() + 4, used), y = read_reals_of(mesh, mesh.y_offset() + 4, used);
    MPI_Allreduce(MPI_IN_PLACE, box, 4, MPI_DOUBLE, MPI_MAX, comm);
    const SfcCurve curve(-box[0], box[1], -box[2], box[3], s.nelem);
    for (std::int64_t i = 0; i < n; ++i) {
      const std::int32_t* v = s.ikle.data() + i * s.ndp;
      double cx = 0, cy = 0;
      for (int k = 0; k < s.ndp; ++k) {
        const auto at = static_cast<std::size_t>(std::lower_bound(used.begin(), used.end(), v[k] - 1) - used.begin());
        cx += x[at];
        cy += y[at];
      }
      keys[static_cast<std::size_t>(i)] = {curve.key(cx / s.ndp, cy / s.ndp, s.first + i),
                                           weights.empty() ? 1u : static_cast<std::uint64_t>(weights[static_cast<std::size_t>(i)])};
    }
  });
  const std::uint64_t mask = SfcCurve(0, 0, 0, 0, s.nelem).element_mask();
  auto by_key = [](const Key& a, const Key& b) { return a.key < b.key; };
  std::sort(keys.begin(), keys.end(), by_key);
  if (size > 1) {
    // Sample sort: splitters from regular samples of every rank's sorted keys.
    std::vector<std::uint64_t> samples;
    for (int k = 1; k < size && n > 0; ++k) samples.push_back(keys[static_cast<std::size_t>(n * k / size)].key);
    int ns = static_cast<int>(samples.size());
    std::vector<int> counts(static_cast<std::size_t>(size)), displ(static_cast<std::size_t>(size) + 1, 0);
    MPI_Allgather(&ns, 1, MPI_INT, counts.data(), 1, MPI_INT, comm);
    for (int r = 0; r < size; ++r) displ[static_cast<std::size_t>(r) + 1] = displ[static_cast<std::size_t>(r)] + counts[static_cast<std::size_t>(r)];
    std::vector<std::uint64_t> all(static_cast<std::size_t>(displ.back()));
    MPI_Allgatherv(samples.data(), ns, MPI_UINT64_T, all.data(), counts.data(), displ.data(), MPI_UINT64_T, comm);
    std::sort(all.begin(), all.end());
    std::vector<std::uint64_t> split;
    for (int k = 1; k < size && !all.empty(); ++k) split.push_back(all[all.size() * static_cast<std::size_t>(k) / static_cast<std::size_t>(size)]);
    auto dest = [&](const Key& k) { return static_cast<int>(std::upper_bound(split.begin(), split.end(), k.key) - split.begin()); };
    keys = by_destination(std::move(keys), size, dest, counts);
    keys = exchange(comm, keys, counts);
    std::sort(keys.begin(), keys.end(), by_key);
  }
  // Where this rank's keys start on the curve, in elements and in weight.
  std::int64_t mine[2] = {static_cast<std::int64_t>(keys.size()), 0}, before[2] = {0, 0}, total = 0;
  for (const auto& k : keys) mine[1] += static_cast<std::int64_t>(k.weight);
  MPI_Exscan(mine, before, 2, MPI_INT64_T, MPI_SUM, comm);
  if (rank == 0) before[0] = before[1] = 0;  // MPI_Exscan leaves rank 0's undefined
  MPI_Allreduce(&mine[1], &total, 1, MPI_INT64_T, MPI_SUM, comm);
  // (element, part) back to the element's rank.
  struct Answer {
    std::uint64_t elem;
    std::uint64_t part;
  };
  std::vector<Answer> answers(keys.size());
  double w = static_cast<double>(before[1]);
  for (std::size_t i = 0; i < keys.size(); ++i) {
    const std::int32_t p = weights.empty() ? sfc_part(before[0] + static_cast<std::int64_t>(i), s.nelem, nparts)
                                           : sfc_weighted_part(w, static_cast<std::int32_t>(keys[i].weight), static_cast<double>(total), nparts);
    w += static_cast<double>(keys[i].weight);
    answers[i] = {keys[i].key & mask, static_cast<std::uint64_t>(p)};
  }
  std::vector<Key>().swap(keys);
  if (size > 1) {
    const Slices slices{s.nelem, size};
    std::vector<int> counts;
    answers = by_destination(std::move(answers), size, [&](const Answer& a) { return slices.owner(static_cast<std::int64_t>(a.elem)); }, counts);
    answers = exchange(comm, answers, counts);
  }
  for (const auto& a : answers) parts[static_cast<std::size_t>(static_cast<std::int64_t>(a.elem) - s.first)] = static_cast<std::int32_t>(a.part);
  return parts;
}

bool ptscotch_available() {
#ifdef ANABRANCH_HAVE_PTSCOTCH
  return true;
#else
  return false;
#endif
}

std::vector<std::int32_t> partition_ptscotch_distributed(MPI_Comm comm, const MeshSlice& s, int nparts,
                                                         const std::vector<std::int32_t>& weights) {
  const std::int64_t n = s.count();
  std::vector<std::int32_t> parts(static_cast<std::size_t>(n), 0);
#ifndef ANABRANCH_HAVE_PTSCOTCH
  (void)comm, (void)nparts, (void)weights;
  throw UsageError("--method ptscotch: this anabranch was built without PT-Scotch (Debian: libptscotch-dev, for the MPI it is built with)");
#else
  if (nparts <= 1 || s.nelem == 0) return parts;
  // The dual graph's edges: pairs of elements sharing an edge, each sent to both elements' ranks.
  struct Arc {
    std::uint64_t from;
    std::uint64_t to;
  };
  std::vector<Arc> arcs;
  edge_pairs(comm, s, {}, [&](const EdgeRecord& a, const EdgeRecord& b) {
    if (a.elem() == b.elem()) return;
    arcs.push_back({static_cast<std::uint64_t>(a.elem()), static_cast<std::uint64_t>(b.elem())});
    arcs.push_back({static_cast<std::uint64_t>(b.elem()), static_cast<std::uint64_t>(a.elem())});
  });
  const Slices slices{s.nelem, comm_size(comm)};
  std::vector<int> counts;
  arcs = by_destination(std::move(arcs), slices.size, [&](const Arc& a) { return slices.owner(static_cast<std::int64_t>(a.from)); }, counts);
  arcs = exchange(comm, arcs, counts);
  std::sort(arcs.begin(), arcs.end(), [](const Arc& a, const Arc& b) { return a.from != b.from ? a.from < b.from : a.to < b.to; });
  arcs.erase(std::unique(arcs.begin(), arcs.end(), [](const Arc& a, const Arc& b) { return a.from == b.from && a.to == b.to; }),
             arcs.end());
  std::vector<SCOTCH_Num> vert(static_cast<std::size_t>(n) + 1, 0), edge(arcs.size()), velo;
  for (std::size_t i = 0; i < arcs.size(); ++i) {
    ++vert[static_cast<std::size_t>(static_cast<std::int64_t>(arcs[i].from) - s.first) + 1];
    edge[i] = static_cast<SCOTCH_Num>(arcs[i].to);
  }
  std::vector<Arc>().swap(arcs);
  for (std::int64_t i = 0; i < n; ++i) vert[static_cast<std::size_t>(i) + 1] += vert[static_cast<std::size_t>(i)];
  if (!weights.empty()) velo.assign(weights.begin(), weights.end());
  std::vector<SCOTCH_Num> part(static_cast<std::size_t>(std::max<std::int64_t>(n, 1)));
  int rc = 0;
  SCOTCH_Dgraph graph, bound;
  SCOTCH_Strat strat;
  SCOTCH_Context context;
  SCOTCH_stratInit(&strat);
  SCOTCH_contextInit(&context);
  // Debian's SCOTCH seeds from the clock: a fixed seed and deterministic threads make the
  // partition repeat for a given number of ranks.
  SCOTCH_contextOptionSetNum(&context, SCOTCH_OPTIONNUMDETERMINISTIC, 1);
  SCOTCH_contextOptionSetNum(&context, SCOTCH_OPTIONNUMRANDOMFIXEDSEED, 1);
  SCOTCH_contextRandomClone(&context);
  SCOTCH_contextRandomSeed(&context, 1);
  rc = SCOTCH_dgraphInit(&graph, comm);
  bool built = false, bound_ok = false;
  if (rc == 0) {
    const auto edges = static_cast<SCOTCH_Num>(edge.size());
    rc = SCOTCH_dgraphBuild(&graph, 0, static_cast<SCOTCH_Num>(n), static_cast<SCOTCH_Num>(n), vert.data(), vert.data() + 1,
                            velo.empty() ? nullptr : velo.data(), nullptr, edges, edges, edge.data(), nullptr, nullptr);
    built = true;
  }
  if (rc == 0) rc = SCOTCH_stratDgraphMapBuild(&strat, SCOTCH_STRATBALANCE, comm_size(comm), nparts, 0.03);
  if (rc == 0) bound_ok = (rc = SCOTCH_contextBindDgraph(&context, &graph, &bound)) == 0;
  if (rc == 0) rc = SCOTCH_dgraphPart(&bound, nparts, &strat, part.data());
  if (bound_ok) SCOTCH_dgraphExit(&bound);
  if (built) SCOTCH_dgraphExit(&graph);
  SCOTCH_contextExit(&context);
  SCOTCH_stratExit(&strat);
  int failed = rc != 0, any = 0;
  MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, comm);
  if (any) throw Error("PT-Scotch could not partition the dual graph (SCOTCH_dgraphPart, code " + std::to_string(rc) + ")");
  for (std::int64_t i = 0; i < n; ++i) parts[static_cast<std::size_t>(i)] = static_cast<std::int32_t>(part[static_cast<std::size_t>(i)]);
  return parts;
#endif
}

void write_partition_file(MPI_Comm comm, const std::string& path, const std::vector<std::int32_t>& slice_parts) {
  const int rank = comm_rank(comm);
  std::string text;
  text.reserve(slice_parts.size() * 4);
  char line[16];
  for (std::int32_t p : slice_parts) {
    auto r = std::to_chars(line, line + sizeof line - 1, p);
    *r.ptr++ = '\n';
    text.append(line, r.ptr);
  }
  std::int64_t bytes = static_cast<std::int64_t>(text.size()), offset = 0;
  MPI_Exscan(&bytes, &offset, 1, MPI_INT64_T, MPI_SUM, comm);
  if (rank == 0) offset = 0;
  long long pid = rank == 0 ? static_cast<long long>(::getpid()) : 0;
  MPI_Bcast(&pid, 1, MPI_LONG_LONG, 0, comm);
  const std::string temp = path + ".tmp." + std::to_string(pid);
  register_temporary(temp);
  MPI_File fh = MPI_FILE_NULL;
  try {
    collective(comm, [&] {
      const CreatingTemporary creating;
      if (rank == 0) refuse_open_input(path);
      const int rc = MPI_File_open(comm, temp.c_str(), MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh);
      if (rc != MPI_SUCCESS) throw IoError("cannot create " + path + ": " + mpi_error_text(rc));
    });
    collective(comm, [&] { write_at(fh, offset, text.data(), bytes, path); });
    MPI_File_close(&fh);
    collective(comm, [&] {
      if (rank != 0) return;
      refuse_open_input(path);
      if (std::rename(temp.c_str(), path.c_str()) != 0) throw IoError::from_errno("cannot rename " + temp + " to", path);
    });
  } catch (...) {
    if (fh != MPI_FILE_NULL) MPI_File_close(&fh);
    if (rank == 0) ::unlink(temp.c_str());
    release_temporary(temp);
    throw;
  }
  release_temporary(temp);
}

std::vector<std::int32_t> gather_parts(MPI_Comm comm, const std::vector<std::int32_t>& slice_parts, std::int64_t nelem, int root) {
  const int size = comm_size(comm), rank = comm_rank(comm);
  const Slices slices{nelem, size};
  std::vector<int> counts(static_cast<std::size_t>(size)), displ(static_cast<std::size_t>(size));
  for (int r = 0; r < size; ++r) {
    counts[static_cast<std::size_t>(r)] = static_cast<int>(slices.first(r + 1) - slices.first(r));
    displ[static_cast<std::size_t>(r)] = static_cast<int>(slices.first(r));
  }
  std::vector<std::int32_t> all(rank == root ? static_cast<std::size_t>(nelem) : 0);
  check_mpi(MPI_Gatherv(slice_parts.data(), static_cast<int>(slice_parts.size()), MPI_INT32_T, all.data(), counts.data(),
                        displ.data(), MPI_INT32_T, root, comm),
            "MPI_Gatherv");
  return all;
}

DistributedQuality distributed_quality(MPI_Comm comm, const MeshSlice& s, const std::vector<std::int32_t>& parts, int nparts) {
  DistributedQuality q;
  std::vector<std::int64_t> per(static_cast<std::size_t>(nparts), 0);
  for (auto p : parts) ++per[static_cast<std::size_t>(p)];
  MPI_Allreduce(MPI_IN_PLACE, per.data(), nparts, MPI_INT64_T, MPI_SUM, comm);
  q.min_elems = s.nelem;
  for (auto c : per) {
    q.min_elems = std::min(q.min_elems, c);
    q.max_elems = std::max(q.max_elems, c);
    q.empty_parts += c == 0;
  }
  q.mean_elems = static_cast<double>(s.nelem) / nparts;
  q.imbalance = q.mean_elems > 0 ? static_cast<double>(q.max_elems) / q.mean_elems : 0;
  std::int64_t cut = 0;
  edge_pairs(comm, s, parts, [&](const EdgeRecord& a, const EdgeRecord& b) { cut += a.part() != b.part(); });
  MPI_Allreduce(&cut, &q.edge_cut, 1, MPI_INT64_T, MPI_SUM, comm);
  return q;
}

}  // namespace anabranch::pio
