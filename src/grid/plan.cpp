#include "grid/plan.hpp"

#include <algorithm>

#include "core/error.hpp"
#include "grid/refine.hpp"

namespace anabranch {

std::int64_t Plan::iface_index(std::int32_t node) const {
  auto it = std::lower_bound(iface_nodes.begin(), iface_nodes.end(), node);
  return (it != iface_nodes.end() && *it == node) ? it - iface_nodes.begin() : -1;
}

std::int64_t Plan::local_element(std::int32_t e) const {
  const int p = epart[static_cast<std::size_t>(e)];
  const auto* b = part_elems(p);
  return std::lower_bound(b, b + part_nelem(p), e) - b;
}

std::int64_t Plan::memory_bytes() const {
  return static_cast<std::int64_t>(epart.size() * 4 + elem_offset.size() * 8 + elems.size() * 4 + node_offset.size() * 8 +
                                   knolg.size() * 4 + owner.size() * 4 + iface_nodes.size() * 4 + iface_offset.size() * 8 +
                                   iface_parts.size() * 4);
}

Plan build_plan(const std::int32_t* ikle, std::int64_t nelem, int ndp, int stride, std::int64_t npoin,
                std::vector<std::int32_t> epart, int nparts) {
  if (static_cast<std::int64_t>(epart.size()) != nelem) throw UsageError("build_plan: epart has the wrong size");
  Plan plan;
  plan.nparts = nparts;
  plan.nelem = nelem;
  plan.npoin = npoin;
  plan.ndp = ndp;
  plan.epart = std::move(epart);

  // Elements per part, increasing (a stable counting sort).
  plan.elem_offset.assign(static_cast<std::size_t>(nparts) + 1, 0);
  for (std::int32_t p : plan.epart) {
    if (p < 0 || p >= nparts) throw UsageError("build_plan: part number out of range");
    ++plan.elem_offset[static_cast<std::size_t>(p) + 1];
  }
  for (int p = 0; p < nparts; ++p) plan.elem_offset[static_cast<std::size_t>(p) + 1] += plan.elem_offset[static_cast<std::size_t>(p)];
  plan.elems.resize(static_cast<std::size_t>(nelem));
  {
    std::vector<std::int64_t> fill(plan.elem_offset.begin(), plan.elem_offset.end() - 1);
    for (std::int64_t e = 0; e < nelem; ++e)
      plan.elems[static_cast<std::size_t>(fill[static_cast<std::size_t>(plan.epart[static_cast<std::size_t>(e)])]++)] =
          static_cast<std::int32_t>(e);
  }

  // Local nodes by first appearance; owner = first (lowest) part meeting the node.
  std::vector<std::int32_t> stamp(static_cast<std::size_t>(npoin), -1);
  std::vector<std::uint16_t> count(static_cast<std::size_t>(npoin), 0);
  plan.owner.assign(static_cast<std::size_t>(npoin), -1);
  plan.node_offset.assign(static_cast<std::size_t>(nparts) + 1, 0);
  plan.knolg.reserve(static_cast<std::size_t>(npoin + npoin / 8));
  for (int p = 0; p < nparts; ++p) {
    for (std::int64_t i = plan.elem_offset[static_cast<std::size_t>(p)]; i < plan.elem_offset[static_cast<std::size_t>(p) + 1]; ++i) {
      const std::int32_t* v = ikle + static_cast<std::int64_t>(plan.elems[static_cast<std::size_t>(i)]) * stride;
      for (int k = 0; k < ndp; ++k) {
        const std::int32_t n = v[k] - 1;
        auto& s = stamp[static_cast<std::size_t>(n)];
        if (s == p) continue;
        s = p;
        plan.knolg.push_back(n);
        auto& c = count[static_cast<std::size_t>(n)];
        if (c == 0) plan.owner[static_cast<std::size_t>(n)] = p;
        if (c < 65535) ++c;
      }
    }
    plan.node_offset[static_cast<std::size_t>(p) + 1] = static_cast<std::int64_t>(plan.knolg.size());
  }
  plan.knolg.shrink_to_fit();
  stamp = {};
  for (std::int64_t n = 0; n < npoin; ++n)
    if (count[static_cast<std::size_t>(n)] == 0)
      throw UsageError("build_plan: node " + std::to_string(n + 1) + " belongs to no element");

  // Interface nodes and the parts that share them (parts met in increasing order).
  for (std::int64_t n = 0; n < npoin; ++n)
    if (count[static_cast<std::size_t>(n)] > 1) plan.iface_nodes.push_back(static_cast<std::int32_t>(n));
  plan.iface_offset.assign(plan.iface_nodes.size() + 1, 0);
  for (std::size_t i = 0; i < plan.iface_nodes.size(); ++i)
    plan.iface_offset[i + 1] = plan.iface_offset[i] + count[static_cast<std::size_t>(plan.iface_nodes[i])];
  plan.iface_parts.resize(static_cast<std::size_t>(plan.iface_offset.back()));
  {
    std::vector<std::int64_t> fill(plan.iface_offset.begin(), plan.iface_offset.end() - 1);
    for (int p = 0; p < nparts; ++p)
      for (std::int64_t i = plan.node_offset[static_cast<std::size_t>(p)]; i < plan.node_offset[static_cast<std::size_t>(p) + 1]; ++i) {
        const std::int32_t n = plan.knolg[static_cast<std::size_t>(i)];
        if (count[static_cast<std::size_t>(n)] < 2) continue;
        const std::int64_t k = plan.iface_index(n);
        plan.iface_parts[static_cast<std::size_t>(fill[static_cast<std::size_t>(k)]++)] = p;
      }
  }
  return plan;
}

PlanQuality plan_quality(const Plan& plan, const std::int32_t* ikle, int stride) {
  PlanQuality q;
  q.min_elems = plan.nelem;
  for (int p = 0; p < plan.nparts; ++p) {
    const std::int64_t n = plan.part_nelem(p);
    q.min_elems = std::min(q.min_elems, n);
    q.max_elems = std::max(q.max_elems, n);
    if (n == 0) ++q.empty_parts;
  }
  q.mean_elems = static_cast<double>(plan.nelem) / plan.nparts;
  q.imbalance = q.mean_elems > 0 ? static_cast<double>(q.max_elems) / q.mean_elems : 0;
  q.interface_nodes = static_cast<std::int64_t>(plan.iface_nodes.size());
  std::vector<std::int64_t> per_part(static_cast<std::size_t>(plan.nparts), 0);
  for (int p : plan.iface_parts) ++per_part[static_cast<std::size_t>(p)];
  for (auto v : per_part) q.max_part_interface = std::max(q.max_part_interface, v);
  // Edge cut: faces whose two elements lie in different parts. Only edges joining two
  // interface nodes can be cut, so only those are examined.
  std::vector<char> is_iface(static_cast<std::size_t>(plan.npoin), 0);
  for (auto n : plan.iface_nodes) is_iface[static_cast<std::size_t>(n)] = 1;
  std::vector<std::pair<std::uint64_t, std::int32_t>> cut;
  for (std::int64_t e = 0; e < plan.nelem; ++e) {
    const std::int32_t* v = ikle + e * stride;
    for (int k = 0; k < plan.ndp; ++k) {
      std::int32_t a = v[k] - 1, b = v[(k + 1) % plan.ndp] - 1;
      if (!is_iface[static_cast<std::size_t>(a)] || !is_iface[static_cast<std::size_t>(b)]) continue;
      if (a > b) std::swap(a, b);
      cut.emplace_back((static_cast<std::uint64_t>(a) << 32) | static_cast<std::uint32_t>(b), plan.epart[static_cast<std::size_t>(e)]);
    }
  }
  std::sort(cut.begin(), cut.end());
  for (std::size_t i = 0; i + 1 < cut.size(); ++i)
    if (cut[i].first == cut[i + 1].first && cut[i].second != cut[i + 1].second) ++q.edge_cut;
  return q;
}

}  // namespace anabranch
