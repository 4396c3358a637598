// Boundary-conditions (.cli) files: parsing, exact rewriting, TELEMAC's fixed format, errors.
#include "core/error.hpp"
#include "formats/boundary.hpp"
#include "helpers.hpp"

#include <random>

using namespace anabranch;

TEST(Boundary, ParsesColumnsAndKeepsText) {
  const std::string text =
      "  2 2 2  0.000  0.000  0.000  0.0   2  0.000  0.000  0.000    546     1\n"
      "  5 4 4  1.5D+00  0.000  0.000  0.0   4  0.000  0.000  0.000   1009     2   extra  \n";
  auto f = boundary::parse(text, "x.cli");
  ASSERT_EQ(f.lines.size(), 2u);
  EXPECT_EQ(f.lines[0].n, 546);
  EXPECT_EQ(f.lines[1].lihbor, 5);
  EXPECT_EQ(f.lines[1].liubor, 4);
  EXPECT_DOUBLE_EQ(f.lines[1].hbor, 1.5);
  EXPECT_EQ(f.lines[1].litbor, 4);
  EXPECT_EQ(f.lines[1].k, 2);
  // Only N and K change; spacing, number formats and extra columns stay as written.
  EXPECT_EQ(boundary::rewrite(f.lines[0], 546, 1), "  2 2 2  0.000  0.000  0.000  0.0   2  0.000  0.000  0.000    546     1");
  EXPECT_EQ(boundary::rewrite(f.lines[1], 77, 12),
            "  5 4 4  1.5D+00  0.000  0.000  0.0   4  0.000  0.000  0.000     77    12   extra  ");
  EXPECT_EQ(boundary::rewrite(f.lines[0], 12345678, 1),
            "  2 2 2  0.000  0.000  0.000  0.0   2  0.000  0.000  0.000 12345678     1");
}

TEST(Boundary, TelemacFixedFormatIs207Characters) {
  boundary::Line l;
  l.lihbor = 5;
  l.liubor = 4;
  l.livbor = 4;
  l.hbor = -1.25;
  l.litbor = 4;
  std::string s = boundary::format_telemac(l, 123, 45);
  EXPECT_EQ(s.size(), 207u);
  EXPECT_EQ(s.substr(0, 8), "  5 4 4 ");
  EXPECT_EQ(s.substr(8, 24), "         -1.250000000000");
  EXPECT_EQ(s.substr(188), "      123        45");
  auto back = boundary::parse(s + "\n", "f.cli");
  EXPECT_EQ(back.lines[0].n, 123);
  EXPECT_EQ(back.lines[0].k, 45);
  EXPECT_DOUBLE_EQ(back.lines[0].hbor, -1.25);
}

