// Partitioners and the partition plan.
#include <algorithm>
#include <numeric>
#include <set>
#include <tuple>

#include "grid/generate.hpp"
#include "grid/plan.hpp"
#include "helpers.hpp"
#include "partition/partitioner.hpp"

#ifdef ANABRANCH_HAVE_METIS
#include <metis.h>
#endif

using namespace anabranch;

namespace {

std::vector<std::int32_t> zero_based(const std::vector<std::int32_t>& ikle) {
  std::vector<std::int32_t> e(ikle);
  for (auto& v : e) --v;
  return e;
}

}  // namespace

#ifdef ANABRANCH_HAVE_METIS
// The dual graph + PartGraphKway route must give exactly what METIS_PartMeshDual gives
// (what TELEMAC's partel calls), so our partitions equal partel's.
TEST(Metis, EqualsPartMeshDual) {
  std::vector<Mesh> meshes;
  ChannelOptions o;
  o.elements = 20000;
  meshes.push_back(make_channel(o).mesh);
  if (abtest::have_telemac_data()) meshes.push_back(serafin::Reader(abtest::telemac_data() + "/geo_malpasset-small.slf").read_mesh());
  for (const auto& m : meshes) {
    // The dual graph, bit for bit METIS_MeshToDual's (both numberings).
    for (idx_t base : {0, 1}) {
      std::vector<std::int32_t> xadj, adjncy;
      dual_graph(zero_based(m.ikle).data(), m.nelem, 3, m.npoin, base, xadj, adjncy);
      idx_t ne = static_cast<idx_t>(m.nelem), nn = static_cast<idx_t>(m.npoin), ncommon = 2, numflag = base;
      std::vector<idx_t> eptr(static_cast<std::size_t>(ne) + 1);
      for (idx_t e = 0; e <= ne; ++e) eptr[static_cast<std::size_t>(e)] = 3 * e + base;
      auto eind = zero_based(m.ikle);
      for (auto& v : eind) v += base;
      idx_t *mx = nullptr, *ma = nullptr;
      ASSERT_EQ(METIS_MeshToDual(&ne, &nn, eptr.data(), eind.data(), &ncommon, &numflag, &mx, &ma), METIS_OK);
      EXPECT_EQ(xadj, std::vector<std::int32_t>(mx, mx + ne + 1)) << "base " << base;
      EXPECT_EQ(adjncy, std::vector<std::int32_t>(ma, ma + (mx[ne] - base))) << "base " << base;
      METIS_Free(mx);
      METIS_Free(ma);
    }
    for (int nparts : {2, 7, 64}) {
      auto ours = partition_metis(zero_based(m.ikle), m.nelem, 3, m.npoin, nparts, {});
      idx_t ne = static_cast<idx_t>(m.nelem), nn = static_cast<idx_t>(m.npoin), ncommon = 2, np = nparts, objval = 0;
      std::vector<idx_t> eptr(static_cast<std::size_t>(ne) + 1);
      for (idx_t e = 0; e <= ne; ++e) eptr[static_cast<std::size_t>(e)] = 3 * e;
      auto eind = zero_based(m.ikle);
      std::vector<idx_t> epart(static_cast<std::size_t>(ne)), npart(static_cast<std::size_t>(nn));
      ASSERT_EQ(METIS_PartMeshDual(&ne, &nn, eptr.data(), eind.data(), nullptr, nullptr, &ncommon, &np, nullptr, nullptr,
                                   &objval, epart.data(), npart.data()),
                METIS_OK);
      EXPECT_EQ(ours, epart) << "nparts " << nparts;
    }
  }
}

