#include "partition/partitioner.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <thread>

#include "core/error.hpp"
#include "core/progress.hpp"
#include "core/radix_sort.hpp"

#ifdef ANABRANCH_HAVE_METIS
#include <metis.h>
#endif
#ifdef ANABRANCH_HAVE_SCOTCH
#include <cstdio>  // scotch.h needs FILE
#include <scotch.h>
#endif

namespace anabranch {
namespace {

double since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Index of (x, y) on a Hilbert curve filling a 2^order x 2^order grid: one table step per
// level. The state is the orientation of the current sub-square.
}  // namespace

SfcCurve::SfcCurve(double x0_, double x1, double y0_, double y1, std::int64_t nelem) : x0(x0_), y0(y0_) {
  while ((std::int64_t{1} << idx_bits) < nelem) ++idx_bits;
  order = std::min(16, (64 - idx_bits) / 2);
  const double span = std::max(x1 - x0, y1 - y0);
  scale = span > 0 ? (std::ldexp(1.0, order) - 1) / span : 0;
}

std::uint64_t SfcCurve::key(double cx, double cy, std::int64_t element) const {
  const auto hx = static_cast<std::uint32_t>((cx - x0) * scale);
  const auto hy = static_cast<std::uint32_t>((cy - y0) * scale);
  return (hilbert_index(hx, hy, order) << idx_bits) | static_cast<std::uint64_t>(element);
}

std::int32_t sfc_weighted_part(double before, std::int32_t weight, double total, int nparts) {
  const double mid = before + 0.5 * weight;
  return std::min(nparts - 1, static_cast<std::int32_t>(mid * nparts / total));
}

std::uint64_t hilbert_index(std::uint32_t x, std::uint32_t y, int order) {
  // For state s and quadrant q = 2*xbit + ybit: the curve position of q, and the next state.
  static const std::uint8_t position[4][4] = {{0, 1, 3, 2}, {0, 3, 1, 2}, {2, 3, 1, 0}, {2, 1, 3, 0}};
  static const std::uint8_t next_state[4][4] = {{1, 0, 3, 0}, {0, 2, 1, 1}, {2, 1, 2, 3}, {3, 3, 0, 2}};
  std::uint64_t d = 0;
  unsigned s = 0;
  for (int level = order - 1; level >= 0; --level) {
    const unsigned q = (((x >> level) & 1u) << 1) | ((y >> level) & 1u);
    d = (d << 2) | position[s][q];
    s = next_state[s][q];
  }
  return d;
}

PartitionMethod parse_partition_method(const std::string& name) {
  if (name == "metis") return PartitionMethod::Metis;
  if (name == "scotch") return PartitionMethod::Scotch;
  if (name == "sfc") return PartitionMethod::Sfc;
  throw UsageError("unknown partitioning method '" + name + "' (metis, scotch or sfc)");
}

const char* to_string(PartitionMethod m) {
  return m == PartitionMethod::Metis ? "metis" : m == PartitionMethod::Scotch ? "scotch" : "sfc";
}

bool scotch_available() {
#if defined(ANABRANCH_HAVE_SCOTCH) && defined(ANABRANCH_HAVE_METIS)
  return true;
#else
  return false;
#endif
}

void dual_graph(const std::int32_t* eind, std::int64_t nelem, int ndp, std::int64_t npoin, int base, std::vector<std::int32_t>& xadj,
                std::vector<std::int32_t>& adjncy) {
  if (ndp != 3 && ndp != 4) throw UsageError("the dual graph needs triangles or quadrilaterals (" + std::to_string(ndp) + " nodes per element)");
  if (nelem * ndp > std::numeric_limits<std::int32_t>::max()) throw UsageError("too many elements for 32-bit graph indices");
  // The elements around each node, increasing (a counting sort).
  std::vector<std::int32_t> nptr(static_cast<std::size_t>(npoin) + 1, 0), nind(static_cast<std::size_t>(nelem * ndp));
  for (std::int64_t j = 0; j < nelem * ndp; ++j) {
    const std::int32_t v = eind[j];
    if (v < 0 || v >= npoin) throw UsageError("element " + std::to_string(j / ndp + 1) + " names node " + std::to_string(v + 1) + " outside the mesh");
    ++nptr[static_cast<std::size_t>(v) + 1];
  }
  for (std::int64_t n = 0; n < npoin; ++n) nptr[static_cast<std::size_t>(n) + 1] += nptr[static_cast<std::size_t>(n)];
  {
    std::vector<std::int32_t> at(nptr.begin(), nptr.end() - 1);
    for (std::int64_t e = 0; e < nelem; ++e)
      for (int k = 0; k < ndp; ++k) nind[static_cast<std::size_t>(at[static_cast<std::size_t>(eind[e * ndp + k])]++)] = static_cast<std::int32_t>(e);
  }
  // Whether a list of elements (increasing) holds x: most lists are a handful long.
  auto holds = [](const std::int32_t* lo, const std::int32_t* hi, std::int32_t x) {
    if (hi - lo > 16) return std::binary_search(lo, hi, x);
    for (; lo != hi && *lo <= x; ++lo)
      if (*lo == x) return true;
    return false;
  };
  // Element e's neighbours to out: an element of the k-th node's list, not e and in no
  // earlier list, is a neighbour when a later list holds it too (two shared nodes:
  // METIS's overlap >= ncommon).
  auto neighbours = [&](std::int64_t e, std::vector<std::int32_t>& out) {
    const std::int32_t* lo[4];
    const std::int32_t* hi[4];
    for (int k = 0; k < ndp; ++k) {
      const auto v = static_cast<std::size_t>(eind[e * ndp + k]);
      lo[k] = nind.data() + nptr[v];
      hi[k] = nind.data() + nptr[v + 1];
    }
    const std::size_t before = out.size();
    for (int k = 0; k + 1 < ndp; ++k)
      for (const std::int32_t* x = lo[k]; x != hi[k]; ++x) {
        if (*x == e) continue;
        bool seen = false, again = false;
        for (int j = 0; j < k && !seen; ++j) seen = holds(lo[j], hi[j], *x);
        for (int j = k + 1; j < ndp && !seen && !again; ++j) again = holds(lo[j], hi[j], *x);
        if (!seen && again) out.push_back(*x + base);
      }
    return static_cast<std::int32_t>(out.size() - before);
  };
  // Each thread a range of elements into its own list, then the lists one after another.
  const int threads = static_cast<int>(std::max(1u, std::min(8u, std::thread::hardware_concurrency())));
  xadj.assign(static_cast<std::size_t>(nelem) + 1, 0);
  std::vector<std::vector<std::int32_t>> lists(static_cast<std::size_t>(threads));
  {
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t)
      pool.emplace_back([&, t] {
        auto& list = lists[static_cast<std::size_t>(t)];
        const std::int64_t first = nelem * t / threads, end = nelem * (t + 1) / threads;
        list.reserve(static_cast<std::size_t>((end - first) * ndp));
        for (std::int64_t e = first; e < end; ++e) xadj[static_cast<std::size_t>(e) + 1] = neighbours(e, list);
      });
    for (auto& th : pool) th.join();
  }
  for (std::int64_t e = 0; e < nelem; ++e) xadj[static_cast<std::size_t>(e) + 1] += xadj[static_cast<std::size_t>(e)];
  adjncy.resize(static_cast<std::size_t>(xadj.back()));
  for (int t = 0; t < threads; ++t) {
    auto& list = lists[static_cast<std::size_t>(t)];
    std::copy(list.begin(), list.end(), adjncy.begin() + xadj[static_cast<std::size_t>(nelem * t / threads)]);
    std::vector<std::int32_t>().swap(list);
  }
  if (base != 0)
    for (auto& x : xadj) x += base;
}

