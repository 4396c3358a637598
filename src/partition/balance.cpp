#include "partition/balance.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <queue>

#include "core/error.hpp"

#ifdef ANABRANCH_HAVE_METIS
#include <metis.h>
#endif

namespace anabranch {
namespace {

// Faces between pieces (indices into the piece list).
struct PieceFace {
  std::size_t a, b;
  double cells;
};

struct Evaluation {
  std::vector<double> load;
  double imbalance = 0, cut = 0;
};

Evaluation evaluate(const std::vector<Piece>& pieces, const std::vector<PieceFace>& faces, const std::vector<int>& proc,
                    int nprocs) {
  Evaluation ev;
  ev.load.assign(static_cast<std::size_t>(nprocs), 0.0);
  double total = 0;
  for (std::size_t i = 0; i < pieces.size(); ++i) {
    ev.load[static_cast<std::size_t>(proc[i])] += pieces[i].weight;
    total += pieces[i].weight;
  }
  const double mean = total / nprocs;
  ev.imbalance = mean > 0 ? *std::max_element(ev.load.begin(), ev.load.end()) / mean : 1.0;
  for (const auto& f : faces)
    if (proc[f.a] != proc[f.b]) ev.cut += f.cells;
  return ev;
}

// Longest processing time first: heaviest piece to the least loaded process.
std::vector<int> greedy(const std::vector<Piece>& pieces, int nprocs) {
  std::vector<std::size_t> order(pieces.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return pieces[a].weight > pieces[b].weight; });
  using Slot = std::pair<double, int>;  // (load, process)
  std::priority_queue<Slot, std::vector<Slot>, std::greater<Slot>> heap;
  for (int p = 0; p < nprocs; ++p) heap.push({0.0, p});
  std::vector<int> proc(pieces.size(), 0);
  for (std::size_t i : order) {
    auto [load, p] = heap.top();
    heap.pop();
    proc[i] = p;
    heap.push({load + pieces[i].weight, p});
  }
  return proc;
}

std::vector<int> metis(const std::vector<Piece>& pieces, const std::vector<PieceFace>& faces, int nprocs, double comm_weight,
                       double tolerance) {
#ifndef ANABRANCH_HAVE_METIS
  (void)pieces, (void)faces, (void)nprocs, (void)comm_weight, (void)tolerance;
  throw UsageError("built without METIS: use --method greedy");
#else
  const auto n = static_cast<idx_t>(pieces.size());
  if (nprocs == 1 || n <= nprocs) return greedy(pieces, nprocs);
  // Weights as integers: scale so the largest piece is about 1e6.
  double wmax = 0, fmax = 0;
  for (const auto& p : pieces) wmax = std::max(wmax, p.weight);
  for (const auto& f : faces) fmax = std::max(fmax, f.cells);
  const double ws = wmax > 0 ? 1e6 / wmax : 1.0, fs = fmax > 0 ? 1e4 / fmax : 1.0;
  std::vector<std::vector<std::pair<idx_t, idx_t>>> adj(pieces.size());
  for (const auto& f : faces) {
    const auto w = static_cast<idx_t>(std::max(1.0, std::round(f.cells * fs * comm_weight)));
    if (comm_weight <= 0 || f.a == f.b) continue;
    adj[f.a].push_back({static_cast<idx_t>(f.b), w});
    adj[f.b].push_back({static_cast<idx_t>(f.a), w});
  }
  std::vector<idx_t> xadj(1, 0), adjncy, adjwgt, vwgt;
  for (std::size_t i = 0; i < pieces.size(); ++i) {
    // Merge parallel edges.
    std::sort(adj[i].begin(), adj[i].end());
    for (std::size_t k = 0; k < adj[i].size(); ++k) {
      if (!adjncy.empty() && static_cast<std::size_t>(xadj.back()) < adjncy.size() && adjncy.back() == adj[i][k].first)
        adjwgt.back() += adj[i][k].second;
      else {
        adjncy.push_back(adj[i][k].first);
        adjwgt.push_back(adj[i][k].second);
      }
    }
    xadj.push_back(static_cast<idx_t>(adjncy.size()));
    vwgt.push_back(static_cast<idx_t>(std::round(pieces[i].weight * ws)));
  }
  idx_t nv = n, ncon = 1, np = nprocs, objval = 0;
  idx_t options[METIS_NOPTIONS];
  METIS_SetDefaultOptions(options);
  options[METIS_OPTION_UFACTOR] = static_cast<idx_t>(std::max(1.0, (tolerance - 1.0) * 1000.0));
  options[METIS_OPTION_CONTIG] = 0;
  std::vector<idx_t> part(pieces.size(), 0);
  const int rc = METIS_PartGraphKway(&nv, &ncon, xadj.data(), adjncy.empty() ? nullptr : adjncy.data(), vwgt.data(), nullptr,
                                     adjwgt.empty() ? nullptr : adjwgt.data(), &np, nullptr, nullptr, options, &objval,
                                     part.data());
  if (rc != METIS_OK) throw Error("METIS_PartGraphKway failed (code " + std::to_string(rc) + ")");
  return std::vector<int>(part.begin(), part.end());
#endif
}

// Splits piece i in two along its longest index direction (or by weight for weight-only
// blocks); faces of the piece are shared by the halves in proportion to their weight.
bool split_piece(std::vector<Piece>& pieces, std::vector<PieceFace>& faces, std::size_t i, bool has_cells) {
  Piece& p = pieces[i];
  Piece q = p;
  double share = 0.5, inner = 0;
  if (has_cells) {
    int axis = 0;
    std::int64_t len[3];
    for (int a = 0; a < 3; ++a) len[a] = p.range[static_cast<std::size_t>(a)][1] - p.range[static_cast<std::size_t>(a)][0];
    for (int a = 1; a < 3; ++a)
      if (len[a] > len[axis]) axis = a;
    if (len[axis] < 2) return false;
    const std::int64_t mid = p.range[static_cast<std::size_t>(axis)][0] + len[axis] / 2;
    share = static_cast<double>(len[axis] / 2) / static_cast<double>(len[axis]);
    q.range[static_cast<std::size_t>(axis)][0] = mid;
    p.range[static_cast<std::size_t>(axis)][1] = mid;
    inner = 1;
    for (int a = 0; a < 3; ++a)
      if (a != axis) inner *= static_cast<double>(len[a]);
  } else if (p.weight <= 0) {
    return false;
  }
  const double w = p.weight;
  p.weight = w * share;
  q.weight = w - p.weight;
  pieces.push_back(q);
  const std::size_t j = pieces.size() - 1;
  const std::size_t nf = faces.size();
  for (std::size_t k = 0; k < nf; ++k) {
    auto& f = faces[k];
    if (f.a != i && f.b != i) continue;
    const std::size_t other = f.a == i ? f.b : f.a;
    const double total = f.cells;
    f.cells = total * share;
    faces.push_back({j, other, total - f.cells});
  }
  if (inner > 0) faces.push_back({i, j, inner});
  return true;
}

// Moves pieces off the most loaded process while that lowers the maximum load: each move
// takes the piece (of the most loaded process) that leaves the smallest new maximum when
// given to the least loaded process.
void rebalance(const std::vector<Piece>& pieces, std::vector<int>& proc, int nprocs) {
  std::vector<double> load(static_cast<std::size_t>(nprocs), 0.0);
  for (std::size_t i = 0; i < pieces.size(); ++i) load[static_cast<std::size_t>(proc[i])] += pieces[i].weight;
  for (std::size_t guard = 0; guard < 4 * pieces.size() + 16; ++guard) {
    const int pmax = static_cast<int>(std::max_element(load.begin(), load.end()) - load.begin());
    const int pmin = static_cast<int>(std::min_element(load.begin(), load.end()) - load.begin());
    const double lmax = load[static_cast<std::size_t>(pmax)], lmin = load[static_cast<std::size_t>(pmin)];
    std::size_t best = pieces.size();
    double best_max = lmax;
    for (std::size_t i = 0; i < pieces.size(); ++i) {
      if (proc[i] != pmax || pieces[i].weight <= 0) continue;
      const double m = std::max(lmax - pieces[i].weight, lmin + pieces[i].weight);
      if (m < best_max - 1e-9 * lmax) {
        best_max = m;
        best = i;
      }
    }
    if (best == pieces.size()) return;
    load[static_cast<std::size_t>(pmax)] -= pieces[best].weight;
    load[static_cast<std::size_t>(pmin)] += pieces[best].weight;
    proc[best] = pmin;
  }
}

}  // namespace