// Quadrilaterals (four lists per element) and a node shared by many elements (a fan): the
// same graph as METIS's.
TEST(Metis, DualGraphOfQuadsAndFansIsMetis) {
  const int n = 30;
  std::vector<std::int32_t> quads;  // an n x n grid of quads, then a fan of triangles around one node
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i) {
      const int a = j * (n + 1) + i;
      quads.insert(quads.end(), {a, a + 1, a + n + 2, a + n + 1});
    }
  std::vector<std::int32_t> fan;
  const int spokes = 500;
  for (int k = 0; k < spokes; ++k) fan.insert(fan.end(), {0, 1 + k, 1 + (k + 1) % spokes});
  for (auto [eind, ndp, npoin] : {std::tuple{quads, 4, (n + 1) * (n + 1)}, std::tuple{fan, 3, spokes + 1}}) {
    const auto nelem = static_cast<std::int64_t>(eind.size()) / ndp;
    std::vector<std::int32_t> xadj, adjncy;
    dual_graph(eind.data(), nelem, ndp, npoin, 0, xadj, adjncy);
    idx_t ne = static_cast<idx_t>(nelem), nn = npoin, ncommon = 2, numflag = 0;
    std::vector<idx_t> eptr(static_cast<std::size_t>(ne) + 1);
    for (idx_t e = 0; e <= ne; ++e) eptr[static_cast<std::size_t>(e)] = ndp * e;
    idx_t *mx = nullptr, *ma = nullptr;
    ASSERT_EQ(METIS_MeshToDual(&ne, &nn, eptr.data(), eind.data(), &ncommon, &numflag, &mx, &ma), METIS_OK);
    EXPECT_EQ(xadj, std::vector<std::int32_t>(mx, mx + ne + 1)) << ndp;
    EXPECT_EQ(adjncy, std::vector<std::int32_t>(ma, ma + mx[ne])) << ndp;
    EXPECT_GT(adjncy.size(), static_cast<std::size_t>(nelem));
    METIS_Free(mx);
    METIS_Free(ma);
  }
}
#endif

TEST(Sfc, HilbertCurveVisitsNeighbouringCells) {
  for (int order : {1, 2, 3, 6}) {
    const std::uint32_t n = 1u << order;
    std::vector<std::pair<std::uint32_t, std::uint32_t>> cell(static_cast<std::size_t>(n) * n, {n, n});
    for (std::uint32_t x = 0; x < n; ++x)
      for (std::uint32_t y = 0; y < n; ++y) {
        const auto d = hilbert_index(x, y, order);
        ASSERT_LT(d, cell.size());
        ASSERT_EQ(cell[d].first, n) << "index " << d << " used twice";
        cell[d] = {x, y};
      }
    for (std::size_t d = 1; d < cell.size(); ++d) {
      const auto dx = std::abs(static_cast<int>(cell[d].first) - static_cast<int>(cell[d - 1].first));
      const auto dy = std::abs(static_cast<int>(cell[d].second) - static_cast<int>(cell[d - 1].second));
      EXPECT_EQ(dx + dy, 1) << "order " << order << " step " << d;
    }
  }
}

TEST(Sfc, BalancedContiguousParts) {
  ChannelOptions o;
  o.elements = 10000;
  auto m = make_channel(o).mesh;
  for (int nparts : {1, 3, 16}) {
    auto epart = partition_sfc(m.ikle.data(), m.nelem, 3, 3, Coordinates(m.x), Coordinates(m.y), nparts, {});
    std::vector<std::int64_t> count(static_cast<std::size_t>(nparts), 0);
    for (auto p : epart) ++count[static_cast<std::size_t>(p)];
    const auto [lo, hi] = std::minmax_element(count.begin(), count.end());
    EXPECT_LE(*hi - *lo, 1) << nparts;
    auto plan = build_plan(m.ikle.data(), m.nelem, 3, 3, m.npoin, epart, nparts);
    auto q = plan_quality(plan, m.ikle.data(), 3);
    // A space-filling curve keeps parts compact: the cut stays a small share of the edges.
    EXPECT_LT(q.edge_cut, m.nelem / 10) << nparts;
  }
  // Weights: a heavy half gets fewer elements per part.
  std::vector<std::int32_t> w(static_cast<std::size_t>(m.nelem), 1);
  for (std::int64_t e = 0; e < m.nelem / 2; ++e) w[static_cast<std::size_t>(e)] = 3;
  auto epart = partition_sfc(m.ikle.data(), m.nelem, 3, 3, Coordinates(m.x), Coordinates(m.y), 4, w);
  std::vector<double> load(4, 0);
  for (std::int64_t e = 0; e < m.nelem; ++e) load[static_cast<std::size_t>(epart[static_cast<std::size_t>(e)])] += w[static_cast<std::size_t>(e)];
  const double mean = std::accumulate(load.begin(), load.end(), 0.0) / 4;
  for (double l : load) EXPECT_NEAR(l, mean, 0.01 * mean);
}

