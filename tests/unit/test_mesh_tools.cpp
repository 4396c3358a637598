// generate and refine: determinism, orientation, conservation of area, boundary contours.
#include <cmath>

#include "core/error.hpp"
#include "grid/generate.hpp"
#include "grid/refine.hpp"
#include "formats/boundary.hpp"
#include "helpers.hpp"

using namespace anabranch;

namespace {

double signed_area(const Mesh& m, std::int64_t e) {
  const auto* v = m.ikle.data() + e * m.ndp;
  const double x1 = m.x[static_cast<std::size_t>(v[0] - 1)], y1 = m.y[static_cast<std::size_t>(v[0] - 1)];
  const double x2 = m.x[static_cast<std::size_t>(v[1] - 1)], y2 = m.y[static_cast<std::size_t>(v[1] - 1)];
  const double x3 = m.x[static_cast<std::size_t>(v[2] - 1)], y3 = m.y[static_cast<std::size_t>(v[2] - 1)];
  return 0.5 * ((x2 - x1) * (y3 - y1) - (x3 - x1) * (y2 - y1));
}

double total_area(const Mesh& m) {
  double a = 0;
  for (std::int64_t e = 0; e < m.nelem2(); ++e) a += signed_area(m, e);
  return a;
}

// Every consecutive pair of the contour (closing pair included) is a boundary edge, and
// every boundary edge of the mesh is on the contour.
void expect_closed_contour(const Mesh& m, const std::vector<std::int32_t>& order) {
  auto edges = build_edges(m.ikle.data(), m.nelem2(), m.ndp, m.npoin2());
  std::int64_t boundary_edges = 0;
  for (auto u : edges.uses) boundary_edges += (u == 1);
  EXPECT_EQ(boundary_edges, static_cast<std::int64_t>(order.size()));
  for (std::size_t i = 0; i < order.size(); ++i)
    EXPECT_TRUE(edges.is_boundary(order[i] - 1, order[(i + 1) % order.size()] - 1)) << "entry " << i;
}

}  // namespace

TEST(Generate, IsDeterministicAndWellFormed) {
  ChannelOptions o;
  o.elements = 5000;
  auto a = make_channel(o), b = make_channel(o);
  EXPECT_EQ(a.mesh.ikle, b.mesh.ikle);
  EXPECT_EQ(a.mesh.x, b.mesh.x);
  EXPECT_NEAR(static_cast<double>(a.mesh.nelem), 5000.0, 100.0);
  a.mesh.check_sizes();
  for (std::int64_t e = 0; e < a.mesh.nelem; ++e) ASSERT_GT(signed_area(a.mesh, e), 0.0) << "element " << e + 1;
  std::vector<std::int32_t> order;
  for (auto& n : a.boundary) order.push_back(n.node);
  expect_closed_contour(a.mesh, order);
  EXPECT_EQ(boundary_order_from_ipobo(a.mesh), order);
  o.seed = 2;
  EXPECT_NE(make_channel(o).mesh.x, a.mesh.x);
}

TEST(Generate, PrismsStandOnTheBaseTriangles) {
  ChannelOptions o;
  o.elements = 200;
  o.planes = 3;
  auto c = make_channel(o);
  const auto& m = c.mesh;
  EXPECT_EQ(m.ndp, 6);
  EXPECT_EQ(m.nelem, m.nelem2() * 2);
  const std::int64_t n2 = m.npoin2();
  for (std::int64_t e = 0; e < m.nelem; ++e)
    for (int k = 0; k < 3; ++k)
      EXPECT_EQ(m.ikle[static_cast<std::size_t>(e * 6 + 3 + k)], m.ikle[static_cast<std::size_t>(e * 6 + k)] + n2);
  // IPOBO numbers the lateral nodes plane after plane.
  const auto nptfr = static_cast<std::int32_t>(c.boundary.size());
  EXPECT_EQ(m.ipobo[static_cast<std::size_t>(c.boundary[0].node - 1 + n2)], 1 + nptfr);
}

