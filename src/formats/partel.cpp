// TELEMAC's partitioned layout (partel v8). Specification: docs/formats/telemac-partitions.md.
#include "formats/partel.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <exception>
#include <mutex>
#include <thread>

#include "core/error.hpp"
#include "core/io.hpp"
#include "core/outputs.hpp"
#include "core/progress.hpp"
#include "formats/fortran_text.hpp"

namespace anabranch::partel {
namespace {

constexpr int kSolid = 2;  // LIHBOR code of a wall
// Parts a node may be shared by, besides its own: TELEMAC's NBMAXNSHARE - 1.
constexpr std::size_t kMaxShare = 9;

double since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Runs fn(part, thread) for every part on `threads` threads; rethrows the first error.
template <class Fn>
void for_each_part(int nparts, int threads, Fn&& fn) {
  std::atomic<int> next{0};
  std::exception_ptr error;
  std::mutex mu;
  auto work = [&](int t) {
    for (int p; (p = next.fetch_add(1)) < nparts;) {
      try {
        fn(p, t);
      } catch (...) {
        std::lock_guard<std::mutex> lock(mu);
        if (!error) error = std::current_exception();
        next = nparts;
      }
    }
  };
  threads = std::max(1, std::min(threads, nparts));
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t) pool.emplace_back(work, t);
  work(0);
  for (auto& th : pool) th.join();
  if (error) std::rethrow_exception(error);
}

// CSR lists: for every part, a list of items in increasing order.
struct PerPart {
  std::vector<std::int64_t> offset;
  std::vector<std::int32_t> items;
  const std::int32_t* begin(int p) const { return items.data() + offset[static_cast<std::size_t>(p)]; }
  const std::int32_t* end(int p) const { return items.data() + offset[static_cast<std::size_t>(p) + 1]; }
  std::int64_t count(int p) const { return offset[static_cast<std::size_t>(p) + 1] - offset[static_cast<std::size_t>(p)]; }
};

// Builds PerPart from (part, item) pairs given in increasing item order.
PerPart bucket(int nparts, const std::vector<std::pair<std::int32_t, std::int32_t>>& pairs) {
  PerPart r;
  r.offset.assign(static_cast<std::size_t>(nparts) + 1, 0);
  for (auto& pr : pairs) ++r.offset[static_cast<std::size_t>(pr.first) + 1];
  for (int p = 0; p < nparts; ++p) r.offset[static_cast<std::size_t>(p) + 1] += r.offset[static_cast<std::size_t>(p)];
  r.items.resize(pairs.size());
  std::vector<std::int64_t> fill(r.offset.begin(), r.offset.end() - 1);
  for (auto& pr : pairs) r.items[static_cast<std::size_t>(fill[static_cast<std::size_t>(pr.first)]++)] = pr.second;
  return r;
}

// Parts containing node n (0-based): its interface list or its owner.
template <class Fn>
void parts_of(const Plan& plan, std::int32_t n, Fn&& fn) {
  const std::int64_t k = plan.iface_index(n);
  if (k < 0) {
    fn(plan.owner[static_cast<std::size_t>(n)]);
    return;
  }
  for (std::int64_t i = plan.iface_offset[static_cast<std::size_t>(k)]; i < plan.iface_offset[static_cast<std::size_t>(k) + 1]; ++i)
    fn(plan.iface_parts[static_cast<std::size_t>(i)]);
}

// Global -> local node numbers of one part: an open-addressing hash table sized to the
// part, so memory does not grow with the mesh or the thread count.
class LocalIndex {
 public:
  void build(const std::int32_t* knolg, std::int64_t n) {
    std::size_t cap = 16;
    while (cap < static_cast<std::size_t>(2 * n)) cap <<= 1;
    keys_.assign(cap, -1);
    vals_.resize(cap);
    mask_ = cap - 1;
    for (std::int64_t i = 0; i < n; ++i) {
      std::size_t h = slot(knolg[i]);
      while (keys_[h] != -1) h = (h + 1) & mask_;
      keys_[h] = knolg[i];
      vals_[h] = static_cast<std::int32_t>(i);
    }
  }
  // Local number (0-based) of global node g, or -1.
  std::int32_t operator[](std::int32_t g) const {
    for (std::size_t h = slot(g);; h = (h + 1) & mask_) {
      if (keys_[h] == g) return vals_[h];
      if (keys_[h] == -1) return -1;
    }
  }

 private:
  std::size_t slot(std::int32_t g) const { return (static_cast<std::uint32_t>(g) * 2654435761u) & mask_; }
  std::vector<std::int32_t> keys_, vals_;
  std::size_t mask_ = 0;
};

// Everything about the partition that the per-part files need, computed once.
struct Context {
  const Plan& plan;
  const GlobalMesh& mesh;
  std::int64_t npoin2 = 0;
  std::vector<std::int32_t> bnodes;  // boundary points' nodes (0-based), in .cli order
  PerPart boundary;                   // per part: boundary point indices
  PerPart iface;                      // per part: indices into plan.iface_nodes
  PerPart halo;                       // per part: halo elements (global, increasing)
  struct EdgeRef {
    std::uint64_t key;
    std::int32_t elem;
    bool operator<(const EdgeRef& o) const { return key < o.key || (key == o.key && elem < o.elem); }
  } __attribute__((packed));
  std::vector<EdgeRef> edges;  // (edge key, element) of the edges with an interface end, sorted
  std::vector<char> liquid_node;      // node is a boundary node with LIHBOR != 2