BalanceMethod parse_balance_method(const std::string& name) {
  if (name == "metis") return BalanceMethod::Metis;
  if (name == "greedy") return BalanceMethod::Greedy;
  if (name == "roundrobin") return BalanceMethod::RoundRobin;
  throw UsageError("unknown balancing method '" + name + "' (metis, greedy or roundrobin)");
}

const char* to_string(BalanceMethod m) {
  switch (m) {
    case BalanceMethod::Metis: return "metis";
    case BalanceMethod::Greedy: return "greedy";
    case BalanceMethod::RoundRobin: return "roundrobin";
  }
  return "?";
}

BalanceResult balance(const std::vector<Block>& blocks, const std::vector<Face>& faces, int nprocs, const BalanceOptions& o) {
  if (nprocs < 1) throw UsageError("the number of processes must be at least 1");
  if (blocks.empty()) throw UsageError("no blocks to balance");
  std::map<std::int64_t, std::size_t> index;
  std::vector<Piece> pieces;
  std::vector<char> has_cells;
  for (const auto& b : blocks) {
    if (!index.emplace(b.id, pieces.size()).second) throw UsageError("block " + std::to_string(b.id) + " is listed twice");
    if (b.weight < 0 || !std::isfinite(b.weight)) throw UsageError("block " + std::to_string(b.id) + " has a negative or invalid weight");
    Piece p;
    p.block = b.id;
    for (int a = 0; a < 3; ++a) {
      if (b.cells[static_cast<std::size_t>(a)] < 0) throw UsageError("block " + std::to_string(b.id) + " has negative cell counts");
      p.range[static_cast<std::size_t>(a)] = {0, b.cells[static_cast<std::size_t>(a)]};
    }
    p.weight = b.weight;
    pieces.push_back(p);
    has_cells.push_back(b.has_cells());
  }
  std::vector<PieceFace> pf;
  for (const auto& f : faces) {
    auto a = index.find(f.a), b = index.find(f.b);
    if (a == index.end() || b == index.end())
      throw UsageError("face between blocks " + std::to_string(f.a) + " and " + std::to_string(f.b) + " names an unknown block");
    if (f.cells < 0) throw UsageError("face between blocks " + std::to_string(f.a) + " and " + std::to_string(f.b) + " has a negative size");
    if (a->second != b->second) pf.push_back({a->second, b->second, f.cells});
  }

  BalanceResult r;
  {
    std::vector<int> rr(pieces.size());
    for (std::size_t i = 0; i < pieces.size(); ++i) rr[i] = static_cast<int>(i % static_cast<std::size_t>(nprocs));
    const auto ev = evaluate(pieces, pf, rr, nprocs);
    r.roundrobin_imbalance = ev.imbalance;
    r.roundrobin_cut_cells = ev.cut;
  }
  auto assign = [&]() {
    switch (o.method) {
      case BalanceMethod::Greedy: return greedy(pieces, nprocs);
      case BalanceMethod::Metis: return metis(pieces, pf, nprocs, o.comm_weight, o.tolerance);
      case BalanceMethod::RoundRobin: break;
    }
    std::vector<int> rr(pieces.size());
    for (std::size_t i = 0; i < pieces.size(); ++i) rr[i] = static_cast<int>(i % static_cast<std::size_t>(nprocs));
    return rr;
  };
  auto heaviest_splittable = [&](auto&& accept) {
    std::vector<std::size_t> order(pieces.size());
    std::iota(order.begin(), order.end(), 0);
    std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return pieces[a].weight > pieces[b].weight; });
    for (std::size_t i : order)
      if (accept(i) && split_piece(pieces, pf, i, has_cells[index[pieces[i].block]] != 0)) return i;
    return pieces.size();
  };
  const std::size_t cap = static_cast<std::size_t>(std::max(1, o.max_pieces_per_process)) * static_cast<std::size_t>(nprocs) +
                          blocks.size();
  const bool splitting = o.split && o.method != BalanceMethod::RoundRobin;
  // Blocks larger than the mean load cannot be balanced whole: split them first.
  double total = 0;
  for (const auto& p : pieces) total += p.weight;
  const double mean = total / nprocs;
  while (splitting && pieces.size() < cap) {
    const std::size_t i = heaviest_splittable([&](std::size_t k) { return pieces[k].weight > mean; });
    if (i == pieces.size()) break;
    ++r.splits;
  }
  std::vector<int> proc = assign();
  if (o.method != BalanceMethod::RoundRobin) rebalance(pieces, proc, nprocs);
  Evaluation ev = evaluate(pieces, pf, proc, nprocs);
  // Then split the heaviest piece of the most loaded process, and even the loads out,
  // until the balance is within tolerance (or pieces run out).
  while (splitting && ev.imbalance > o.tolerance && pieces.size() < cap) {
    const int pmax = static_cast<int>(std::max_element(ev.load.begin(), ev.load.end()) - ev.load.begin());
    const std::size_t i = heaviest_splittable([&](std::size_t k) { return proc[k] == pmax; });
    if (i == pieces.size()) break;
    proc.push_back(pmax);  // the new half starts where the piece was
    ++r.splits;
    rebalance(pieces, proc, nprocs);
    ev = evaluate(pieces, pf, proc, nprocs);
  }
  // Number the pieces of each block in index order.
  std::vector<std::size_t> order(pieces.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    if (index[pieces[a].block] != index[pieces[b].block]) return index[pieces[a].block] < index[pieces[b].block];
    return pieces[a].range < pieces[b].range;
  });
  std::map<std::int64_t, int> count;
  for (const auto& p : pieces) ++count[p.block];
  std::map<std::int64_t, int> next;
  for (std::size_t i : order) {
    Piece p = pieces[i];
    p.index = next[p.block]++;
    p.count = count[p.block];
    r.pieces.push_back(p);
    r.process.push_back(proc[i]);
  }
  r.load = ev.load;
  r.imbalance = ev.imbalance;
  r.cut_cells = ev.cut;
  return r;
}

}  // namespace anabranch