TEST(Refine, QuadruplesElementsAndKeepsAreaAndContour) {
  ChannelOptions o;
  o.elements = 800;
  auto c = make_channel(o);
  std::vector<std::int32_t> order;
  for (auto& n : c.boundary) order.push_back(n.node);
  auto r = refine(c.mesh, order);
  const Mesh& m = r.mesh;
  EXPECT_EQ(m.nelem, 4 * c.mesh.nelem);
  EXPECT_EQ(m.npoin, c.mesh.npoin + r.edges.size());
  // Euler: for a disc-like triangulation V - E + F = 1.
  EXPECT_EQ(c.mesh.npoin - r.edges.size() + c.mesh.nelem, 1);
  EXPECT_NEAR(total_area(m), total_area(c.mesh), 1e-6 * total_area(c.mesh));
  for (std::int64_t e = 0; e < m.nelem; ++e) ASSERT_GT(signed_area(m, e), 0.0);
  EXPECT_EQ(r.boundary.size(), 2 * order.size());
  std::vector<std::int32_t> new_order;
  for (auto& b : r.boundary) new_order.push_back(b.node);
  expect_closed_contour(m, new_order);
  EXPECT_EQ(boundary_order_from_ipobo(m), new_order);
  // Midpoint values are means of the ends.
  std::vector<double> in(static_cast<std::size_t>(c.mesh.npoin)), out(static_cast<std::size_t>(m.npoin));
  for (std::size_t k = 0; k < in.size(); ++k) in[k] = c.mesh.x[k] * 2 + 1;
  refine_values(r, 1, in.data(), out.data());
  for (std::size_t k = 0; k < out.size(); ++k) EXPECT_NEAR(out[k], m.x[k] * 2 + 1, 1e-9);
}

TEST(Refine, PrismMeshesRefineThroughTheirBase) {
  ChannelOptions o;
  o.elements = 300;
  o.planes = 4;
  auto c = make_channel(o);
  std::vector<std::int32_t> order;
  for (auto& n : c.boundary) order.push_back(n.node);
  auto r = refine(c.mesh, order);
  EXPECT_EQ(r.mesh.nelem, 4 * c.mesh.nelem);
  EXPECT_EQ(r.mesh.npoin, r.npoin2_out * 4);
  for (std::int64_t e = 0; e < r.mesh.nelem; ++e)
    for (int k = 0; k < 3; ++k)
      ASSERT_EQ(r.mesh.ikle[static_cast<std::size_t>(e * 6 + 3 + k)], r.mesh.ikle[static_cast<std::size_t>(e * 6 + k)] + r.npoin2_out);
}

TEST(Refine, RejectsWhatItCannotRefine) {
  Mesh q;
  q.nelem = 1;
  q.npoin = 4;
  q.ndp = 4;
  q.ikle = {1, 2, 3, 4};
  q.ipobo = {0, 0, 0, 0};
  q.x = {0, 1, 1, 0};
  q.y = {0, 0, 1, 1};
  EXPECT_THROW(refine(q, {}), UsageError);
  auto sq = abtest::square_mesh();
  EXPECT_THROW(refine(sq, {1, 3, 2, 4}), UsageError);  // not a contour
  EXPECT_NO_THROW(refine(sq, {1, 2, 3, 4}));
}

TEST(RefineFixtures, MalpassetRefinedOnceMatchesThePapersCase1) {
  AB_REQUIRE_TELEMAC_DATA();
  serafin::Reader rd(abtest::telemac_data() + "/geo_malpasset-small.slf");
  Mesh m = rd.read_mesh();
  auto cli = boundary::read(abtest::telemac_data() + "/geo_malpasset-small.cli");
  std::vector<std::int32_t> order;
  for (auto& l : cli.lines) order.push_back(static_cast<std::int32_t>(l.n));
  auto r = refine(m, order);
  EXPECT_EQ(r.mesh.nelem, 104000);
  EXPECT_EQ(r.mesh.npoin, 53081);  // the paper's case 1: 104K elements, 53K points
  EXPECT_EQ(r.boundary.size(), 2160u);
}