  Context(const Plan& p, const GlobalMesh& m) : plan(p), mesh(m) {}

  std::uint64_t key(std::int32_t a, std::int32_t b) const {
    if (a > b) std::swap(a, b);
    return (static_cast<std::uint64_t>(a) << 32) | static_cast<std::uint32_t>(b);
  }
  // The element on the other side of edge (a, b) of element e, or -1.
  std::int32_t neighbour(std::int32_t e, std::int32_t a, std::int32_t b) const {
    const auto k = key(a, b);
    auto it = std::lower_bound(edges.begin(), edges.end(), EdgeRef{k, -1});
    for (; it != edges.end() && it->key == k; ++it)
      if (it->elem != e) return it->elem;
    return -1;
  }
};

void prepare(Context& c) {
  const Plan& plan = c.plan;
  const int nparts = plan.nparts;
  c.npoin2 = plan.npoin;
  // Boundary points per part (a point belongs to every part holding its node).
  if (c.mesh.cli) {
    for (const auto& l : c.mesh.cli->lines) c.bnodes.push_back(static_cast<std::int32_t>(l.n - 1));
    c.liquid_node.assign(static_cast<std::size_t>(c.npoin2), 0);
    for (const auto& l : c.mesh.cli->lines) c.liquid_node[static_cast<std::size_t>(l.n - 1)] = l.lihbor != kSolid;
  }
  std::vector<std::pair<std::int32_t, std::int32_t>> pairs;
  for (std::size_t k = 0; k < c.bnodes.size(); ++k)
    parts_of(plan, c.bnodes[k], [&](int p) { pairs.emplace_back(p, static_cast<std::int32_t>(k)); });
  std::stable_sort(pairs.begin(), pairs.end(), [](auto& a, auto& b) { return a.first < b.first; });
  c.boundary = bucket(nparts, pairs);
  pairs.clear();
  for (std::size_t k = 0; k < plan.iface_nodes.size(); ++k)
    for (std::int64_t i = plan.iface_offset[k]; i < plan.iface_offset[k + 1]; ++i)
      pairs.emplace_back(plan.iface_parts[static_cast<std::size_t>(i)], static_cast<std::int32_t>(k));
  std::stable_sort(pairs.begin(), pairs.end(), [](auto& a, auto& b) { return a.first < b.first; });
  c.iface = bucket(nparts, pairs);
  pairs.clear();
  // Edges with an interface end. Every edge of a halo triangle has one (the triangle's
  // cut edge joins two interface nodes, and each other edge shares a node with it), so
  // the neighbours of halo elements are all found here; quadrilaterals take every edge.
  const int ndp = plan.ndp;
  std::vector<char> is_iface(static_cast<std::size_t>(c.npoin2), 0);
  for (auto n : plan.iface_nodes) is_iface[static_cast<std::size_t>(n)] = 1;
  auto each_edge = [&](auto&& fn) {
    for (std::int64_t e = 0; e < plan.nelem; ++e) {
      const std::int32_t* v = c.mesh.ikle2->data() + e * c.mesh.stride;
      for (int k = 0; k < ndp; ++k) {
        const std::int32_t a = v[k] - 1, b = v[(k + 1) % ndp] - 1;
        if (ndp == 3 && !is_iface[static_cast<std::size_t>(a)] && !is_iface[static_cast<std::size_t>(b)]) continue;
        fn(a, b, static_cast<std::int32_t>(e));
      }
    }
  };
  std::size_t count = 0;
  each_edge([&](std::int32_t, std::int32_t, std::int32_t) { ++count; });
  c.edges.reserve(count);  // exact: no doubling at the memory peak
  each_edge([&](std::int32_t a, std::int32_t b, std::int32_t e) { c.edges.push_back({c.key(a, b), e}); });
  std::sort(c.edges.begin(), c.edges.end());
  for (std::size_t i = 0; i + 1 < c.edges.size(); ++i) {
    const auto& a = c.edges[i];
    const auto& b = c.edges[i + 1];
    if (a.key != b.key) continue;
    const int pa = plan.epart[static_cast<std::size_t>(a.elem)], pb = plan.epart[static_cast<std::size_t>(b.elem)];
    if (pa == pb) continue;
    pairs.emplace_back(pa, a.elem);
    pairs.emplace_back(pb, b.elem);
  }
  std::sort(pairs.begin(), pairs.end());
  pairs.erase(std::unique(pairs.begin(), pairs.end()), pairs.end());
  c.halo = bucket(nparts, pairs);
}

// Part p's SERAFIN header and mesh arrays. loc: global node -> local (0-based), filled.
void part_mesh(const Context& c, const serafin::Header& g, int p, const LocalIndex& loc, serafin::Header& h,
               Mesh& m) {
  const Plan& plan = c.plan;
  const int nplan = g.nplan();
  const std::int64_t ne = plan.part_nelem(p), np = plan.part_npoin(p);
  h = g;
  h.set_title(g.title.substr(0, 72));  // partel: the title's format word is the one it writes
  h.nelem = nplan > 1 ? ne * (nplan - 1) : ne;
  h.npoin = np * nplan;
  h.iparam = {1, 0, g.iparam[2], g.iparam[3], 0, 0, g.iparam[6], static_cast<std::int32_t>(c.boundary.count(p)),
              static_cast<std::int32_t>(c.iface.count(p)), g.date ? 1 : 0};
  m.nelem = h.nelem;
  m.npoin = h.npoin;
  m.ndp = g.ndp;
  m.nplan = nplan;
  const int ndp2 = plan.ndp;
  std::vector<std::int32_t> tri(static_cast<std::size_t>(ne * ndp2));
  const std::int32_t* elems = plan.part_elems(p);
  for (std::int64_t j = 0; j < ne; ++j) {
    const std::int32_t* v = c.mesh.ikle2->data() + static_cast<std::int64_t>(elems[j]) * c.mesh.stride;
    for (int k = 0; k < ndp2; ++k) tri[static_cast<std::size_t>(j * ndp2 + k)] = loc[v[k] - 1] + 1;
  }
  if (nplan <= 1) {
    m.ikle = std::move(tri);
  } else {
    m.ikle.resize(static_cast<std::size_t>(m.nelem * m.ndp));
    std::size_t k = 0;
    for (int l = 0; l + 1 < nplan; ++l)
      for (std::int64_t j = 0; j < ne; ++j) {
        for (int v = 0; v < 3; ++v) m.ikle[k++] = tri[static_cast<std::size_t>(3 * j + v)] + static_cast<std::int32_t>(l * np);
        for (int v = 0; v < 3; ++v) m.ikle[k++] = tri[static_cast<std::size_t>(3 * j + v)] + static_cast<std::int32_t>((l + 1) * np);
      }
  }
  const std::int32_t* knolg = plan.part_knolg(p);
  m.ipobo.resize(static_cast<std::size_t>(m.npoin));
  m.x.resize(static_cast<std::size_t>(m.npoin));
  m.y.resize(static_cast<std::size_t>(m.npoin));
  for (int j = 0; j < nplan; ++j)
    for (std::int64_t i = 0; i < np; ++i) {
      const std::int64_t gidx = knolg[i] + j * c.npoin2;
      const auto li = static_cast<std::size_t>(i + j * np);
      m.ipobo[li] = static_cast<std::int32_t>(gidx + 1);  // KNOLG
      m.x[li] = (*c.mesh.x)[static_cast<std::size_t>(gidx)];
      m.y[li] = (*c.mesh.y)[static_cast<std::size_t>(gidx)];
    }
}

std::string cli_text(const Context& c, int p, const LocalIndex& loc) {
  std::string out;
  for (const std::int32_t* k = c.boundary.begin(p); k != c.boundary.end(p); ++k) {
    const auto& line = c.mesh.cli->lines[static_cast<std::size_t>(*k)];
    out += boundary::format_telemac(line, loc[static_cast<std::int32_t>(line.n - 1)] + 1, line.k);
    out += '\n';
  }
  return out;
}

// The PAR file as partel v8 writes it (gfortran): list-directed boundary lines (the
// colour, local node, ISEG, the neighbour's X and Y in single precision, NUMLIQ), then
// the interface nodes in (10(I7,1X)) and the halo elements in (7(I9,1X)).
std::string par_text(const Context& c, int p, const LocalIndex& loc) {
  const Plan& plan = c.plan;
  const auto& x = *c.mesh.x;
  const auto& y = *c.mesh.y;
  const auto& contour = *c.mesh.contour;
  ParText t;
  for (const std::int32_t* kp = c.boundary.begin(p); kp != c.boundary.end(p); ++kp) {
    const std::int32_t k = *kp;
    const std::int32_t node = c.bnodes[static_cast<std::size_t>(k)];
    const std::int32_t next = contour.next[static_cast<std::size_t>(k)], prev = contour.prev[static_cast<std::size_t>(k)];
    ParBoundaryPoint b;
    int away = 0;
    if (plan.epart[static_cast<std::size_t>(contour.nelbor[static_cast<std::size_t>(k)])] != p) {
      const std::int32_t n = c.bnodes[static_cast<std::size_t>(next)];
      b.iseg = n + 1;
      b.xs = static_cast<float>(x[static_cast<std::size_t>(n)]), b.ys = static_cast<float>(y[static_cast<std::size_t>(n)]);
      ++away;
    }
    if (plan.epart[static_cast<std::size_t>(contour.nelbor[static_cast<std::size_t>(prev)])] != p) {
      const std::int32_t n = c.bnodes[static_cast<std::size_t>(prev)];
      b.iseg = -(n + 1);
      b.xs = static_cast<float>(x[static_cast<std::size_t>(n)]), b.ys = static_cast<float>(y[static_cast<std::size_t>(n)]);
      ++away;
    }
    if (away == 2) b.iseg = -9999;
    b.colour = c.mesh.cli->lines[static_cast<std::size_t>(k)].k;
    b.local = loc[node] + 1;
    b.numliq = (*c.mesh.numliq)[static_cast<std::size_t>(k)];
    t.boundary.push_back(b);
  }
  for (const std::int32_t* ip = c.iface.begin(p); ip != c.iface.end(p); ++ip) {
    const std::int32_t n = plan.iface_nodes[static_cast<std::size_t>(*ip)];
    std::vector<std::int64_t> row(1, loc[n] + 1);
    for (std::int64_t i = plan.iface_offset[static_cast<std::size_t>(*ip)]; i < plan.iface_offset[static_cast<std::size_t>(*ip) + 1]; ++i) {
      const int q = plan.iface_parts[static_cast<std::size_t>(i)];
      if (q != p) row.push_back(q);
    }
    t.iface.push_back({n, std::move(row)});
  }
  const int ndp = plan.ndp;
  t.ndp = ndp;
  for (const std::int32_t* ep = c.halo.begin(p); ep != c.halo.end(p); ++ep) {
    const std::int32_t e = *ep;
    const std::int32_t* v = c.mesh.ikle2->data() + static_cast<std::int64_t>(e) * c.mesh.stride;
    std::vector<std::int64_t> row(1, plan.local_element(e) + 1);
    row.resize(static_cast<std::size_t>(1 + 2 * ndp));
    for (int k = 0; k < ndp; ++k) {
      const std::int32_t a = v[k] - 1, b = v[(k + 1) % ndp] - 1;
      const std::int32_t f = c.neighbour(e, a, b);
      std::int64_t rank, elem;
      if (f >= 0) {
        rank = plan.epart[static_cast<std::size_t>(f)];
        elem = plan.local_element(f) + 1;
      } else {
        const bool liquid = !c.liquid_node.empty() && c.liquid_node[static_cast<std::size_t>(a)] &&
                            c.liquid_node[static_cast<std::size_t>(b)];
        rank = elem = liquid ? 0 : -1;
      }
      row[static_cast<std::size_t>(1 + k)] = rank;
      row[static_cast<std::size_t>(1 + ndp + k)] = elem;
    }
    t.halo.push_back(std::move(row));
  }
  return format_par(t);
}

// One SERAFIN file split into parts: where each part's bytes go.
struct SerafinParts {
  const serafin::Reader* reader;
  std::vector<serafin::Layout> layouts;  // per part
  std::vector<std::size_t> file;         // per part: id in the TempOutputs
  std::vector<std::int64_t> base;        // per part: offset of the part in its file
};

// Frames of one SERAFIN file: batches of records (a time, or one variable of one frame)
// read once from the global file as stored, then gathered into every part. The parts keep
// the file's precision and byte order, so a value is moved as the word it is (W: 4 or 8
// bytes), never decoded and encoded again. Each thread reuses its part's buffer.
template <class W>
void scatter_frames(const Plan& plan, const SerafinParts& sp, const TempOutputs& out, std::int64_t npoin2, int threads,
                    std::int64_t memory_budget) {
  const int nparts = plan.nparts;
  const serafin::Reader& r = *sp.reader;
  const auto& g = r.header();
  const int nvar = g.nvar(), nplan = g.nplan();
  const std::int64_t nrec = r.frame_count() * (nvar + 1);
  const int rs = real_size(g.precision);
  const std::int64_t per_batch =
      std::max<std::int64_t>(1, memory_budget / std::max<std::int64_t>(1, g.npoin * static_cast<std::int64_t>(sizeof(W))));
  Progress progress("partition: frames of " + r.name(), nrec);
  std::vector<std::vector<W>> values;
  std::vector<std::vector<unsigned char>> chunks(static_cast<std::size_t>(std::max(1, threads)));
  for (std::int64_t r0 = 0; r0 < nrec;) {
    // Batch [r0, r1): at most per_batch variable records.
    std::int64_t r1 = r0, nv = 0;
    while (r1 < nrec && (r1 % (nvar + 1) == 0 || nv < per_batch)) {
      if (r1 % (nvar + 1) != 0) ++nv;
      ++r1;
    }
    values.resize(static_cast<std::size_t>(nv));
    std::vector<double> times;
    std::int64_t vi = 0;
    for (std::int64_t rec = r0; rec < r1; ++rec) {
      const std::int64_t f = rec / (nvar + 1);
      const int v = static_cast<int>(rec % (nvar + 1)) - 1;
      if (v < 0) {
        times.push_back(r.read_time(f));
        r.prefetch(f + (r1 - r0 + nvar) / (nvar + 1), 1);  // the next batch's frame, read ahead by the kernel
      } else {
        auto& buf = values[static_cast<std::size_t>(vi++)];
        buf.resize(static_cast<std::size_t>(g.npoin));
        r.read_encoded(f, v, 0, g.npoin, buf.data());
      }
    }
    for_each_part(nparts, threads, [&](int p, int t) {
      const auto& lay = sp.layouts[static_cast<std::size_t>(p)];
      const std::int64_t np = plan.part_npoin(p), npl = np * nplan;
      const std::int32_t* knolg = plan.part_knolg(p);
      auto offset_of = [&](std::int64_t rec) {
        const std::int64_t f = rec / (nvar + 1);
        const int v = static_cast<int>(rec % (nvar + 1)) - 1;
        return v < 0 ? lay.frame_offset(f) : lay.values_offset(f, v) - 4;
      };
      const std::int64_t begin = offset_of(r0);
      const std::int64_t end = r1 < nrec ? offset_of(r1) : lay.frame_offset(r.frame_count());
      auto& chunk = chunks[static_cast<std::size_t>(t)];
      chunk.resize(static_cast<std::size_t>(end - begin));
      unsigned char* w = chunk.data();
      std::size_t ti = 0, vk = 0;
      for (std::int64_t rec = r0; rec < r1; ++rec) {
        const bool is_time = rec % (nvar + 1) == 0;
        const std::int64_t bytes = is_time ? rs : npl * rs;
        store<std::int32_t>(w, static_cast<std::int32_t>(bytes), g.byte_order);
        if (is_time) {
          serafin::encode_reals(&times[ti++], 1, g.precision, g.byte_order, w + 4);
        } else {
          const W* src = values[vk++].data();
          unsigned char* dst = w + 4;
          for (int j = 0; j < nplan; ++j)
            for (std::int64_t i = 0; i < np; ++i, dst += sizeof(W)) std::memcpy(dst, &src[knolg[i] + j * npoin2], sizeof(W));
        }
        store<std::int32_t>(w + 4 + bytes, static_cast<std::int32_t>(bytes), g.byte_order);
        w += 8 + bytes;
      }
      out.write_at(sp.file[static_cast<std::size_t>(p)], chunk.data(), chunk.size(), sp.base[static_cast<std::size_t>(p)] + begin);
    });
    progress.update(r1);
    r0 = r1;
  }
}

// Places the parts of one SERAFIN file: per-rank files <base><suffix>, or one
// <base>-CONCAT with its INDEX (1-based begin, end; big-endian int64).
SerafinParts place_parts(const serafin::Reader& reader, const std::vector<serafin::Header>& headers, TempOutputs& out,
                         const std::string& base, bool concat, bool frames = true) {
  const int nparts = static_cast<int>(headers.size());
  SerafinParts sp;
  sp.reader = &reader;
  const std::size_t concat_id = concat ? out.add(base + "-CONCAT") : 0;
  std::vector<unsigned char> index;
  std::int64_t at = 0;
  for (int p = 0; p < nparts; ++p) {
    serafin::check_record_limits(headers[static_cast<std::size_t>(p)]);
    sp.layouts.push_back(serafin::Layout::of(headers[static_cast<std::size_t>(p)]));
    if (concat) {
      const std::int64_t size = sp.layouts.back().header_bytes + (frames ? reader.frame_count() : 0) * sp.layouts.back().frame_bytes;
      unsigned char e[16];
      store<std::int64_t>(e, at + 1, ByteOrder::Big);
      store<std::int64_t>(e + 8, at + 1 + size, ByteOrder::Big);
      index.insert(index.end(), e, e + 16);
      sp.file.push_back(concat_id);
      sp.base.push_back(at);
      at += size;
    } else {
      sp.file.push_back(out.add(base + suffix(nparts, p)));
      sp.base.push_back(0);
    }
  }
  if (concat) out.write_at(out.add(base + "-INDEX"), index.data(), index.size(), 0);
  return sp;
}

void scatter_all(const Plan& plan, const SerafinParts& sp, const TempOutputs& out, std::int64_t npoin2, int threads,
                 std::int64_t memory_budget) {
  if (sp.reader->header().precision == Precision::Single)
    scatter_frames<std::uint32_t>(plan, sp, out, npoin2, threads, memory_budget);
  else
    scatter_frames<std::uint64_t>(plan, sp, out, npoin2, threads, memory_budget);
}

// Renames every output and fills the report's file list and sizes.
void finish(TempOutputs& out, WriteReport& report) {
  out.commit();
  for (std::size_t i = 0; i < out.size(); ++i) {
    report.paths.push_back(out.final_path(i));
    report.bytes += file_size(out.final_path(i));
  }
  report.files = static_cast<std::int64_t>(out.size());
}

}  // namespace

