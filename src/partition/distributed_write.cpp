// The partitioner under mpiexec: TELEMAC's per-part files written by the ranks.
#include "partition/distributed_util.hpp"

#include <malloc.h>

#include "core/error.hpp"
#include "core/sorted_index.hpp"
#include "core/outputs.hpp"
#include "formats/fortran_text.hpp"

namespace anabranch::pio {

using namespace dist;

namespace {

// One part being written here.
struct LocalPart {
  int p = 0;
  std::vector<std::int32_t> elems;           // global 2D elements, increasing (let go once the halo is found)
  std::vector<std::int32_t> knolg;           // global 2D nodes (0-based) in local order
  std::vector<std::pair<std::int32_t, std::int32_t>> local_of;  // (global node, local), by global node
  std::vector<std::int32_t> ikle;            // local 2D elements, 1-based
  std::vector<std::pair<std::int32_t, std::vector<std::int64_t>>> iface;  // (global node, row)
  std::vector<std::int32_t> bpoints;         // boundary points (.cli lines) held, increasing
  std::vector<std::vector<std::int64_t>> halo;
  std::vector<std::uint32_t> at;             // where its nodes (every plane) sit in the rank's node list
  std::int32_t local(std::int32_t g) const {
    auto it = std::lower_bound(local_of.begin(), local_of.end(), std::make_pair(g, std::int32_t{-1}));
    return it != local_of.end() && it->first == g ? it->second : -1;
  }
};

// Where the parts of one kind of file (a SERAFIN file, the .cli, the PAR) go: a file per
// part written by its rank, or (the concatenated layout) a place in one <base>-CONCAT
// written by every rank through MPI-IO, with the <base>-INDEX rank 0 writes from every
// part's size (SERAFIN: 1-based byte ranges, big-endian int64) or lines (.cli: 1-based line
// ranges, big-endian int32; PAR: each part's first line, list-directed).
class PartOutputs {
 public:
  static constexpr int kSerafinIndex = 0, kCliIndex = 1, kParIndex = 2, kEmptyIndex = 3;
  PartOutputs(MPI_Comm comm, TempOutputs& out, bool concat, const std::string& base, int first_part, int nparts,
              const std::vector<std::int64_t>& sizes, const std::vector<std::int64_t>& lines, int index_kind)
      : comm_(comm), out_(out), concat_(concat), path_(base + "-CONCAT") {
    if (!concat) {
      for (std::size_t i = 0; i < sizes.size(); ++i) ids_.push_back(out.add(base + partel::suffix(nparts, first_part + static_cast<int>(i))));
      return;
    }
    const int rank = comm_rank(comm);
    // Every part's size (and lines) on rank 0, in part order (ranks hold consecutive parts).
    std::vector<std::int64_t> mine;
    for (std::size_t i = 0; i < sizes.size(); ++i) {
      mine.push_back(sizes[i]);
      mine.push_back(lines.empty() ? 0 : lines[i]);
    }
    const std::vector<std::int64_t> all = gather(comm, mine);
    std::int64_t total = 0, start = 0;
    for (auto v : sizes) total += v;
    MPI_Exscan(&total, &start, 1, MPI_INT64_T, MPI_SUM, comm);
    if (rank == 0) start = 0;
    for (auto v : sizes) {
      base_.push_back(start);
      start += v;
    }
    std::string temp, error;
    if (rank == 0) {
      try {
        const std::size_t id = out.add(path_);
        temp = out.temp_path(id);
        std::vector<unsigned char> index;
        std::string text;
        std::int64_t at = 0, line = 1;
        for (std::size_t i = 0; i + 1 < all.size(); i += 2) {
          unsigned char e[16];
          if (index_kind == kSerafinIndex) {
            store<std::int64_t>(e, at + 1, ByteOrder::Big);
            store<std::int64_t>(e + 8, at + 1 + all[i], ByteOrder::Big);
            index.insert(index.end(), e, e + 16);
          } else if (index_kind == kCliIndex) {
            store<std::int32_t>(e, static_cast<std::int32_t>(line), ByteOrder::Big);
            store<std::int32_t>(e + 4, static_cast<std::int32_t>(line + all[i + 1]), ByteOrder::Big);
            index.insert(index.end(), e, e + 8);
          } else if (index_kind == kParIndex) {
            text += fortran::ListRecord().integer(line).line();
          }
          at += all[i];
          line += all[i + 1];
        }
        const std::size_t iid = out.add(base + "-INDEX");
        if (!index.empty()) out.write_at(iid, index.data(), index.size(), 0);
        if (!text.empty()) out.write_at(iid, text.data(), text.size(), 0);
      } catch (const std::exception& e) {
        error = e.what();
      }
    }
    // Rank 0's path, or why it has none: every rank stops together.
    for (std::string* str : {&temp, &error}) *str = broadcast(comm, std::move(*str));
    if (!error.empty()) throw IoError(error);
    const int rc = MPI_File_open(comm, temp.c_str(), MPI_MODE_WRONLY, MPI_INFO_NULL, &fh_);
    int bad = rc != MPI_SUCCESS, any = 0;
    MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, comm);
    if (any) {
      if (fh_ != MPI_FILE_NULL) MPI_File_close(&fh_);
      throw IoError("cannot open " + path_ + " for writing" + (bad ? ": " + mpi_error_text(rc) : std::string()));
    }
  }
  PartOutputs(const PartOutputs&) = delete;
  PartOutputs(PartOutputs&& o) noexcept
      : comm_(o.comm_), out_(o.out_), concat_(o.concat_), path_(std::move(o.path_)), ids_(std::move(o.ids_)),
        base_(std::move(o.base_)), fh_(o.fh_) {
    o.fh_ = MPI_FILE_NULL;
  }
  ~PartOutputs() {
    if (fh_ != MPI_FILE_NULL) MPI_File_close(&fh_);  // abandoned: every rank failed together
  }
  // Writes n bytes at `offset` of the i-th part of this rank.
  void write(std::size_t i, const void* data, std::size_t n, std::int64_t offset) {
    if (n == 0) return;
    if (concat_)
      write_at(fh_, base_[i] + offset, data, static_cast<std::int64_t>(n), path_);
    else
      out_.write_at(ids_[i], data, n, offset);
  }
  // Collective (the concatenated layout): closes the shared file.
  void close() {
    if (fh_ != MPI_FILE_NULL) MPI_File_close(&fh_);
  }

