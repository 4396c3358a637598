// Block load balancing: balance, splitting, edge cases, bad input.
#include <cmath>
#include <numeric>
#include <set>

#include "core/error.hpp"
#include "blockformats/blocks.hpp"
#include "partition/balance.hpp"
#include "partition/partitioner.hpp"
#include "helpers.hpp"

using namespace anabranch;

namespace {

// Seed 001's case shape: 256 blocks on a 16 x 16 layout, the smallest a tenth of the largest.
blocks::File cosa_like() {
  blocks::File f;
  std::uint64_t s = 7;
  for (int i = 0; i < 256; ++i) {
    s = s * 6364136223846793005ULL + 1442695040888963407ULL;
    const double u = i == 0 ? 0.0 : i == 1 ? 1.0 : static_cast<double>(s >> 11) / 9007199254740992.0;
    const double scale = std::cbrt(0.1 + 0.9 * u);
    Block b;
    b.id = i + 1;
    b.cells = {static_cast<std::int64_t>(96 * scale), static_cast<std::int64_t>(64 * scale), static_cast<std::int64_t>(32 * scale)};
    b.weight = static_cast<double>(b.cells[0] * b.cells[1] * b.cells[2]);
    f.blocks.push_back(b);
  }
  for (int r = 0; r < 16; ++r)
    for (int c = 0; c < 16; ++c) {
      const int i = r * 16 + c + 1;
      if (c < 15) f.faces.push_back({i, i + 1, 1024});
      if (r < 15) f.faces.push_back({i, i + 16, 1024});
    }
  return f;
}

double total_weight(const BalanceResult& r) { return std::accumulate(r.load.begin(), r.load.end(), 0.0); }

// Every block's pieces tile it exactly.
void expect_pieces_tile(const blocks::File& f, const BalanceResult& r) {
  for (const auto& b : f.blocks) {
    double w = 0;
    double cells = 0;
    for (const auto& p : r.pieces)
      if (p.block == b.id) {
        w += p.weight;
        if (b.has_cells())
          cells += static_cast<double>((p.range[0][1] - p.range[0][0]) * (p.range[1][1] - p.range[1][0]) * (p.range[2][1] - p.range[2][0]));
      }
    EXPECT_NEAR(w, b.weight, 1e-6 * (1 + b.weight)) << "block " << b.id;
    if (b.has_cells()) {
      EXPECT_DOUBLE_EQ(cells, b.weight) << "block " << b.id;
    }
  }
}

}  // namespace

TEST(Balance, CosaCaseWithinFivePercentAtEveryProcessCount) {
  const auto f = cosa_like();
  for (auto method : {BalanceMethod::Greedy, BalanceMethod::Metis}) {
    if (method == BalanceMethod::Metis && !metis_available()) continue;
    for (int p : {32, 48, 64, 72, 96, 120, 128}) {
      BalanceOptions o;
      o.method = method;
      const auto r = balance(f.blocks, f.faces, p, o);
      EXPECT_LE(r.imbalance, 1.05) << to_string(method) << " P=" << p;
      EXPECT_GT(r.roundrobin_imbalance, 1.2) << p;
      expect_pieces_tile(f, r);
      std::set<int> used(r.process.begin(), r.process.end());
      EXPECT_EQ(static_cast<int>(used.size()), p);
    }
  }
}

TEST(Balance, MetisKeepsNeighboursTogether) {
  if (!metis_available()) GTEST_SKIP() << "built without METIS";
  const auto f = cosa_like();
  BalanceOptions m, g;
  m.method = BalanceMethod::Metis;
  g.method = BalanceMethod::Greedy;
  EXPECT_LT(balance(f.blocks, f.faces, 32, m).cut_cells, 0.7 * balance(f.blocks, f.faces, 32, g).cut_cells);
}

TEST(Balance, MoreProcessesThanBlocksAndOneBlock) {
  std::vector<Block> one = {{5, {40, 20, 10}, 8000}};
  for (int p : {1, 3, 16}) {
    const auto r = balance(one, {}, p, {});
    EXPECT_LE(r.imbalance, 1.05) << p;
    EXPECT_NEAR(total_weight(r), 8000, 1e-9);
    std::set<int> used(r.process.begin(), r.process.end());
    EXPECT_EQ(static_cast<int>(used.size()), p);
  }
  BalanceOptions no;
  no.split = false;
  const auto r = balance(one, {}, 4, no);
  EXPECT_EQ(r.pieces.size(), 1u);
  EXPECT_DOUBLE_EQ(r.imbalance, 4.0);
}