// On a square, the curve's four quarters are the square's four quadrants: compact in both
// directions, not strips.
TEST(Sfc, QuartersOfASquareAreItsQuadrants) {
  const int k = 32;
  std::vector<double> x, y;
  std::vector<std::int32_t> ikle;
  for (int j = 0; j <= k; ++j)
    for (int i = 0; i <= k; ++i) x.push_back(i), y.push_back(j);
  for (int j = 0; j < k; ++j)
    for (int i = 0; i < k; ++i) {
      const std::int32_t a = j * (k + 1) + i + 1, b = a + 1, c = a + k + 1, d = c + 1;
      ikle.insert(ikle.end(), {a, b, d, a, d, c});
    }
  const std::int64_t nelem = static_cast<std::int64_t>(ikle.size()) / 3;
  auto epart = partition_sfc(ikle.data(), nelem, 3, 3, Coordinates(x), Coordinates(y), 4, {});
  for (int p = 0; p < 4; ++p) {
    double x0 = k, x1 = 0, y0 = k, y1 = 0;
    for (std::int64_t e = 0; e < nelem; ++e) {
      if (epart[static_cast<std::size_t>(e)] != p) continue;
      for (int v = 0; v < 3; ++v) {
        const auto n = static_cast<std::size_t>(ikle[static_cast<std::size_t>(e * 3 + v)] - 1);
        x0 = std::min(x0, x[n]), x1 = std::max(x1, x[n]), y0 = std::min(y0, y[n]), y1 = std::max(y1, y[n]);
      }
    }
    EXPECT_LE(x1 - x0, k / 2 + 1) << p;
    EXPECT_LE(y1 - y0, k / 2 + 1) << p;
  }
}

TEST(Plan, CsrFieldsOfASmallMesh) {
  // Four triangles in a row: 1-2-3, 2-4-3, 3-4-5, 4-6-5; parts 0, 0, 1, 1.
  std::vector<std::int32_t> ikle = {1, 2, 3, 2, 4, 3, 3, 4, 5, 4, 6, 5};
  auto plan = build_plan(ikle.data(), 4, 3, 3, 6, {0, 0, 1, 1}, 2);
  EXPECT_EQ(plan.part_nelem(0), 2);
  EXPECT_EQ(std::vector<std::int32_t>(plan.part_knolg(0), plan.part_knolg(0) + plan.part_npoin(0)),
            (std::vector<std::int32_t>{0, 1, 2, 3}));
  EXPECT_EQ(std::vector<std::int32_t>(plan.part_knolg(1), plan.part_knolg(1) + plan.part_npoin(1)),
            (std::vector<std::int32_t>{2, 3, 4, 5}));
  EXPECT_EQ(plan.iface_nodes, (std::vector<std::int32_t>{2, 3}));
  EXPECT_EQ(plan.iface_parts, (std::vector<std::int32_t>{0, 1, 0, 1}));
  EXPECT_EQ(plan.owner, (std::vector<std::int32_t>{0, 0, 0, 0, 1, 1}));
  EXPECT_EQ(plan.local_element(3), 1);
  auto q = plan_quality(plan, ikle.data(), 3);
  EXPECT_EQ(q.edge_cut, 1);
  EXPECT_EQ(q.interface_nodes, 2);
}

TEST(Plan, EmptyPartsAndOwnership) {
  ChannelOptions o;
  o.elements = 3000;
  auto m = make_channel(o).mesh;
  auto epart = partition_sfc(m.ikle.data(), m.nelem, 3, 3, Coordinates(m.x), Coordinates(m.y), 5, {});
  for (auto& p : epart)
    if (p == 2) p = 3;  // part 2 empty
  auto plan = build_plan(m.ikle.data(), m.nelem, 3, 3, m.npoin, epart, 5);
  EXPECT_EQ(plan.part_nelem(2), 0);
  EXPECT_EQ(plan.part_npoin(2), 0);
  // Every node owned once, by the lowest part holding it; the local lists cover it.
  std::vector<int> owned(static_cast<std::size_t>(m.npoin), 0);
  for (int p = 0; p < 5; ++p)
    for (std::int64_t i = 0; i < plan.part_npoin(p); ++i) {
      const auto n = plan.part_knolg(p)[i];
      if (plan.owner[static_cast<std::size_t>(n)] == p) ++owned[static_cast<std::size_t>(n)];
      EXPECT_LE(plan.owner[static_cast<std::size_t>(n)], p);
    }
  EXPECT_TRUE(std::all_of(owned.begin(), owned.end(), [](int c) { return c == 1; }));
  // Memory is O(elements + nodes), not O(parts x nodes).
  EXPECT_LT(plan.memory_bytes(), 4 * 8 * (m.nelem + m.npoin));
}
