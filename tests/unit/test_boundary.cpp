// Boundary-conditions (.cli) files: parsing, exact rewriting, TELEMAC's fixed format, errors.
#include "core/error.hpp"
#include "formats/boundary.hpp"
#include "helpers.hpp"

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