std::string format_par(const ParText& t) {
  std::string out = fortran::ListRecord().integer(static_cast<std::int64_t>(t.boundary.size())).line();
  for (const auto& b : t.boundary)
    out += fortran::ListRecord().integer(b.colour).integer(b.local).integer(b.iseg).real4(b.xs).real4(b.ys).integer(b.numliq).line();
  out += fortran::ListRecord().integer(static_cast<std::int64_t>(t.iface.size())).line();
  for (const auto& [node, r] : t.iface) {
    if (r.size() > kMaxShare)
      throw UsageError("node " + std::to_string(node + 1) + " is shared by " + std::to_string(r.size()) +
                       " parts, more than TELEMAC accepts (NBMAXNSHARE - 1 = " + std::to_string(kMaxShare - 1) + "): use fewer parts");
    std::vector<std::int64_t> row = r;
    row.resize(kMaxShare + 1, -1);
    out += fortran::iw_group(row, 7);
    out += '\n';
  }
  out += fortran::iw(static_cast<std::int64_t>(t.halo.size()), 9);
  out += '\n';
  for (const auto& row : t.halo) {
    out += fortran::iw_group(row, 9);
    out += '\n';
  }
  return out;
}

std::string suffix(int nparts, int part) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%05d-%05d", nparts - 1, part);
  return buf;
}