bool metis_available() {
#ifdef ANABRANCH_HAVE_METIS
  return true;
#else
  return false;
#endif
}

std::vector<std::int32_t> partition_metis(std::vector<std::int32_t>&& eind, std::int64_t nelem, int ndp,
                                          std::int64_t npoin, int nparts, const std::vector<std::int32_t>& weights,
                                          PartitionStats* stats) {
#ifndef ANABRANCH_HAVE_METIS
  (void)eind, (void)nelem, (void)ndp, (void)npoin, (void)nparts, (void)weights, (void)stats;
  throw UsageError("built without METIS: use --method sfc, or rebuild with METIS (libmetis-dev)");
#else
  static_assert(sizeof(idx_t) == sizeof(std::int32_t), "METIS must be built with 32-bit indices");
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<std::int32_t> epart(static_cast<std::size_t>(nelem), 0);
  if (nparts > 1) {
    const Busy busy("partition: METIS, " + std::to_string(nelem) + " elements into " + std::to_string(nparts) + " parts");
    idx_t ne = static_cast<idx_t>(nelem);
    std::vector<idx_t> xadj, adjncy;
    dual_graph(eind.data(), nelem, ndp, npoin, 0, xadj, adjncy);
    std::vector<std::int32_t>().swap(eind);
    idx_t ncon = 1, np = nparts, objval = 0;
    std::vector<idx_t> vwgt(weights.begin(), weights.end());
    const int rc = METIS_PartGraphKway(&ne, &ncon, xadj.data(), adjncy.data(), vwgt.empty() ? nullptr : vwgt.data(), nullptr, nullptr,
                                       &np, nullptr, nullptr, nullptr, &objval, epart.data());
    if (rc != METIS_OK) throw Error("METIS_PartGraphKway failed (code " + std::to_string(rc) + ")");
    if (stats) stats->objective = objval;
  }
  if (stats) {
    stats->seconds = since(t0);
    stats->peak_rss = peak_rss_bytes();
  }
  return epart;
#endif
}

