#include "grid/contour.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <tuple>

#include "core/error.hpp"

namespace anabranch {

Contour build_contour(const std::vector<std::int32_t>& nodes, const std::int32_t* ikle, std::int64_t nelem, int ndp,
                      int stride, const Coordinates& x, const Coordinates& y) {
  const std::size_t nb = nodes.size();
  Contour c;
  c.next.assign(nb, -1);
  c.prev.assign(nb, -1);
  c.nelbor.assign(nb, -1);
  if (nb == 0) return c;
  // Boundary point index of each node (or -1).
  std::int32_t maxnode = *std::max_element(nodes.begin(), nodes.end());
  std::vector<std::int32_t> point(static_cast<std::size_t>(maxnode) + 1, -1);
  for (std::size_t k = 0; k < nb; ++k) point[static_cast<std::size_t>(nodes[k])] = static_cast<std::int32_t>(k);
  auto pt = [&](std::int32_t n) { return n <= maxnode ? point[static_cast<std::size_t>(n)] : -1; };
  // Directed edges between boundary points, oriented counter-clockwise in their element.
  struct E {
    std::int32_t a, b, elem;
  };
  std::vector<E> edges;
  for (std::int64_t e = 0; e < nelem; ++e) {
    const std::int32_t* v = ikle + e * stride;
    int on_boundary = 0;
    for (int k = 0; k < ndp; ++k) on_boundary += pt(v[k]) >= 0;
    if (on_boundary < 2) continue;
    double area = 0;
    for (int k = 0; k < ndp; ++k) {
      const auto i = static_cast<std::size_t>(v[k] - 1), j = static_cast<std::size_t>(v[(k + 1) % ndp] - 1);
      area += x[i] * y[j] - x[j] * y[i];
    }
    for (int k = 0; k < ndp; ++k) {
      std::int32_t a = v[k], b = v[(k + 1) % ndp];
      if (pt(a) < 0 || pt(b) < 0) continue;
      if (area < 0) std::swap(a, b);
      edges.push_back({a, b, static_cast<std::int32_t>(e)});
    }
  }
  // An edge is on the boundary when no element holds it the other way round.
  std::vector<std::pair<std::int64_t, std::int32_t>> keys;  // (undirected key, index in edges)
  keys.reserve(edges.size());
  for (std::size_t i = 0; i < edges.size(); ++i) {
    const auto lo = std::min(edges[i].a, edges[i].b), hi = std::max(edges[i].a, edges[i].b);
    keys.emplace_back((static_cast<std::int64_t>(lo) << 32) | hi, static_cast<std::int32_t>(i));
  }
  std::sort(keys.begin(), keys.end());
  for (std::size_t i = 0; i < keys.size();) {
    std::size_t j = i;
    while (j < keys.size() && keys[j].first == keys[i].first) ++j;
    if (j - i == 1) {
      const E& e = edges[static_cast<std::size_t>(keys[i].second)];
      const std::int32_t ka = pt(e.a), kb = pt(e.b);
      if (c.next[static_cast<std::size_t>(ka)] >= 0)
        throw UsageError("boundary node " + std::to_string(e.a) + " starts two boundary segments: the mesh is not manifold there");
      c.next[static_cast<std::size_t>(ka)] = kb;
      c.prev[static_cast<std::size_t>(kb)] = ka;
      c.nelbor[static_cast<std::size_t>(ka)] = e.elem;
    }
    i = j;
  }
  for (std::size_t k = 0; k < nb; ++k)
    if (c.next[k] < 0 || c.prev[k] < 0)
      throw UsageError("boundary point " + std::to_string(k + 1) + " (node " + std::to_string(nodes[k]) +
                       ") is not on a boundary segment of the mesh: the boundary file does not match the mesh");
  return c;
}

std::vector<std::int32_t> number_liquid_boundaries(const Contour& c, const std::vector<std::int32_t>& nodes,
                                                   const std::vector<int>& lihbor, const std::vector<int>& liubor,
                                                   const Coordinates& x, const Coordinates& y) {
  constexpr int kSolid = 2;
  const std::size_t nb = nodes.size();
  std::vector<std::int32_t> numliq(nb, 0);
  if (nb == 0) return numliq;
  std::vector<char> seen(nb, 0);
  auto X = [&](std::size_t k) { return x[static_cast<std::size_t>(nodes[k] - 1)]; };
  auto Y = [&](std::size_t k) { return y[static_cast<std::size_t>(nodes[k] - 1)]; };
  auto solid = [&](std::int32_t k) { return lihbor[static_cast<std::size_t>(k)] == kSolid; };
  // Liquid boundaries as (first point, last point), in the order they are found.
  std::vector<std::pair<std::int32_t, std::int32_t>> liquid;
  std::size_t start = 0;
  while (true) {
    // South-westernmost unseen point (smallest x + y), then the southernmost of the ties.
    double minns = X(start) + Y(start), maxns = minns, ymin = Y(start);
    std::size_t idep = start;
    for (std::size_t k = 0; k < nb; ++k) {
      if (seen[k]) continue;
      const double ns = X(k) + Y(k);
      if (ns < minns) {
        idep = k;
        minns = ns;
        ymin = Y(k);
      }
      maxns = std::max(maxns, ns);
    }
    const double eps = (maxns - minns) * 1e-4;
    for (std::size_t k = 0; k < nb; ++k)
      if (!seen[k] && std::abs(minns - (X(k) + Y(k))) < eps && Y(k) < ymin) {
        idep = k;
        ymin = Y(k);
      }
    // Walk the contour from idep, recording liquid stretches.
    const auto dep = static_cast<std::int32_t>(idep);
    std::int32_t k = dep;
    const bool first_solid = solid(k) || solid(c.next[static_cast<std::size_t>(k)]);
    const std::size_t first_liquid = liquid.size();
    if (!first_solid) liquid.push_back({dep, -1});
    bool ends_solid = false, ends_liquid = false;
    seen[static_cast<std::size_t>(k)] = 1;
    std::int32_t kprev = k;
    k = c.next[static_cast<std::size_t>(k)];
    while (true) {
      const bool l1 = solid(kprev), l2 = solid(k), l3 = solid(c.next[static_cast<std::size_t>(k)]);
      const std::int32_t kn = c.next[static_cast<std::size_t>(k)];
      if (l1 && !l2 && !l3) {  // solid -> liquid at k
        liquid.push_back({k, -1});
        ends_liquid = true;
        ends_solid = false;
      } else if (!l1 && !l2 && l3) {  // liquid -> solid at k
        liquid.back().second = k;
        ends_liquid = false;
        ends_solid = true;
      } else if (!l1 && !l2 && !l3) {  // liquid -> liquid: a new boundary where the codes change
        if (lihbor[static_cast<std::size_t>(k)] != lihbor[static_cast<std::size_t>(kn)] ||
            liubor[static_cast<std::size_t>(k)] != liubor[static_cast<std::size_t>(kn)]) {
          liquid.back().second = k;
          liquid.push_back({kn, -1});
        }
      } else if ((l1 && !l2 && l3) || (!l1 && l2 && !l3)) {
        throw UsageError("boundary point " + std::to_string(k + 1) + " (node " + std::to_string(nodes[static_cast<std::size_t>(k)]) +
                         "): a " + (l2 ? "solid point between two liquid points" : "liquid point between two solid points"));
      }
      seen[static_cast<std::size_t>(k)] = 1;
      kprev = k;
      k = kn;
      if (k == dep) break;
    }
    // Close the stretches that run through the starting point.
    if (ends_liquid) {
      if (!first_solid) {
        liquid[first_liquid].first = liquid.back().first;  // the last stretch continues into the first
        liquid.pop_back();
      } else {
        liquid.back().second = dep;
      }
    } else if (!ends_solid && !first_solid) {
      // No solid point on this contour: it is one liquid boundary, or several split where
      // the codes change, the last one ending just before the start.
      if (liquid.size() == first_liquid + 1)
        liquid[first_liquid] = {dep, dep};
      else
        liquid.back().second = c.prev[static_cast<std::size_t>(dep)];
    }
    // Next contour.
    auto it = std::find(seen.begin(), seen.end(), 0);
    if (it == seen.end()) break;
    start = static_cast<std::size_t>(it - seen.begin());
  }
  for (std::size_t l = 0; l < liquid.size(); ++l) {
    std::int32_t k = liquid[l].first;
    const std::int32_t end = liquid[l].second;
    numliq[static_cast<std::size_t>(k)] = static_cast<std::int32_t>(l + 1);
    do {
      k = c.next[static_cast<std::size_t>(k)];
      numliq[static_cast<std::size_t>(k)] = static_cast<std::int32_t>(l + 1);
    } while (k != end);
  }
  return numliq;
}

}  // namespace anabranch