std::string base_name(const std::string& path) {
  const auto s = path.find_last_of('/');
  return s == std::string::npos ? path : path.substr(s + 1);
}

std::string par_name(const std::string& geo_name) { return base_name(geo_name).substr(0, 3) + "PAR"; }

Layout parse_layout(const std::string& name) {
  if (name == "telemac") return Layout::Telemac;
  if (name == "concat") return Layout::Concat;
  throw UsageError("unknown layout '" + name + "' (telemac or concat)");
}

const char* to_string(Layout l) { return l == Layout::Telemac ? "telemac" : "concat"; }

WriteReport write_parts(const Plan& plan, const serafin::Reader& geo, const std::vector<const serafin::Reader*>& also,
                        const GlobalMesh& mesh, const Names& names, Layout layout, int threads,
                        const std::vector<PartText>& texts, std::int64_t memory_budget) {
  const auto t0 = std::chrono::steady_clock::now();
  const int nparts = plan.nparts;
  const bool concat = layout == Layout::Concat && nparts > 1;
  const bool with_cli = mesh.cli != nullptr;
  // partel v8 writes PAR files for 2D meshes only (TELEMAC-3D partitions its 2D mesh).
  const bool with_par = with_cli && geo.header().nplan() == 1;
  Context c(plan, mesh);
  prepare(c);

  WriteReport report;
  TempOutputs out;
  auto path = [&](const std::string& name, const std::string& tail) { return names.dir + "/" + name + tail; };

  // Every SERAFIN file to split, and where its parts go.
  std::vector<const serafin::Reader*> sources{&geo};
  std::vector<std::string> source_names{names.geo};
  for (std::size_t i = 0; i < also.size(); ++i) {
    sources.push_back(also[i]);
    source_names.push_back(names.also[i]);
  }
  std::vector<SerafinParts> sparts;
  for (std::size_t s = 0; s < sources.size(); ++s) {
    const auto& g = sources[s]->header();
    const int nplan = g.nplan();
    std::vector<serafin::Header> headers(static_cast<std::size_t>(nparts), g);
    for (int p = 0; p < nparts; ++p) {
      headers[static_cast<std::size_t>(p)].nelem = plan.part_nelem(p) * (nplan > 1 ? nplan - 1 : 1);
      headers[static_cast<std::size_t>(p)].npoin = plan.part_npoin(p) * nplan;
    }
    sparts.push_back(place_parts(*sources[s], headers, out, names.dir + "/" + source_names[s], concat));
  }

  // Headers (all SERAFIN files), .cli and PAR text, part after part.
  std::vector<std::string> cli_texts(with_cli ? static_cast<std::size_t>(nparts) : 0), par_texts = cli_texts;
  std::vector<std::size_t> cli_ids, par_ids;
  if (with_cli && !concat)
    for (int p = 0; p < nparts; ++p) {
      cli_ids.push_back(out.add(path(names.cli, suffix(nparts, p))));
      if (with_par) par_ids.push_back(out.add(path(names.par, suffix(nparts, p))));
    }
  std::vector<std::vector<std::size_t>> text_ids(texts.size());
  for (std::size_t i = 0; i < texts.size(); ++i)
    for (int p = 0; p < nparts; ++p) text_ids[i].push_back(out.add(path(texts[i].name, suffix(nparts, p))));
  std::vector<LocalIndex> locs(static_cast<std::size_t>(std::max(1, threads)));
  Progress progress("partition: writing parts", nparts);
  std::atomic<int> done{0};
  for_each_part(nparts, threads, [&](int p, int t) {
    auto& loc = locs[static_cast<std::size_t>(t)];
    loc.build(plan.part_knolg(p), plan.part_npoin(p));
    for (auto& sp : sparts) {
      serafin::Header h;
      Mesh m;
      part_mesh(c, sp.reader->header(), p, loc, h, m);
      MemorySink sink;
      serafin::write_header(sink, h, m);
      out.write_at(sp.file[static_cast<std::size_t>(p)], sink.bytes.data(), sink.bytes.size(), sp.base[static_cast<std::size_t>(p)]);
    }
    if (with_cli) {
      std::string cli = cli_text(c, p, loc), par = with_par ? par_text(c, p, loc) : std::string();
      if (concat) {
        cli_texts[static_cast<std::size_t>(p)] = std::move(cli);
        par_texts[static_cast<std::size_t>(p)] = std::move(par);
      } else {
        out.write_at(cli_ids[static_cast<std::size_t>(p)], cli.data(), cli.size(), 0);
        if (with_par) out.write_at(par_ids[static_cast<std::size_t>(p)], par.data(), par.size(), 0);
      }
    }
    for (std::size_t i = 0; i < texts.size(); ++i) {
      const std::string text = texts[i].text(p);
      out.write_at(text_ids[i][static_cast<std::size_t>(p)], text.data(), text.size(), 0);
    }
    progress.update(++done);
  });
  progress.finish();
  if (with_cli && concat) {
    // CLI-CONCAT + binary index of line ranges; PAR-CONCAT + text index of first lines.
    const std::size_t cli_id = out.add(path(names.cli, "-CONCAT")), par_id = out.add(path(names.par, "-CONCAT"));
    std::vector<unsigned char> cli_index(static_cast<std::size_t>(nparts) * 8);
    std::string par_index;
    std::int64_t cli_at = 0, par_at = 0, cli_line = 1, par_line = 1;
    for (int p = 0; p < nparts; ++p) {
      const auto& ct = cli_texts[static_cast<std::size_t>(p)];
      const auto& pt = par_texts[static_cast<std::size_t>(p)];
      const auto cl = static_cast<std::int64_t>(std::count(ct.begin(), ct.end(), '\n'));
      store<std::int32_t>(cli_index.data() + 8 * p, static_cast<std::int32_t>(cli_line), ByteOrder::Big);
      store<std::int32_t>(cli_index.data() + 8 * p + 4, static_cast<std::int32_t>(cli_line + cl), ByteOrder::Big);
      if (with_par) par_index += fortran::ListRecord().integer(par_line).line();
      out.write_at(cli_id, ct.data(), ct.size(), cli_at);
      out.write_at(par_id, pt.data(), pt.size(), par_at);
      cli_at += static_cast<std::int64_t>(ct.size());
      par_at += static_cast<std::int64_t>(pt.size());
      cli_line += cl;
      par_line += static_cast<std::int64_t>(std::count(pt.begin(), pt.end(), '\n'));
    }
    out.write_at(out.add(path(names.cli, "-INDEX")), cli_index.data(), cli_index.size(), 0);
    out.write_at(out.add(path(names.par, "-INDEX")), par_index.data(), par_index.size(), 0);
  }
  report.seconds_parts = since(t0);

  // The frames need only the plan: free the mesh arrays first.
  std::vector<std::int32_t>().swap(*mesh.ikle2);
  mesh.x->clear();
  mesh.y->clear();
  c.edges = {};
  const auto t1 = std::chrono::steady_clock::now();
  for (auto& sp : sparts) scatter_all(plan, sp, out, c.npoin2, threads, memory_budget);
  report.seconds_frames = since(t1);
  finish(out, report);
  return report;
}