TEST(Boundary, ErrorsNameLineColumnAndOffset) {
  try {
    boundary::parse("  2 2 2  0.0 0.0 0.0 0.0 2 0.0 0.0 0.0 5 1\n  2 2 x  0.0 0.0 0.0 0.0 2 0.0 0.0 0.0 6 2\n", "bad.cli");
    FAIL();
  } catch (const FormatError& e) {
    EXPECT_STREQ(e.what(), "bad.cli: line 2, column 3 at byte 49: 'x' is not an integer code");
  }
  EXPECT_THROW(boundary::parse("2 2 2 0 0 0\n", "short.cli"), FormatError);
  // Blank lines are skipped; a line of one word is not blank.
  EXPECT_EQ(boundary::parse("\n \t \n 2 2 2 0 0 0 0 2 0 0 0 5 1\n\n", "blank.cli").lines.size(), 1u);
  try {
    boundary::parse(" 2 2 2 0 0 0 0 2 0 0 0 5 1\n  7\n", "word.cli");
    FAIL();
  } catch (const FormatError& e) {
    EXPECT_NE(std::string(e.what()).find("word.cli: line 2"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("found 1"), std::string::npos) << e.what();
  }
  auto f = boundary::parse(" 2 2 2 0 0 0 0 2 0 0 0 5 1\n 2 2 2 0 0 0 0 2 0 0 0 5 2\n", "dup.cli");
  try {
    boundary::validate(f, 10, "mesh.slf");
    FAIL();
  } catch (const FormatError& e) {
    EXPECT_NE(std::string(e.what()).find("listed twice"), std::string::npos);
  }
  EXPECT_THROW(boundary::validate(f, 4, "mesh.slf"), FormatError);
  // A node beyond the mesh's NPOIN (listed once): its line, column 12.
  auto beyond = boundary::parse(" 2 2 2 0 0 0 0 2 0 0 0 3 1\n 2 2 2 0 0 0 0 2 0 0 0 5 2\n", "beyond.cli");
  try {
    boundary::validate(beyond, 4, "mesh.slf");
    FAIL();
  } catch (const FormatError& e) {
    EXPECT_NE(std::string(e.what()).find("beyond.cli: line 2, column 12"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("node 5 is outside 1..4"), std::string::npos) << e.what();
  }
}

// validate() against a scan in file order with a mark per node (what it did before it sorted
// the lines), on generated files: the same first bad line, message and byte offset, with and
// without the lines' text kept.
TEST(Boundary, ValidateNamesTheFirstBadLineInFileOrder) {
  std::mt19937 rng(20261129);
  for (int round = 0; round < 400; ++round) {
    const std::int64_t npoin = 1 + static_cast<std::int64_t>(rng() % 40);
    const int count = 1 + static_cast<int>(rng() % 30);
    std::string text;
    for (int i = 0; i < count; ++i) {
      std::int64_t n = 1 + static_cast<std::int64_t>(rng() % static_cast<std::uint32_t>(npoin + 8));  // some beyond NPOIN
      if (rng() % 20 == 0) n = 0;
      text += std::string(rng() % 3, ' ') + " 2 2 2 0 0 0 0 2 0 0 0 " + std::to_string(n) + " " + std::to_string(i + 1) + "\n";
    }
    std::string expected;
    {
      std::vector<std::int64_t> seen(static_cast<std::size_t>(npoin) + 1, 0);
      const auto f = boundary::parse(text, "g.cli");
      for (const auto& l : f.lines) {
        std::size_t col = 0, column12 = 0;  // where the 12th word of the line starts
        for (std::size_t i = 0; i < l.text.size(); ++i)
          if (l.text[i] != ' ' && (i == 0 || l.text[i - 1] == ' ') && ++col == 12) column12 = i;
        const std::int64_t at = l.offset + static_cast<std::int64_t>(column12);
        const std::string where = "g.cli: line " + std::to_string(l.lineno) + ", column 12 at byte " + std::to_string(at) + ": node " + std::to_string(l.n);
        if (l.n < 1 || l.n > npoin) {
          expected = where + " is outside 1.." + std::to_string(npoin) + " (NPOIN of m.slf)";
          break;
        }
        if (seen[static_cast<std::size_t>(l.n)]) {
          expected = where + " is listed twice (first on line " + std::to_string(seen[static_cast<std::size_t>(l.n)]) + ")";
          break;
        }
        seen[static_cast<std::size_t>(l.n)] = l.lineno;
      }
    }
    for (bool keep : {true, false}) {
      std::string got;
      try {
        boundary::validate(boundary::parse(text, "g.cli", keep), npoin, "m.slf");
      } catch (const FormatError& e) {
        got = e.what();
      }
      ASSERT_EQ(got, expected) << text;
    }
  }
}

TEST(Boundary, ReadWithoutTextKeepsTheValues) {
  const std::string text = "  5 4 4  1.5D+00  0.000  0.000  0.0   4  0.000  0.000  0.000   1009     2   extra  \n";
  const auto kept = boundary::parse(text, "x.cli"), values = boundary::parse(text, "x.cli", false);
  ASSERT_EQ(values.lines.size(), 1u);
  EXPECT_TRUE(values.lines[0].text.empty());
  EXPECT_EQ(values.lines[0].n, 1009);
  EXPECT_DOUBLE_EQ(values.lines[0].hbor, 1.5);
  EXPECT_EQ(boundary::format_telemac(values.lines[0], 7, 3), boundary::format_telemac(kept.lines[0], 7, 3));
  EXPECT_EQ(boundary::rewrite(values.lines[0], 7, 3), boundary::format_telemac(kept.lines[0], 7, 3));
}

TEST(BoundaryFixtures, ReadAndValidateAgainstTheirMeshes) {
  AB_REQUIRE_TELEMAC_DATA();
  const auto d = abtest::telemac_data() + "/";
  auto m = boundary::read(d + "geo_malpasset-small.cli");
  EXPECT_EQ(m.lines.size(), 1080u);
  EXPECT_NO_THROW(boundary::validate(m, 13541, "geo_malpasset-small.slf"));
  auto g = boundary::read(d + "geo_gouttedo.cli");
  EXPECT_EQ(g.lines.size(), 268u);
  EXPECT_NO_THROW(boundary::validate(g, 4624, "geo_gouttedo.slf"));
  for (std::size_t i = 0; i < g.lines.size(); ++i) EXPECT_EQ(boundary::rewrite(g.lines[i], g.lines[i].n, g.lines[i].k), g.lines[i].text);
}