 private:
  MPI_Comm comm_;
  TempOutputs& out_;
  bool concat_;
  std::string path_;
  std::vector<std::size_t> ids_;
  std::vector<std::int64_t> base_;
  MPI_File fh_ = MPI_FILE_NULL;
};

}  // namespace

partel::WriteReport write_parts_distributed(MPI_Comm comm, const serafin::Reader& geo,
                                            const std::vector<const serafin::Reader*>& also, MeshSlice& s,
                                            std::vector<std::int32_t> parts, int nparts, const boundary::File* cli,
                                            const partel::Names& names, partel::Layout layout, const CaseFiles& cases,
                                            std::int64_t* edge_cut) {
  const int size = comm_size(comm), rank = comm_rank(comm);
  std::int64_t edge_cut_here = 0;
  const auto& g = geo.header();
  const int nplan = g.nplan(), ndp = s.ndp;
  const std::int64_t npoin2 = s.npoin;
  const Slices part_ranks{nparts, size}, node_ranks{npoin2, size};
  const int p0 = static_cast<int>(part_ranks.first(rank)), p1 = static_cast<int>(part_ranks.first(rank + 1));
  const bool with_cli = cli != nullptr, with_par = with_cli && nplan == 1;
  std::vector<LocalPart> mine(static_cast<std::size_t>(p1 - p0));
  for (int p = p0; p < p1; ++p) mine[static_cast<std::size_t>(p - p0)].p = p;
  auto part_here = [&](std::int64_t p) -> LocalPart& { return mine[static_cast<std::size_t>(p - p0)]; };

  // The boundary points, and the slice's elements with two of them (step 4 makes the
  // contour of those), taken before the slice is let go.
  Contour contour;
  std::vector<std::int32_t> numliq, sub_part;
  std::vector<std::int32_t> bnodes, bpoint_at;  // the boundary points' global nodes, increasing; their .cli lines
  SortedIndex bnode_index;
  auto bpoint = [&](std::int32_t n) {
    const std::int64_t at = bnode_index.find(n);
    return at < 0 ? std::int32_t{-1} : bpoint_at[static_cast<std::size_t>(at)];
  };
  std::vector<double> bx, by;  // boundary points' coordinates
  std::vector<std::uint64_t> words;  // the slice's elements with two boundary points: part, then its ndp nodes (1-based)
  if (with_cli) {
    const auto& lines = cli->lines;
    std::vector<std::uint64_t> keyed;  // (node, line), by node then line
    for (std::size_t k = 0; k < lines.size(); ++k) keyed.push_back(pair_word(lines[k].n - 1, static_cast<std::int64_t>(k)));
    radix_sort(keyed);
    for (auto w : keyed) {
      bnodes.push_back(static_cast<std::int32_t>(id_of(w)));
      bpoint_at.push_back(part_of(w));
    }
    bnode_index = SortedIndex(bnodes);  // `words` are found in step 1
  }
  // Case files (2D): the sections walked on the slices and the weirs read, on every rank.
  const bool with_cases = nplan == 1 && cases.any();
  std::optional<partel::ControlSections> sections;
  std::optional<partel::Weirs> weirs;
  if (with_cases && !cases.sections.empty()) {
    collective(comm, [&] {
      if (ndp != 3) throw UsageError(cases.sections + ": control sections need a mesh of triangles");
    });
    if (s.ikle.empty()) s.ikle = read_mesh_slice(comm, geo).ikle;  // the walks index the slice
    sections.emplace(cases.sections, sliced_mesh(comm, geo, s));
  }
  if (with_cases && !cases.weirs.empty()) collective(comm, [&] { weirs.emplace(cases.weirs, npoin2); });

  // 1. Each part's elements with their rows of IKLE, from the slice to the rank writing the
  // part, a chunk of the slice at a time (its rows read from the mesh when the slice holds
  // them no more), and the slice's elements with two boundary points (`words`). Each rank
  // first learns how many elements each of its parts gets from each rank, so that every
  // element goes straight to its place: a part's elements in element order (slices are
  // increasing ranges, each sent in order).
  {
    if (ndp > 8) throw UsageError(geo.name() + ": elements of " + std::to_string(ndp) + " nodes (at most 8)");
    const auto P = static_cast<std::size_t>(size), held = mine.size();
    std::vector<std::int64_t> per_part(static_cast<std::size_t>(nparts), 0);  // this slice's elements in each part
    for (auto p : parts) ++per_part[static_cast<std::size_t>(p)];
    std::vector<int> counts(P);
    for (std::size_t d = 0; d < P; ++d)
      counts[d] = static_cast<int>(part_ranks.first(static_cast<int>(d) + 1) - part_ranks.first(static_cast<int>(d)));
    const std::vector<std::int64_t> from = exchange(comm, per_part, counts);  // by source, then part
    std::vector<std::int64_t>().swap(per_part);
    std::vector<std::int64_t> place(held * P);  // where each source's elements of a part go in it
    for (std::size_t i = 0; i < held; ++i) {
      std::int64_t at = 0;
      for (std::size_t src = 0; src < P; ++src) {
        place[i * P + src] = at;
        at += from[src * held + i];
      }
      mine[i].elems.resize(static_cast<std::size_t>(at));
      mine[i].ikle.resize(static_cast<std::size_t>(at * ndp));  // global nodes (1-based) until step 2
    }
    constexpr std::int64_t kChunk = std::int64_t{1} << 16;  // elements a round
    const std::int64_t n = s.count();
    std::int64_t rounds = (n + kChunk - 1) / kChunk;
    check_mpi(MPI_Allreduce(MPI_IN_PLACE, &rounds, 1, MPI_INT64_T, MPI_MAX, comm), "MPI_Allreduce");
    const std::size_t row = static_cast<std::size_t>(2 + ndp);  // element, part, nodes
    std::vector<std::int32_t> out, in, read;
    std::vector<std::size_t> at(P);
    std::vector<int> got;
    for (std::int64_t r = 0; r < rounds; ++r) {
      const std::int64_t b = std::min(n, r * kChunk), e = std::min(n, b + kChunk);
      const std::int32_t* rows = s.ikle.data() + b * ndp;  // the chunk's rows
      if (s.ikle.empty()) {
        read.resize(static_cast<std::size_t>((e - b) * ndp));
        collective(comm, [&] { read_ikle_rows(geo, s, b, e - b, read.data()); });
        rows = read.data();
      }
      if (with_cli)
        for (std::int64_t i = b; i < e; ++i) {
          const std::int32_t* v = rows + (i - b) * ndp;
          int on = 0;
          for (int k = 0; k < ndp; ++k) on += bpoint(v[k] - 1) >= 0;
          if (on < 2) continue;
          words.push_back(static_cast<std::uint64_t>(parts[static_cast<std::size_t>(i)]));
          for (int k = 0; k < ndp; ++k) words.push_back(static_cast<std::uint64_t>(v[k]));
        }
      std::fill(counts.begin(), counts.end(), 0);
      for (std::int64_t i = b; i < e; ++i) ++counts[static_cast<std::size_t>(part_ranks.owner(parts[static_cast<std::size_t>(i)]))];
      for (std::size_t d = 0, sum = 0; d < P; ++d) {
        at[d] = sum;
        sum += static_cast<std::size_t>(counts[d]);
        counts[d] *= static_cast<int>(row);
      }
      out.resize(static_cast<std::size_t>(e - b) * row);
      for (std::int64_t i = b; i < e; ++i) {
        const auto p = parts[static_cast<std::size_t>(i)];
        std::int32_t* w = out.data() + at[static_cast<std::size_t>(part_ranks.owner(p))]++ * row;
        w[0] = static_cast<std::int32_t>(s.first + i);
        w[1] = p;
        std::copy_n(rows + (i - b) * ndp, ndp, w + 2);
      }
      in = exchange(comm, out, counts, &got);
      const std::int32_t* w = in.data();
      for (std::size_t src = 0; src < P; ++src)
        for (int k = 0; k < got[src]; k += static_cast<int>(row), w += row) {
          const auto i = static_cast<std::size_t>(w[1] - p0);
          const auto pos = static_cast<std::size_t>(place[i * P + src]++);
          mine[i].elems[pos] = w[0];
          std::copy_n(w + 2, ndp, mine[i].ikle.data() + pos * static_cast<std::size_t>(ndp));
        }
    }
    std::vector<std::int32_t>().swap(s.ikle);
  }
  std::vector<std::int32_t>().swap(parts);  // each part's elements hold them now
  // 2. Each part's nodes in order of first appearance (one sort of (node, position) words),
  // and its elements in that numbering.
  {
    std::vector<std::uint64_t> keyed;
    std::vector<std::int32_t> first_of;  // by position: the node (group) whose first appearance it is, or -1
    for (auto& lp : mine) {
      const std::size_t n = lp.ikle.size();
      keyed.resize(n);
      for (std::size_t pos = 0; pos < n; ++pos) keyed[pos] = (static_cast<std::uint64_t>(lp.ikle[pos] - 1) << 32) | pos;
      radix_sort(keyed, [](std::uint64_t k) { return k >> 32; });  // positions increase within a node
      first_of.assign(n, -1);
      lp.local_of.clear();
      for (std::size_t i = 0; i < n; ++i)
        if (i == 0 || (keyed[i] >> 32) != (keyed[i - 1] >> 32)) {
          first_of[keyed[i] & 0xffffffffu] = static_cast<std::int32_t>(lp.local_of.size());
          lp.local_of.emplace_back(static_cast<std::int32_t>(keyed[i] >> 32), 0);
        }
      lp.knolg.clear();
      lp.knolg.reserve(lp.local_of.size());
      for (std::size_t pos = 0; pos < n; ++pos)
        if (const std::int32_t grp = first_of[pos]; grp >= 0) {
          lp.local_of[static_cast<std::size_t>(grp)].second = static_cast<std::int32_t>(lp.knolg.size());
          lp.knolg.push_back(lp.local_of[static_cast<std::size_t>(grp)].first);
        }
      std::int32_t grp = -1;
      for (std::size_t i = 0; i < n; ++i) {
        if (i == 0 || (keyed[i] >> 32) != (keyed[i - 1] >> 32)) ++grp;
        lp.ikle[keyed[i] & 0xffffffffu] = lp.local_of[static_cast<std::size_t>(grp)].second + 1;
      }
    }
  }

  // The parts holding the nodes the sections and weirs name, and their local numbers there:
  // every rank's to every rank (a few nodes); each rank then splits the files for its parts.
  std::vector<partel::PartText> case_texts;
  if (sections || weirs) {
    std::vector<std::int32_t> wanted = sections ? sections->nodes() : std::vector<std::int32_t>{};
    if (weirs) {
      const auto w = weirs->nodes();
      wanted.insert(wanted.end(), w.begin(), w.end());
    }
    std::vector<std::uint64_t> held;  // node, part, local number (1-based)
    for (const auto& lp : mine)
      for (auto n : wanted)
        if (const std::int32_t l = lp.local(n); l >= 0)
          held.insert(held.end(), {static_cast<std::uint64_t>(n), static_cast<std::uint64_t>(lp.p), static_cast<std::uint64_t>(l + 1)});
    partel::NodeParts where;
    const auto all = all_words(comm, held);
    for (std::size_t i = 0; i + 2 < all.size(); i += 3)
      where.add(static_cast<std::int32_t>(all[i]), static_cast<int>(all[i + 1]), static_cast<std::int32_t>(all[i + 2]));
    where.sort();
    collective(comm, [&] {
      if (sections) case_texts.push_back(sections->split(where, nparts));
      if (weirs) case_texts.push_back(weirs->split(where, nparts));
    });
    sections.reset();
    weirs.reset();
  }

  // 3. Interface nodes: (node, part) to the node's rank, the lists of sharing parts back; in
  // rounds, each the nodes of one residue modulo 8 (about the same share of every rank's
  // range of nodes), so that no rank holds more than a round's words of every part's nodes.
  {
    constexpr std::int32_t kRounds = 8;
    const auto P = static_cast<std::size_t>(size);
    std::vector<std::vector<std::uint64_t>> back(P);
    std::vector<std::uint64_t> np;  // (node, part)
    std::vector<int> counts(P);
    std::vector<std::size_t> at(P);
    for (std::int32_t round = 0; round < kRounds; ++round) {
      std::fill(counts.begin(), counts.end(), 0);
      for (const auto& lp : mine)
        for (auto n : lp.knolg)
          if ((n & (kRounds - 1)) == round) ++counts[static_cast<std::size_t>(node_ranks.owner(n))];
      for (std::size_t d = 0, sum = 0; d < P; ++d) at[d] = sum, sum += static_cast<std::size_t>(counts[d]);
      np.resize(at.back() + static_cast<std::size_t>(counts.back()));
      for (const auto& lp : mine)
        for (auto n : lp.knolg)
          if ((n & (kRounds - 1)) == round) np[at[static_cast<std::size_t>(node_ranks.owner(n))]++] = pair_word(n, lp.p);
      np = exchange(comm, np, counts);
      radix_sort(np);  // by node, then part
      for (std::size_t i = 0; i < np.size();) {
        std::size_t j = i + 1;
        while (j < np.size() && id_of(np[j]) == id_of(np[i])) ++j;
        if (j - i >= 2)
          for (std::size_t a = i; a < j; ++a) {
            auto& b = back[static_cast<std::size_t>(part_ranks.owner(part_of(np[a])))];
            b.push_back(static_cast<std::uint64_t>(id_of(np[a])));
            b.push_back(static_cast<std::uint64_t>(part_of(np[a])));
            b.push_back(j - i - 1);
            for (std::size_t c = i; c < j; ++c)
              if (c != a) b.push_back(static_cast<std::uint64_t>(part_of(np[c])));
          }
        i = j;
      }
    }
    std::vector<std::uint64_t>().swap(np);
    const auto got = exchange_words(comm, back);
    for (std::size_t i = 0; i < got.size();) {
      const auto node = static_cast<std::int32_t>(got[i]);
      auto& lp = part_here(static_cast<std::int64_t>(got[i + 1]));
      const auto m = static_cast<std::size_t>(got[i + 2]);
      std::vector<std::int64_t> row(1, lp.local(node) + 1);
      for (std::size_t c = 0; c < m; ++c) row.push_back(static_cast<std::int64_t>(got[i + 3 + c]));
      lp.iface.emplace_back(node, std::move(row));
      i += 3 + m;
    }
    for (auto& lp : mine) std::sort(lp.iface.begin(), lp.iface.end(), [](auto& a, auto& b) { return a.first < b.first; });
  }

  // 4. The boundary: the elements with two boundary points, from every rank to every rank
  // (a boundary's worth), give the contour, its liquid boundaries and who holds each segment.
  if (with_cli) {
    const auto& lines = cli->lines;
    const std::vector<std::uint64_t> all = all_words(comm, words);
    // Compact node numbers: the subset's nodes, increasing.
    std::vector<std::int32_t> nodes;
    for (std::size_t i = 0; i < all.size(); i += static_cast<std::size_t>(ndp) + 1) {
      sub_part.push_back(static_cast<std::int32_t>(all[i]));
      for (int k = 0; k < ndp; ++k) nodes.push_back(static_cast<std::int32_t>(all[i + 1 + static_cast<std::size_t>(k)]) - 1);
    }
    std::vector<std::int32_t> sub_ikle(nodes.begin(), nodes.end());
    std::sort(nodes.begin(), nodes.end());
    nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());
    for (auto& v : sub_ikle) v = static_cast<std::int32_t>(std::lower_bound(nodes.begin(), nodes.end(), v) - nodes.begin()) + 1;
    std::vector<double> xs, ys;
    {
      const SharedRecord coords(comm, g.npoin, nodes);
      xs = coords.read(geo, geo.x_offset() + 4);
      ys = coords.read(geo, geo.y_offset() + 4);
    }
    std::vector<std::int32_t> bnodes_c;  // boundary points' compact node numbers (1-based)
    std::vector<int> lih, liu;
    collective(comm, [&] {
      for (const auto& l : lines) {
        auto it = std::lower_bound(nodes.begin(), nodes.end(), static_cast<std::int32_t>(l.n - 1));
        if (it == nodes.end() || *it != l.n - 1)
          throw UsageError("boundary point " + std::to_string(&l - lines.data() + 1) + " (node " + std::to_string(l.n) +
                           ") is not on a boundary segment of the mesh: the boundary file does not match the mesh");
        bnodes_c.push_back(static_cast<std::int32_t>(it - nodes.begin()) + 1);
        lih.push_back(l.lihbor);
        liu.push_back(l.liubor);
      }
      const Coordinates cx(xs), cy(ys);
      contour = build_contour(bnodes_c, sub_ikle.data(), static_cast<std::int64_t>(sub_part.size()), ndp, ndp, cx, cy);
      numliq = number_liquid_boundaries(contour, bnodes_c, lih, liu, cx, cy);
    });
    for (auto c : bnodes_c) {
      bx.push_back(xs[static_cast<std::size_t>(c - 1)]);
      by.push_back(ys[static_cast<std::size_t>(c - 1)]);
    }
    // Each part's boundary points: its nodes on the boundary, in .cli order.
    for (auto& lp : mine) {
      for (auto node : lp.knolg)
        if (const auto k = bpoint(node); k >= 0) lp.bpoints.push_back(k);
      std::sort(lp.bpoints.begin(), lp.bpoints.end());
    }
  }

  // 5. Elements across part boundaries. A cut edge joins two interface nodes of both its
  // parts: each rank sends only its parts' edges between two interface nodes to the rank
  // their key hashes to, where the pairs in different parts are found (the edge cut). The
  // halo rows (2D, PAR files) take those neighbours (their local number asked of their
  // part's rank), neighbours in the same part from the part's own edges, and the boundary
  // codes where there is none.
  struct Across {
    std::uint64_t elem_part, key, other;  // the element and its part, the edge, the element across and its part
  };
  std::vector<Across> across;
  {
    std::vector<EdgeRecord> edges;
    for (const auto& lp : mine) {
      std::vector<char> iface_local(lp.knolg.size(), 0);
      for (const auto& f : lp.iface) iface_local[static_cast<std::size_t>(f.second[0] - 1)] = 1;
      for (std::size_t j = 0; j < lp.elems.size(); ++j)
        for (int k = 0; k < ndp; ++k) {
          const auto la = static_cast<std::size_t>(lp.ikle[j * static_cast<std::size_t>(ndp) + static_cast<std::size_t>(k)] - 1);
          const auto lb = static_cast<std::size_t>(lp.ikle[j * static_cast<std::size_t>(ndp) + static_cast<std::size_t>((k + 1) % ndp)] - 1);
          if (!iface_local[la] || !iface_local[lb]) continue;
          const std::int32_t a = lp.knolg[la], b = lp.knolg[lb];
          const auto lo = static_cast<std::uint64_t>(std::min(a, b) + 1), hi = static_cast<std::uint64_t>(std::max(a, b) + 1);
          edges.push_back({(lo << 32) | hi, (static_cast<std::uint64_t>(lp.p) << 32) | static_cast<std::uint64_t>(lp.elems[j])});
        }
    }
    std::vector<int> counts;
    edges = by_destination(std::move(edges), size, [&](const EdgeRecord& r) {
      return static_cast<int>((r.key * 0x9E3779B97F4A7C15ull >> 33) % static_cast<std::uint64_t>(size)); }, counts);
    edges = exchange(comm, edges, counts);
    std::sort(edges.begin(), edges.end(), [](const EdgeRecord& x, const EdgeRecord& y) { return x.key != y.key ? x.key < y.key : x.elem_part < y.elem_part; });
    for (std::size_t i = 0; i < edges.size();) {
      std::size_t j = i + 1;
      while (j < edges.size() && edges[j].key == edges[i].key) ++j;
      for (std::size_t x = i; x < j; ++x)
        for (std::size_t y = x + 1; y < j; ++y) {
          if (edges[x].part() == edges[y].part()) continue;
          ++edge_cut_here;
          across.push_back({edges[x].elem_part, edges[x].key, edges[y].elem_part});
          across.push_back({edges[y].elem_part, edges[y].key, edges[x].elem_part});
        }
      i = j;
    }
    across = by_destination(std::move(across), size, [&](const Across& r) { return part_ranks.owner(static_cast<std::int64_t>(r.elem_part >> 32)); }, counts);
    across = exchange(comm, across, counts);
  }
  if (with_par) {
    // The local number of each element across, from its part's rank (answers come back in
    // the order asked).
    std::vector<std::size_t> order(across.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    auto dest_of = [&](std::size_t i) { return part_ranks.owner(static_cast<std::int64_t>(across[i].other >> 32)); };
    std::stable_sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) { return dest_of(x) < dest_of(y); });
    std::vector<int> counts(static_cast<std::size_t>(size), 0);
    std::vector<std::uint64_t> ask;
    for (auto i : order) {
      ++counts[static_cast<std::size_t>(dest_of(i))];
      ask.push_back(across[i].other);
    }
    std::vector<int> rcounts(static_cast<std::size_t>(size));
    check_mpi(MPI_Alltoall(counts.data(), 1, MPI_INT, rcounts.data(), 1, MPI_INT, comm), "MPI_Alltoall");
    std::vector<std::uint64_t> asked = exchange(comm, ask, counts);
    for (auto& q : asked) {
      const auto& lp = part_here(static_cast<std::int64_t>(q >> 32));
      q = static_cast<std::uint64_t>(std::lower_bound(lp.elems.begin(), lp.elems.end(), static_cast<std::int32_t>(q & 0xffffffffu)) - lp.elems.begin());
    }
    const std::vector<std::uint64_t> answers = exchange(comm, asked, rcounts);
    std::vector<std::uint64_t> local_across(across.size());
    for (std::size_t k = 0; k < order.size(); ++k) local_across[order[k]] = answers[k];
    // Per part: its halo elements, increasing, and their rows.
    std::vector<std::size_t> by_elem(across.size());
    for (std::size_t i = 0; i < by_elem.size(); ++i) by_elem[i] = i;
    std::sort(by_elem.begin(), by_elem.end(), [&](std::size_t x, std::size_t y) {
      return across[x].elem_part != across[y].elem_part ? across[x].elem_part < across[y].elem_part : across[x].other < across[y].other;
    });
    std::vector<char> liquid;  // by boundary point
    for (const auto& l : cli->lines) liquid.push_back(l.lihbor != kSolid);
    std::size_t i = 0;
    for (auto& lp : mine) {
      // The part's elements around each of its nodes (increasing), for neighbours inside the part.
      std::vector<std::int32_t> around_at, around;
      auto key_of = [&](std::size_t j, int k) {
        const auto a = static_cast<std::uint64_t>(lp.knolg[static_cast<std::size_t>(lp.ikle[j * static_cast<std::size_t>(ndp) + static_cast<std::size_t>(k)] - 1)] + 1);
        const auto b = static_cast<std::uint64_t>(lp.knolg[static_cast<std::size_t>(lp.ikle[j * static_cast<std::size_t>(ndp) + static_cast<std::size_t>((k + 1) % ndp)] - 1)] + 1);
        return a < b ? (a << 32) | b : (b << 32) | a;
      };
      bool any = false;
      for (; i < by_elem.size() && static_cast<int>(across[by_elem[i]].elem_part >> 32) == lp.p;) {
        if (!any) {
          around_at.assign(lp.knolg.size() + 1, 0);
          for (auto v : lp.ikle) ++around_at[static_cast<std::size_t>(v)];
          for (std::size_t n = 1; n < around_at.size(); ++n) around_at[n] += around_at[n - 1];
          around.resize(lp.ikle.size());
          std::vector<std::int32_t> next(around_at.begin(), around_at.end() - 1);
          for (std::size_t j = 0; j < lp.ikle.size(); ++j)
            around[static_cast<std::size_t>(next[static_cast<std::size_t>(lp.ikle[j] - 1)]++)] = static_cast<std::int32_t>(j / static_cast<std::size_t>(ndp));
          any = true;
        }
        const std::uint64_t id = across[by_elem[i]].elem_part;
        std::size_t j = i;
        while (j < by_elem.size() && across[by_elem[j]].elem_part == id) ++j;
        const auto e = static_cast<std::int32_t>(id & 0xffffffffu);
        const auto le = static_cast<std::size_t>(std::lower_bound(lp.elems.begin(), lp.elems.end(), e) - lp.elems.begin());
        std::vector<std::int64_t> row(static_cast<std::size_t>(1 + 2 * ndp));
        row[0] = static_cast<std::int64_t>(le) + 1;
        for (int k = 0; k < ndp; ++k) {
          const std::uint64_t key = key_of(le, k);
          std::int64_t q = -2, l = -2;
          for (std::size_t c = i; c < j; ++c)
            if (across[by_elem[c]].key == key) {
              q = static_cast<std::int64_t>(across[by_elem[c]].other >> 32), l = static_cast<std::int64_t>(local_across[by_elem[c]]) + 1;
              break;
            }
          if (q == -2) {  // the first other element of the part around both ends of the edge
            const auto la = static_cast<std::size_t>(lp.ikle[le * static_cast<std::size_t>(ndp) + static_cast<std::size_t>(k)] - 1);
            const std::int32_t lb = lp.ikle[le * static_cast<std::size_t>(ndp) + static_cast<std::size_t>((k + 1) % ndp)];
            for (auto c = around_at[la]; c < around_at[la + 1] && q == -2; ++c) {
              const std::int32_t other = around[static_cast<std::size_t>(c)];
              if (other == static_cast<std::int32_t>(le)) continue;
              const std::int32_t* w = lp.ikle.data() + static_cast<std::size_t>(other) * static_cast<std::size_t>(ndp);
              for (int m = 0; m < ndp; ++m)  // la–lb is one of its edges
                if (w[m] == lb && (w[(m + 1) % ndp] == static_cast<std::int32_t>(la) + 1 || w[(m + ndp - 1) % ndp] == static_cast<std::int32_t>(la) + 1))
                  q = lp.p, l = other + 1;
            }
          }
          if (q == -2) {
            const auto ka = bpoint(static_cast<std::int32_t>(key >> 32) - 1), kb = bpoint(static_cast<std::int32_t>(key & 0xffffffffu) - 1);
            const bool liq = ka >= 0 && kb >= 0 && liquid[static_cast<std::size_t>(ka)] && liquid[static_cast<std::size_t>(kb)];
            q = l = liq ? 0 : -1;
          }
          row[static_cast<std::size_t>(1 + k)] = q;
          row[static_cast<std::size_t>(1 + ndp + k)] = l;
        }
        lp.halo.push_back(std::move(row));
        i = j;
      }
    }
  }

  for (auto& lp : mine) std::vector<std::int32_t>().swap(lp.elems);  // its rows (ikle) say how many
  ::malloc_trim(0);  // the exchanges' buffers given back before the files' arrays come
  // 6. The files: first every part's header and mesh and its texts (local work), then the
  // outputs (collective in the concatenated layout), then the bytes, frames last.
  const bool concat = layout == partel::Layout::Concat && nparts > 1;
  struct Kind {
    std::string base;
    std::vector<std::int64_t> sizes, lines;
    int index_kind;
  };
  std::vector<Kind> plan;
  std::vector<std::vector<serafin::Header>> headers;     // per source, per part
  std::vector<std::vector<serafin::Layout>> layouts;     // per source, per part
  std::vector<std::string> clis, pars;
  std::vector<std::int32_t> gnodes;  // every part's nodes on every plane
  std::vector<const serafin::Reader*> sources{&geo};
  std::vector<std::string> source_names{names.geo};
  for (std::size_t i = 0; i < also.size(); ++i) {
    sources.push_back(also[i]);
    source_names.push_back(names.also[i]);
  }
  Coordinates gx, gy;  // their coordinates, in the file's precision
  std::vector<std::int32_t>& held = gnodes;  // the rank's nodes (every plane), once each, increasing
  SortedIndex held_index;
  auto place = [&held_index](std::int64_t n) { return held_index.find(static_cast<std::int32_t>(n)); };
  std::optional<partel::FrictionZones> zones;  // their zones
  collective(comm, [&] {
    // The rank's nodes once each, increasing, and where each part's sit among them: the
    // parts' own lists (local_of, by node) merged through a heap of their heads, each node
    // placed as it passes (no sort of every part's nodes, no search for them).
    struct Head {
      std::int32_t node;
      std::uint32_t part, next;  // the part (in mine) and its next entry in local_of
    };
    std::vector<Head> heap;
    std::size_t all = 0;
    for (std::size_t i = 0; i < mine.size(); ++i) {
      auto& lp = mine[i];
      all += lp.local_of.size();
      lp.at.assign(lp.knolg.size() * static_cast<std::size_t>(nplan), 0);
      if (!lp.local_of.empty()) heap.push_back({lp.local_of[0].first, static_cast<std::uint32_t>(i), 1});
    }
    auto sift = [&heap](std::size_t i) {  // the smallest node on top
      const std::size_t n = heap.size();
      const Head h = heap[i];
      for (std::size_t c; (c = 2 * i + 1) < n; i = c) {
        if (c + 1 < n && heap[c + 1].node < heap[c].node) ++c;
        if (heap[c].node >= h.node) break;
        heap[i] = heap[c];
      }
      heap[i] = h;
    };
    for (std::size_t i = heap.size() / 2; i-- > 0;) sift(i);
    held.reserve(all);
    while (!heap.empty()) {
      Head& h = heap.front();
      if (held.empty() || held.back() != h.node) held.push_back(h.node);
      auto& lp = mine[h.part];
      lp.at[static_cast<std::size_t>(lp.local_of[h.next - 1].second)] = static_cast<std::uint32_t>(held.size() - 1);
      if (h.next < lp.local_of.size()) {
        h.node = lp.local_of[h.next++].first;
      } else {
        h = heap.back();
        heap.pop_back();
      }
      if (!heap.empty()) sift(0);
    }
    // The other planes: the same nodes, NPOIN2 further each.
    const std::size_t base = held.size();
    held.resize(base * static_cast<std::size_t>(nplan));
    for (int j = 1; j < nplan; ++j)
      for (std::size_t k = 0; k < base; ++k) held[k + j * base] = held[k] + static_cast<std::int32_t>(j * npoin2);
    held_index = SortedIndex(held);
    for (auto& lp : mine) {
      const std::size_t np = lp.knolg.size();
      for (int j = 1; j < nplan; ++j)
        for (std::size_t k = 0; k < np; ++k) lp.at[k + j * np] = lp.at[k] + static_cast<std::uint32_t>(j * base);
    }
    for (std::size_t src = 0; src < sources.size(); ++src) {
      const auto& sg = sources[src]->header();
      headers.emplace_back();
      layouts.emplace_back();
      Kind kind{names.dir + "/" + source_names[src], {}, {}, PartOutputs::kSerafinIndex};
      for (const auto& lp : mine) {
        const auto ne = static_cast<std::int64_t>(lp.ikle.size()) / ndp, np = static_cast<std::int64_t>(lp.knolg.size());
        serafin::Header h = sg;
        h.set_title(sg.title.substr(0, 72));
        h.nelem = nplan > 1 ? ne * (nplan - 1) : ne;
        h.npoin = np * nplan;
        h.iparam = {1, 0, sg.iparam[2], sg.iparam[3], 0, 0, sg.iparam[6], static_cast<std::int32_t>(lp.bpoints.size()),
                    static_cast<std::int32_t>(lp.iface.size()), sg.date ? 1 : 0};
        serafin::check_record_limits(h);
        layouts.back().push_back(serafin::Layout::of(h));
        kind.sizes.push_back(layouts.back().back().frame_offset(sources[src]->frame_count()));
        headers.back().push_back(std::move(h));
      }
      plan.push_back(std::move(kind));
    }
    if (with_cli && !concat) {  // a file per part: written as soon as made (no sizes needed first)
      plan.push_back(Kind{names.dir + "/" + names.cli, std::vector<std::int64_t>(mine.size(), 0), {}, PartOutputs::kCliIndex});
      if (with_par) plan.push_back(Kind{names.dir + "/" + names.par, std::vector<std::int64_t>(mine.size(), 0), {}, PartOutputs::kParIndex});
    }
  });
  TempOutputs out;
  std::vector<std::size_t> text_ids, zone_ids;  // the case files' parts (by text, then part), the zones' parts
  std::vector<PartOutputs> kinds;
  kinds.reserve(plan.size() + 2);
  auto create = [&](std::size_t from) {
    collective(comm, [&] {
      const CreatingTemporary creating;
      for (std::size_t k = from; k < plan.size(); ++k)
        kinds.emplace_back(comm, out, concat, plan[k].base, p0, nparts, plan[k].sizes, plan[k].lines, plan[k].index_kind);
      if (from > 0) return;
      for (const auto& t : case_texts)
        for (const auto& lp : mine) text_ids.push_back(out.add(names.dir + "/" + t.name + partel::suffix(nparts, lp.p)));
      if (with_cases && !cases.zones.empty())
        for (const auto& lp : mine) zone_ids.push_back(out.add(names.dir + "/" + partel::base_name(cases.zones) + partel::suffix(nparts, lp.p)));
    });
  };
  create(0);
  collective(comm, [&] {
    // Each part's .cli and PAR texts: written at once to a file per part; the concatenated
    // layout keeps them until every part's size is known.
    if (with_cli) {
      for (std::size_t i = 0; i < mine.size(); ++i) {
        auto& lp = mine[i];
        std::string text;
        for (auto k : lp.bpoints) {
          const auto& line = cli->lines[static_cast<std::size_t>(k)];
          text += boundary::format_telemac(line, lp.local(static_cast<std::int32_t>(line.n - 1)) + 1, line.k);
          text += '\n';
        }
        std::string par;
        if (with_par) {  // partel writes PAR files for 2D meshes only (its concatenated layout: an empty pair)
          partel::ParText t;
          t.ndp = ndp;
          for (auto k : lp.bpoints) {
            partel::ParBoundaryPoint b;
            const auto next = contour.next[static_cast<std::size_t>(k)], prev = contour.prev[static_cast<std::size_t>(k)];
            int away = 0;
            if (sub_part[static_cast<std::size_t>(contour.nelbor[static_cast<std::size_t>(k)])] != lp.p) {
              b.iseg = cli->lines[static_cast<std::size_t>(next)].n;
              b.xs = static_cast<float>(bx[static_cast<std::size_t>(next)]), b.ys = static_cast<float>(by[static_cast<std::size_t>(next)]);
              ++away;
            }
            if (sub_part[static_cast<std::size_t>(contour.nelbor[static_cast<std::size_t>(prev)])] != lp.p) {
              b.iseg = -cli->lines[static_cast<std::size_t>(prev)].n;
              b.xs = static_cast<float>(bx[static_cast<std::size_t>(prev)]), b.ys = static_cast<float>(by[static_cast<std::size_t>(prev)]);
              ++away;
            }
            if (away == 2) b.iseg = -9999;
            const auto& line = cli->lines[static_cast<std::size_t>(k)];
            b.colour = line.k;
            b.local = lp.local(static_cast<std::int32_t>(line.n - 1)) + 1;
            b.numliq = numliq[static_cast<std::size_t>(k)];
            t.boundary.push_back(b);
          }
          t.iface = std::move(lp.iface);
          t.halo = std::move(lp.halo);
          par = partel::format_par(t);
        }
        if (concat) {
          clis.push_back(std::move(text));
          pars.push_back(std::move(par));
        } else {
          kinds[sources.size()].write(i, text.data(), text.size(), 0);
          if (with_par) kinds[sources.size() + 1].write(i, par.data(), par.size(), 0);
        }
      }
    }
    // What the rest needs no more goes before the coordinates come (the largest arrays here),
    // and the heap is given back: parts' small arrays would otherwise stay in the process.
    for (auto& lp : mine) {
      std::vector<std::pair<std::int32_t, std::int32_t>>().swap(lp.local_of);
      std::vector<std::pair<std::int32_t, std::vector<std::int64_t>>>().swap(lp.iface);
      std::vector<std::vector<std::int64_t>>().swap(lp.halo);
      std::vector<std::int32_t>().swap(lp.bpoints);
    }
    ::malloc_trim(0);
  });
  if (with_cli && concat) {
    const std::size_t from = plan.size();
    auto text_kind = [&](const std::string& base, const std::vector<std::string>& texts, int index_kind) {
      Kind kind{base, {}, {}, index_kind};
      for (const auto& t : texts) {
        kind.sizes.push_back(static_cast<std::int64_t>(t.size()));
        kind.lines.push_back(static_cast<std::int64_t>(std::count(t.begin(), t.end(), '\n')));
      }
      plan.push_back(std::move(kind));
    };
    text_kind(names.dir + "/" + names.cli, clis, PartOutputs::kCliIndex);
    text_kind(names.dir + "/" + names.par, pars, with_par ? PartOutputs::kParIndex : PartOutputs::kEmptyIndex);
    create(from);
  }
  // Every value this rank's parts hold comes from one rank's share of its record.
  const SharedRecord shared(comm, g.npoin, gnodes);
  gx = shared.coordinates(geo, geo.x_offset() + 4);
  gy = shared.coordinates(geo, geo.y_offset() + 4);
  if (with_cases && !cases.zones.empty()) {
    auto slot = [&](std::int32_t n) { return place(n); };
    auto known = zones_by_shares(comm, cases.zones, npoin2, held);
    collective(comm, [&] {
      if (known)
        zones.emplace(cases.zones, slot, std::move(*known));
      else  // every rank reads the whole file: a layout the shares do not take, or an error to name
        zones.emplace(cases.zones, npoin2, slot, static_cast<std::int64_t>(held.size()));
    });
  }
  collective(comm, [&] {
    // Header and mesh, a part at a time for every source; then the part's elements, its
    // texts and the coordinates are let go: the frames need only where its nodes sit.
    for (std::size_t i = 0; i < mine.size(); ++i) {
      auto& lp = mine[i];
      const auto ne = static_cast<std::int64_t>(lp.ikle.size()) / ndp, np = static_cast<std::int64_t>(lp.knolg.size());
      for (std::size_t src = 0; src < sources.size(); ++src) {
        const serafin::Header& h = headers[src][i];
        Mesh m;
        m.nelem = h.nelem;
        m.npoin = h.npoin;
        m.ndp = h.ndp;
        m.nplan = nplan;
        if (nplan <= 1) {
          m.ikle = std::vector<std::int32_t>(lp.ikle);
        } else {
          m.ikle.reserve(static_cast<std::size_t>(m.nelem * m.ndp));
          for (int l = 0; l + 1 < nplan; ++l)
            for (std::int64_t j = 0; j < ne; ++j) {
              for (int v = 0; v < 3; ++v) m.ikle.push_back(lp.ikle[static_cast<std::size_t>(3 * j + v)] + static_cast<std::int32_t>(l * np));
              for (int v = 0; v < 3; ++v) m.ikle.push_back(lp.ikle[static_cast<std::size_t>(3 * j + v)] + static_cast<std::int32_t>((l + 1) * np));
            }
        }
        for (int j = 0; j < nplan; ++j)
          for (std::int64_t k = 0; k < np; ++k) {
            const std::int64_t gidx = lp.knolg[static_cast<std::size_t>(k)] + j * npoin2;
            m.ipobo.push_back(static_cast<std::int32_t>(gidx + 1));
            const auto a = lp.at[static_cast<std::size_t>(k + j * np)];
            m.x.push_back(gx[a]);
            m.y.push_back(gy[a]);
          }
        MemorySink sink;
        serafin::write_header(sink, h, m);
        kinds[src].write(i, sink.bytes.data(), sink.bytes.size(), 0);
      }
      if (i < clis.size()) {
        kinds[sources.size()].write(i, clis[i].data(), clis[i].size(), 0);
        std::string().swap(clis[i]);
      }
      if (kinds.size() > sources.size() + 1 && i < pars.size()) {
        kinds[sources.size() + 1].write(i, pars[i].data(), pars[i].size(), 0);
        std::string().swap(pars[i]);
      }
      for (std::size_t t = 0; t < case_texts.size(); ++t) {
        const std::string text = case_texts[t].text(lp.p);
        out.write_at(text_ids[t * mine.size() + i], text.data(), text.size(), 0);
      }
      if (zones) {
        const std::string text = zones->text(lp.knolg.data(), static_cast<std::int64_t>(lp.knolg.size()));
        out.write_at(zone_ids[i], text.data(), text.size(), 0);
      }
      std::vector<std::int32_t>().swap(lp.ikle);
    }
    gx.clear();
    gy.clear();
    zones.reset();
    held_index = SortedIndex();  // the frames need only each part's places (`at`)
    ::malloc_trim(0);
  });
  for (std::size_t src = 0; src < sources.size(); ++src) {
    PartOutputs& files = kinds[src];
    // Frames: each record read once over the ranks (each its share), then cut into the parts.
    const serafin::Reader& r = *sources[src];
    const auto& sg = r.header();
    const int rs = real_size(sg.precision);
    const auto& lay = layouts[src];
    std::vector<unsigned char> rec;
    std::vector<double> values, local;
    for (std::int64_t f = 0; f < r.frame_count(); ++f) {
      collective(comm, [&] {
        const double time = r.read_time(f);
        for (std::size_t i = 0; i < mine.size(); ++i) {
          unsigned char t[16];
          store<std::int32_t>(t, rs, sg.byte_order);
          serafin::encode_reals(&time, 1, sg.precision, sg.byte_order, t + 4);
          store<std::int32_t>(t + 4 + rs, rs, sg.byte_order);
          files.write(i, t, static_cast<std::size_t>(8 + rs), lay[i].frame_offset(f));
        }
      });
      for (int v = 0; v < sg.nvar(); ++v) {
        shared.read(r, r.layout().values_offset(f, v), values);
        collective(comm, [&] {
          for (std::size_t i = 0; i < mine.size(); ++i) {
            const auto& lp = mine[i];
            const auto np = static_cast<std::int64_t>(lp.knolg.size()), npl = np * nplan;
            local.resize(static_cast<std::size_t>(npl));
            for (int j = 0; j < nplan; ++j)
              for (std::int64_t k = 0; k < np; ++k) local[static_cast<std::size_t>(k + j * np)] = values[lp.at[static_cast<std::size_t>(k + j * np)]];
            rec.resize(static_cast<std::size_t>(8 + npl * rs));
            store<std::int32_t>(rec.data(), static_cast<std::int32_t>(npl * rs), sg.byte_order);
            serafin::encode_reals(local.data(), npl, sg.precision, sg.byte_order, rec.data() + 4);
            store<std::int32_t>(rec.data() + 4 + npl * rs, static_cast<std::int32_t>(npl * rs), sg.byte_order);
            files.write(i, rec.data(), rec.size(), lay[i].values_offset(f, v) - 4);
          }
        });
      }
    }
  }
  for (auto& k : kinds) k.close();
  collective(comm, [&] { out.commit(); });
  partel::WriteReport report;
  std::int64_t totals[2] = {static_cast<std::int64_t>(out.size()), 0};
  for (std::size_t i = 0; i < out.size(); ++i) totals[1] += file_size(out.final_path(i));
  MPI_Allreduce(MPI_IN_PLACE, totals, 2, MPI_INT64_T, MPI_SUM, comm);
  report.files = totals[0];
  report.bytes = totals[1];
  if (edge_cut) MPI_Allreduce(&edge_cut_here, edge_cut, 1, MPI_INT64_T, MPI_SUM, comm);
  return report;
}

}  // namespace anabranch::pio