PartSet::PartSet(const std::string& base, int nparts) : base_(base), nparts_(nparts) {
  if (file_exists(base + "-CONCAT") && file_exists(base + "-INDEX")) {
    ranges_ = read_geo_index(base + "-INDEX");
    if (nparts_ == 0) nparts_ = static_cast<int>(ranges_.size());
    if (static_cast<int>(ranges_.size()) != nparts_)
      throw UsageError(base + "-INDEX lists " + std::to_string(ranges_.size()) + " parts, not " + std::to_string(nparts_));
    const std::int64_t size = file_size(base + "-CONCAT");
    for (std::size_t p = 0; p < ranges_.size(); ++p)
      if (ranges_[p].second > size)
        throw FormatError(base + "-INDEX", "entry " + std::to_string(p + 1), static_cast<std::int64_t>(p) * 16,
                          "part ends at byte " + std::to_string(ranges_[p].second) + ", past the end of " + base + "-CONCAT (" +
                              std::to_string(size) + " bytes)");
    return;
  }
  if (nparts_ == 0) {
    // The first part's suffix gives the count: <base>NNNNN-00000 with NNNNN = parts - 1.
    for (int last = 0; last < kMaxParts; ++last)
      if (file_exists(base + suffix(last + 1, 0))) {
        nparts_ = last + 1;
        break;
      }
    if (nparts_ == 0) throw IoError("no parts found for " + base + " (neither " + base + "NNNNN-00000 nor " + base + "-CONCAT)");
  }
  if (nparts_ < 1 || nparts_ > kMaxParts) throw UsageError("the number of parts must be in 1.." + std::to_string(kMaxParts));
}

