#include "grid/refine.hpp"

#include <algorithm>
#include <numeric>

#include "core/error.hpp"

namespace anabranch {

std::int64_t EdgeTable::find(std::int32_t a, std::int32_t b) const {
  if (a > b) std::swap(a, b);
  const auto* begin = other.data() + offset[static_cast<std::size_t>(a)];
  const auto* end = other.data() + offset[static_cast<std::size_t>(a) + 1];
  const auto* it = std::lower_bound(begin, end, b);
  return (it != end && *it == b) ? (it - other.data()) : -1;
}

EdgeTable build_edges(const std::int32_t* ikle, std::int64_t nelem, int stride, std::int64_t npoin) {
  EdgeTable t;
  t.offset.assign(static_cast<std::size_t>(npoin) + 1, 0);
  auto each_edge = [&](auto&& fn) {
    for (std::int64_t e = 0; e < nelem; ++e) {
      const std::int32_t* v = ikle + e * stride;
      for (int k = 0; k < 3; ++k) {
        std::int32_t a = v[k] - 1, b = v[(k + 1) % 3] - 1;
        if (a > b) std::swap(a, b);
        fn(a, b);
      }
    }
  };
  each_edge([&](std::int32_t a, std::int32_t) { ++t.offset[static_cast<std::size_t>(a) + 1]; });
  std::partial_sum(t.offset.begin(), t.offset.end(), t.offset.begin());
  std::vector<std::int32_t> slots(static_cast<std::size_t>(t.offset.back()));
  {
    std::vector<std::int64_t> fill(t.offset.begin(), t.offset.end() - 1);
    each_edge([&](std::int32_t a, std::int32_t b) { slots[static_cast<std::size_t>(fill[static_cast<std::size_t>(a)]++)] = b; });
  }
  // Sort each row, count duplicates (elements sharing the edge), compact in place.
  t.uses.resize(slots.size());
  std::int64_t out = 0;
  for (std::int64_t a = 0; a < npoin; ++a) {
    const std::int64_t b0 = t.offset[static_cast<std::size_t>(a)], b1 = t.offset[static_cast<std::size_t>(a) + 1];
    std::sort(slots.begin() + b0, slots.begin() + b1);
    t.offset[static_cast<std::size_t>(a)] = out;
    for (std::int64_t i = b0; i < b1;) {
      std::int64_t j = i;
      while (j < b1 && slots[static_cast<std::size_t>(j)] == slots[static_cast<std::size_t>(i)]) ++j;
      slots[static_cast<std::size_t>(out)] = slots[static_cast<std::size_t>(i)];
      t.uses[static_cast<std::size_t>(out)] = static_cast<std::uint8_t>(std::min<std::int64_t>(j - i, 255));
      ++out;
      i = j;
    }
  }
  t.offset[static_cast<std::size_t>(npoin)] = out;
  slots.resize(static_cast<std::size_t>(out));
  slots.shrink_to_fit();
  t.uses.resize(static_cast<std::size_t>(out));
  t.uses.shrink_to_fit();
  t.other = std::move(slots);
  return t;
}

std::vector<std::int32_t> boundary_order_from_ipobo(const Mesh& mesh) {
  std::vector<std::pair<std::int32_t, std::int32_t>> b;
  for (std::int64_t i = 0; i < mesh.npoin2(); ++i)
    if (mesh.ipobo[static_cast<std::size_t>(i)] > 0) b.emplace_back(mesh.ipobo[static_cast<std::size_t>(i)], static_cast<std::int32_t>(i + 1));
  std::sort(b.begin(), b.end());
  std::vector<std::int32_t> order;
  order.reserve(b.size());
  for (auto& p : b) order.push_back(p.second);
  return order;
}

Refinement refine(const Mesh& in, const std::vector<std::int32_t>& boundary_order) {
  const int nplan = in.nplan;
  const int ndp = in.ndp;
  if (!((nplan <= 1 && ndp == 3) || (nplan > 1 && ndp == 6)))
    throw UsageError("refine handles triangles (NDP 3) and prisms on planes (NDP 6); this mesh has NDP " +
                     std::to_string(ndp) + " and " + std::to_string(nplan) + " planes");
  const std::int64_t n2 = in.npoin2(), e2 = in.nelem2();
  if (nplan > 1) {
    // Prisms must sit layer after layer on the same base triangles.
    for (std::int64_t e = 0; e < in.nelem; ++e) {
      const std::int64_t l = e / e2, b = e % e2;
      for (int k = 0; k < 3; ++k) {
        const std::int32_t base = in.ikle[static_cast<std::size_t>(b * 6 + k)];
        if (in.ikle[static_cast<std::size_t>(e * 6 + k)] != base + l * n2 ||
            in.ikle[static_cast<std::size_t>(e * 6 + 3 + k)] != base + (l + 1) * n2)
          throw UsageError("refine: prism " + std::to_string(e + 1) + " does not stand on base triangle " +
                           std::to_string(b + 1) + " (prisms must be stored layer after layer)");
      }
    }
  }
  Refinement r;
  r.edges = build_edges(in.ikle.data(), e2, ndp, n2);
  const std::int64_t ne = r.edges.size();
  r.npoin2_in = n2;
  r.npoin2_out = n2 + ne;
  if (r.npoin2_out * std::max(nplan, 1) > 2147483647LL || e2 * 4 * std::max(nplan - 1, 1) * ndp > 4294967295LL)
    throw UsageError("refine: the refined mesh would exceed 32-bit node numbers");

  Mesh& m = r.mesh;
  m.ndp = ndp;
  m.nplan = nplan;
  const std::int64_t n2o = r.npoin2_out;
  m.npoin = n2o * std::max(nplan, 1);
  m.nelem = e2 * 4 * (nplan > 1 ? nplan - 1 : 1);

  // Base triangles: (a, ab, ca), (ab, b, bc), (ca, bc, c), (ab, bc, ca); orientation kept.
  std::vector<std::int32_t> tri(static_cast<std::size_t>(e2 * 12));
  for (std::int64_t e = 0; e < e2; ++e) {
    const std::int32_t* v = in.ikle.data() + e * ndp;
    const std::int32_t a = v[0], b = v[1], c = v[2];
    auto mid = [&](std::int32_t p, std::int32_t q) {
      return static_cast<std::int32_t>(n2 + r.edges.find(p - 1, q - 1) + 1);
    };
    const std::int32_t ab = mid(a, b), bc = mid(b, c), ca = mid(c, a);
    const std::int32_t t[12] = {a, ab, ca, ab, b, bc, ca, bc, c, ab, bc, ca};
    std::copy(t, t + 12, tri.begin() + e * 12);
  }
  if (nplan <= 1) {
    m.ikle = std::move(tri);
  } else {
    m.ikle.resize(static_cast<std::size_t>(m.nelem * 6));
    std::size_t k = 0;
    const std::int64_t e2o = e2 * 4;
    for (int l = 0; l + 1 < nplan; ++l)
      for (std::int64_t e = 0; e < e2o; ++e) {
        for (int v = 0; v < 3; ++v) m.ikle[k++] = tri[static_cast<std::size_t>(3 * e + v)] + static_cast<std::int32_t>(l * n2o);
        for (int v = 0; v < 3; ++v) m.ikle[k++] = tri[static_cast<std::size_t>(3 * e + v)] + static_cast<std::int32_t>((l + 1) * n2o);
      }
  }
  m.x.resize(static_cast<std::size_t>(m.npoin));
  m.y.resize(static_cast<std::size_t>(m.npoin));
  refine_values(r, nplan, in.x.data(), m.x.data());
  refine_values(r, nplan, in.y.data(), m.y.data());

  // Boundary: a midpoint after each node, on the segment to the next node of its contour.
  const auto& order = boundary_order;
  std::size_t start = 0;  // first entry of the current contour
  for (std::size_t i = 0; i < order.size(); ++i) {
    const std::int32_t a = order[i] - 1;
    if (a < 0 || a >= n2) throw UsageError("refine: boundary node " + std::to_string(order[i]) + " is not a node of the 2D mesh");
    r.boundary.push_back({order[i], static_cast<std::int64_t>(i), -1});
    std::int64_t edge = -1;
    std::size_t next = i + 1;
    if (next < order.size() && r.edges.is_boundary(a, order[next] - 1)) {
      edge = r.edges.find(a, order[next] - 1);
    } else if (r.edges.is_boundary(a, order[start] - 1) && i != start) {
      edge = r.edges.find(a, order[start] - 1);  // closes the contour
      next = start;
      start = i + 1;
    } else {
      throw UsageError("refine: boundary node " + std::to_string(order[i]) + " (entry " + std::to_string(i + 1) +
                       ") is not joined by a boundary edge to the next node of its contour");
    }
    r.boundary.push_back({static_cast<std::int32_t>(n2 + edge + 1), static_cast<std::int64_t>(i), static_cast<std::int64_t>(next)});
  }
  if (start != order.size())
    throw UsageError("refine: the boundary's last contour does not close on its first node");
  const std::int64_t nb = static_cast<std::int64_t>(r.boundary.size());
  m.ipobo.assign(static_cast<std::size_t>(m.npoin), 0);
  for (int p = 0; p < std::max(nplan, 1); ++p)
    for (std::int64_t k = 0; k < nb; ++k)
      m.ipobo[static_cast<std::size_t>(r.boundary[static_cast<std::size_t>(k)].node - 1 + p * n2o)] =
          static_cast<std::int32_t>(k + 1 + p * nb);
  return r;
}

template <class T>
void refine_values(const Refinement& r, int nplan, const T* in, T* out) {
  const std::int64_t n2 = r.npoin2_in, n2o = r.npoin2_out;
  for (int p = 0; p < std::max(nplan, 1); ++p) {
    const T* src = in + p * n2;
    T* dst = out + p * n2o;
    std::copy(src, src + n2, dst);
    T* mid = dst + n2;
    for (std::int64_t a = 0; a < n2; ++a)
      for (std::int64_t e = r.edges.offset[static_cast<std::size_t>(a)]; e < r.edges.offset[static_cast<std::size_t>(a) + 1]; ++e)
        mid[e] = static_cast<T>(0.5 * (static_cast<double>(src[a]) + static_cast<double>(src[r.edges.other[static_cast<std::size_t>(e)]])));
  }
}

template void refine_values<float>(const Refinement&, int, const float*, float*);
template void refine_values<double>(const Refinement&, int, const double*, double*);

}  // namespace anabranch