std::vector<std::int32_t> partition_scotch(std::vector<std::int32_t>&& eind, std::int64_t nelem, int ndp,
                                           std::int64_t npoin, int nparts, PartitionStats* stats) {
#if !defined(ANABRANCH_HAVE_SCOTCH) || !defined(ANABRANCH_HAVE_METIS)
  (void)eind, (void)nelem, (void)ndp, (void)npoin, (void)nparts, (void)stats;
  throw UsageError("built without SCOTCH (and METIS): use --method metis or sfc, or rebuild with libscotch-dev and libmetis-dev");
#else
  static_assert(sizeof(SCOTCH_Num) == sizeof(idx_t), "SCOTCH and METIS must use the same integer size");
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<std::int32_t> epart(static_cast<std::size_t>(nelem), 0);
  if (nparts > 1) {
    const Busy busy("partition: SCOTCH, " + std::to_string(nelem) + " elements into " + std::to_string(nparts) + " parts");
    // As partel does: the dual graph (ncommon 2) 1-based as METIS_MeshToDual builds it,
    // built into a SCOTCH graph with base 1, no weights, partitioned with the default strategy.
    const auto ne = static_cast<SCOTCH_Num>(nelem);
    std::vector<std::int32_t> xadj, adjncy;
    dual_graph(eind.data(), nelem, ndp, npoin, 1, xadj, adjncy);
    std::vector<std::int32_t>().swap(eind);
    int rc = 0;
    // One difference: Debian's SCOTCH seeds its random generator from the clock, so the
    // same call gives another partition on every run; a context with a fixed seed and
    // deterministic threads makes the partition repeat.
    SCOTCH_Graph graph, bound;
    SCOTCH_Strat strat;
    SCOTCH_Context context;
    SCOTCH_stratInit(&strat);
    SCOTCH_graphInit(&graph);
    SCOTCH_contextInit(&context);
    SCOTCH_contextOptionSetNum(&context, SCOTCH_OPTIONNUMDETERMINISTIC, 1);
    SCOTCH_contextOptionSetNum(&context, SCOTCH_OPTIONNUMRANDOMFIXEDSEED, 1);
    SCOTCH_contextRandomClone(&context);
    SCOTCH_contextRandomSeed(&context, 1);
    const SCOTCH_Num edges = xadj[ne] - 1;
    rc = SCOTCH_graphBuild(&graph, 1, ne, xadj.data(), xadj.data() + 1, nullptr, nullptr, edges, adjncy.data(), nullptr);
    if (rc == 0) rc = SCOTCH_graphCheck(&graph);
    bool bound_ok = false;
    if (rc == 0) bound_ok = (rc = SCOTCH_contextBindGraph(&context, &graph, &bound)) == 0;
    if (rc == 0) rc = SCOTCH_graphPart(&bound, nparts, &strat, epart.data());
    if (bound_ok) SCOTCH_graphExit(&bound);
    SCOTCH_graphExit(&graph);
    SCOTCH_contextExit(&context);
    SCOTCH_stratExit(&strat);
    if (rc != 0) throw Error("SCOTCH could not partition the dual graph (code " + std::to_string(rc) + ")");
  }
  if (stats) {
    stats->seconds = since(t0);
    stats->peak_rss = peak_rss_bytes();
  }
  return epart;
#endif
}

std::vector<std::int32_t> partition_sfc(const std::int32_t* ikle, std::int64_t nelem, int ndp, int stride,
                                        const Coordinates& x, const Coordinates& y, int nparts,
                                        const std::vector<std::int32_t>& weights, PartitionStats* stats) {
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<std::int32_t> epart(static_cast<std::size_t>(nelem), 0);
  if (nparts > 1 && nelem > 0) {
    double x0 = x[0], x1 = x[0], y0 = y[0], y1 = y[0];  // bounding box
    for (std::size_t i = 0; i < x.size(); ++i) {
      x0 = std::min(x0, x[i]), x1 = std::max(x1, x[i]);
      y0 = std::min(y0, y[i]), y1 = std::max(y1, y[i]);
    }
    const SfcCurve curve(x0, x1, y0, y1, nelem);
    std::vector<std::uint64_t> keys(static_cast<std::size_t>(nelem));
    for (std::int64_t e = 0; e < nelem; ++e) {
      const std::int32_t* v = ikle + e * stride;
      double cx = 0, cy = 0;
      for (int k = 0; k < ndp; ++k) {
        cx += x[static_cast<std::size_t>(v[k] - 1)];
        cy += y[static_cast<std::size_t>(v[k] - 1)];
      }
      keys[static_cast<std::size_t>(e)] = curve.key(cx / ndp, cy / ndp, e);
    }
    radix_sort(keys);
    const std::uint64_t mask = curve.element_mask();
    if (weights.empty()) {
      for (std::int64_t i = 0; i < nelem; ++i)
        epart[static_cast<std::size_t>(keys[static_cast<std::size_t>(i)] & mask)] = sfc_part(i, nelem, nparts);
    } else {
      double total = 0;
      for (auto w : weights) total += w;
      double before = 0;
      for (std::int64_t i = 0; i < nelem; ++i) {
        const auto e = static_cast<std::size_t>(keys[static_cast<std::size_t>(i)] & mask);
        epart[e] = sfc_weighted_part(before, weights[e], total, nparts);
        before += weights[e];
      }
    }
  }
  if (stats) {
    stats->seconds = since(t0);
    stats->peak_rss = peak_rss_bytes();
  }
  return epart;
}

}  // namespace anabranch