std::string PartSet::name(int p) const { return concatenated() ? base_ + "-CONCAT part " + std::to_string(p) : base_ + suffix(nparts_, p); }

std::unique_ptr<serafin::Reader> PartSet::open(int p) const {
  if (concatenated()) {
    const auto [b, e] = ranges_[static_cast<std::size_t>(p)];
    return std::make_unique<serafin::Reader>(std::make_shared<FileSource>(base_ + "-CONCAT", b, e - b));
  }
  const std::string path = base_ + suffix(nparts_, p);
  if (!file_exists(path)) throw IoError("part " + std::to_string(p) + " of " + std::to_string(nparts_) + " is missing: " + path);
  return std::make_unique<serafin::Reader>(path);
}

WriteReport split_on_parts(const serafin::Reader& source, const PartSet& geometry, const std::string& dir,
                           const std::string& name, Layout layout, int threads, std::int64_t memory_budget, bool frames) {
  const auto t0 = std::chrono::steady_clock::now();
  const int nparts = geometry.size();
  const bool concat = layout == Layout::Concat && nparts > 1;
  const auto& g = source.header();
  const int nplan = g.nplan();
  const std::int64_t npoin2 = g.npoin / nplan;
  // KNOLG of every part (2D), as a plan the frame scatter understands.
  Plan plan;
  plan.nparts = nparts;
  plan.npoin = npoin2;
  plan.node_offset.assign(static_cast<std::size_t>(nparts) + 1, 0);
  std::vector<serafin::Header> headers(static_cast<std::size_t>(nparts));
  // A 3D source on the parts of its 2D geometry (TELEMAC-3D's previous computation on
  // T3DGEO's parts): each part is its 2D part extruded to the source's planes.
  bool extrude_parts = false;
  for (int p = 0; p < nparts; ++p) {
    auto r = geometry.open(p);
    const auto& h = r->header();
    extrude_parts = h.nplan() == 1 && nplan > 1 && h.ndp == 3 && g.ndp == 6;
    if (h.nplan() != nplan && !extrude_parts)
      throw UsageError(geometry.name(p) + " has " + std::to_string(h.nplan()) + " planes, " + source.name() + " " + std::to_string(nplan));
    const auto knolg = r->read_ipobo();
    const std::int64_t np2 = h.npoin / h.nplan();
    for (std::int64_t i = 0; i < np2; ++i) {
      const std::int32_t k = knolg[static_cast<std::size_t>(i)];
      if (k < 1 || k > npoin2)
        throw FormatError(geometry.name(p), "record IPOBO/KNOLG", r->layout().header_bytes,
                          "global node " + std::to_string(k) + " is outside 1.." + std::to_string(npoin2) + " of " + source.name());
      plan.knolg.push_back(k - 1);
    }
    plan.node_offset[static_cast<std::size_t>(p) + 1] = static_cast<std::int64_t>(plan.knolg.size());
    serafin::Header ph = g;
    ph.nelem = extrude_parts ? h.nelem * (nplan - 1) : h.nelem;
    ph.npoin = extrude_parts ? h.npoin * nplan : h.npoin;
    ph.ndp = extrude_parts ? 6 : h.ndp;
    ph.sizes4 = h.sizes4;
    ph.iparam = h.iparam;
    if (extrude_parts) ph.iparam[6] = nplan, ph.iparam[7] = 0;  // as the partition of a 3D file: no NPTFR
    ph.iparam[9] = g.date ? 1 : 0;
    headers[static_cast<std::size_t>(p)] = ph;
  }

  TempOutputs out;
  const SerafinParts sp = place_parts(source, headers, out, dir + "/" + name, concat, frames);
  // Headers: the geometry part's mesh arrays under the source's header.
  for_each_part(nparts, threads, [&](int p, int) {
    auto r = geometry.open(p);
    Mesh m = r->read_mesh();
    if (extrude_parts) {  // KNOLG on every plane: the 2D part's nodes, plane after plane
      const std::vector<std::int32_t> knolg2 = m.ipobo;
      m = extrude(m, nplan);
      for (int l = 0; l < nplan; ++l)
        for (std::size_t i = 0; i < knolg2.size(); ++i)
          m.ipobo[static_cast<std::size_t>(l) * knolg2.size() + i] = knolg2[i] + static_cast<std::int32_t>(l * npoin2);
    }
    MemorySink sink;
    serafin::write_header(sink, headers[static_cast<std::size_t>(p)], m);
    out.write_at(sp.file[static_cast<std::size_t>(p)], sink.bytes.data(), sink.bytes.size(), sp.base[static_cast<std::size_t>(p)]);
  });
  WriteReport report;
  report.seconds_parts = since(t0);
  const auto t1 = std::chrono::steady_clock::now();
  if (frames) scatter_all(plan, sp, out, npoin2, threads, memory_budget);
  report.seconds_frames = since(t1);
  finish(out, report);
  return report;
}