TEST(Balance, ZeroWeightsAndDisconnectedGraphs) {
  std::vector<Block> b = {{1, {0, 0, 0}, 0}, {2, {10, 10, 10}, 1000}, {3, {0, 0, 0}, 0}, {4, {10, 10, 10}, 1000}};
  std::vector<Face> faces = {{1, 2, 10}};  // blocks 3 and 4 unconnected
  for (auto m : {BalanceMethod::Greedy, BalanceMethod::Metis}) {
    if (m == BalanceMethod::Metis && !metis_available()) continue;
    BalanceOptions o;
    o.method = m;
    const auto r = balance(b, faces, 2, o);
    EXPECT_DOUBLE_EQ(r.imbalance, 1.0);
    EXPECT_EQ(r.pieces.size(), 4u);
  }
  std::vector<Block> all_zero = {{1, {}, 0}, {2, {}, 0}};
  EXPECT_DOUBLE_EQ(balance(all_zero, {}, 3, {}).imbalance, 1.0);
}

TEST(Balance, WeightOnlyBlocksSplitByWeight) {
  std::vector<Block> b = {{1, {}, 100}, {2, {}, 10}};
  const auto r = balance(b, {}, 5, {});
  EXPECT_LE(r.imbalance, 1.05);
  EXPECT_NEAR(total_weight(r), 110, 1e-9);
}

// Greedy deals the heaviest blocks first (longest processing time first): 5, 4, 3, 3, 3 on
// two processes end 10 / 8; the lightest first would end 11 / 7.
TEST(Balance, GreedyDealsHeaviestFirst) {
  std::vector<Block> b = {{1, {}, 3}, {2, {}, 5}, {3, {}, 3}, {4, {}, 4}, {5, {}, 3}};
  BalanceOptions o;
  o.method = BalanceMethod::Greedy;
  o.split = false;
  const auto r = balance(b, {}, 2, o);
  EXPECT_DOUBLE_EQ(*std::max_element(r.load.begin(), r.load.end()), 10.0);
  // Two equal blocks sharing a face of 10 cells, on two processes: the face is cut.
  std::vector<Block> two = {{1, {}, 4}, {2, {}, 4}};
  const auto cut = balance(two, {{1, 2, 10}}, 2, o);
  EXPECT_DOUBLE_EQ(cut.cut_cells, 10.0);
  EXPECT_DOUBLE_EQ(balance(two, {{1, 2, 10}}, 1, o).cut_cells, 0.0);
}

TEST(Balance, BadInput) {
  EXPECT_THROW(balance({}, {}, 2, {}), UsageError);
  EXPECT_THROW(balance({{1, {}, 1}}, {}, 0, {}), UsageError);
  EXPECT_THROW(balance({{1, {}, 1}, {1, {}, 2}}, {}, 2, {}), UsageError);
  EXPECT_THROW(balance({{1, {}, 1}}, {{1, 9, 3}}, 2, {}), UsageError);
  EXPECT_THROW(balance({{1, {}, -1}}, {}, 2, {}), UsageError);
  EXPECT_THROW(blocks::parse("{\"blocks\": [{\"id\": 1}]}", "b.json"), FormatError);
  EXPECT_THROW(blocks::parse("{\"blocks\": [{\"id\": 1, \"cells\": [1, 2]}]}", "b.json"), FormatError);
  EXPECT_THROW(blocks::parse("{\"blocks\": [{\"id\": 1, \"cells\": [-1, 2, 2]}]}", "b.json"), FormatError);
  EXPECT_THROW(blocks::parse("{\"blocks\": [{\"id\": 1, \"weight\": -3}]}", "b.json"), FormatError);
  EXPECT_THROW(blocks::parse("{\"blocks\": [", "b.json"), FormatError);
  EXPECT_THROW(blocks::parse("1 2 3\n", "b.txt"), FormatError);
  EXPECT_THROW(blocks::parse("1 2 x 4\n", "b.txt"), FormatError);
  try {
    blocks::parse("# blocks\n1 10 10 10\n2 -1 3 4\n", "b.txt");
    FAIL();
  } catch (const FormatError& e) {
    EXPECT_NE(std::string(e.what()).find("b.txt: line 3"), std::string::npos) << e.what();
  }
  auto t = blocks::parse("# id ni nj nk\n1 10 10 10\n2 4.5\n", "ok.txt");
  ASSERT_EQ(t.blocks.size(), 2u);
  EXPECT_DOUBLE_EQ(t.blocks[0].weight, 1000);
  EXPECT_DOUBLE_EQ(t.blocks[1].weight, 4.5);
}