std::vector<std::pair<std::int64_t, std::int64_t>> read_geo_index(const std::string& path) {
  FileSource src(path);
  if (src.size() % 16 != 0)
    throw FormatError(path, "index", src.size(), "size is not a multiple of 16 bytes (pairs of big-endian int64)");
  std::vector<unsigned char> b(static_cast<std::size_t>(src.size()));
  src.read_at(0, b.data(), b.size());
  std::vector<std::pair<std::int64_t, std::int64_t>> r;
  for (std::size_t i = 0; i < b.size(); i += 16) {
    const std::int64_t begin = load<std::int64_t>(b.data() + i, ByteOrder::Big);
    const std::int64_t end = load<std::int64_t>(b.data() + i + 8, ByteOrder::Big);
    if (begin < 1 || end < begin)
      throw FormatError(path, "entry " + std::to_string(i / 16 + 1), static_cast<std::int64_t>(i),
                        "impossible range (" + std::to_string(begin) + ", " + std::to_string(end) + ")");
    r.emplace_back(begin - 1, end - 1);
  }
  return r;
}

std::vector<std::pair<std::int32_t, std::int32_t>> read_cli_index(const std::string& path) {
  FileSource src(path);
  if (src.size() % 8 != 0) throw FormatError(path, "index", src.size(), "size is not a multiple of 8 bytes");
  std::vector<unsigned char> b(static_cast<std::size_t>(src.size()));
  src.read_at(0, b.data(), b.size());
  std::vector<std::pair<std::int32_t, std::int32_t>> r;
  for (std::size_t i = 0; i < b.size(); i += 8)
    r.emplace_back(load<std::int32_t>(b.data() + i, ByteOrder::Big), load<std::int32_t>(b.data() + i + 4, ByteOrder::Big));
  return r;
}

}  // namespace anabranch::partel
