// Fortran text as gfortran writes and reads it: the bytes of partel's and gretel's text files.
#include "core/error.hpp"
#include "formats/fortran_text.hpp"
#include "helpers.hpp"

using namespace anabranch;
using fortran::ListRecord;

TEST(FortranText, ListDirectedIntegersAndReals) {
  EXPECT_EQ(ListRecord().integer(101).line(), "         101\n");
  EXPECT_EQ(ListRecord().integer(155).integer(142).integer(-250).real4(14.4f).real4(20.1000061f).integer(0).line(),
            "         155         142        -250   14.3999996       20.1000061               0\n");
  EXPECT_EQ(ListRecord().real4(0.0f).line(), "   0.00000000    \n");
  EXPECT_EQ(ListRecord().real4(0.5f).line(), "  0.500000000    \n");
  EXPECT_EQ(ListRecord().real4(-1.5f).line(), "  -1.50000000    \n");
  EXPECT_EQ(ListRecord().real4(1e10f).line(), "   1.00000000E+10\n");
  EXPECT_EQ(ListRecord().real4(0.05f).line(), "   5.00000007E-02\n");
  EXPECT_EQ(ListRecord().real4(123456792.0f).line(), "   123456792.    \n");
  EXPECT_EQ(ListRecord().real8(0.5).line(), "  0.50000000000000000     \n");
  EXPECT_EQ(ListRecord().real8(1e20).line(), "   1.0000000000000000E+020\n");
}

TEST(FortranText, CharacterItemsAreNotSeparated) {
  EXPECT_EQ(ListRecord().text("# SECTIONS PARTITIONED FOR ").text("00002-00000").line(),
            " # SECTIONS PARTITIONED FOR 00002-00000\n");
  EXPECT_EQ(ListRecord().text("1  ").integer(0).real8(0.5).line(), " 1             0  0.50000000000000000     \n");
}

TEST(FortranText, EditDescriptors) {
  EXPECT_EQ(fortran::iw_group({1566, 1, -1}, 7), "   1566       1      -1");  // no trailing blank
  EXPECT_EQ(fortran::iw(12345678, 7), "*******");
  EXPECT_EQ(fortran::fw(2075.0, 27, 15), "       2075.000000000000000");
  EXPECT_EQ(fortran::i0(-42), "-42");
}

TEST(FortranText, ListDirectedInput) {
  fortran::ListReader in("# comment\n6   -1\nStart\n\n'Two words', 3\n1 2\n3 / ignored\n4 5 6 rest\n", "s.txt");
  in.read(0, "comment");
  EXPECT_EQ(in.read_integers(2, "counts"), (std::vector<std::int64_t>{6, -1}));
  EXPECT_EQ(in.read(1, "name"), std::vector<std::string>{"Start"});
  EXPECT_EQ(in.read(2, "quoted"), (std::vector<std::string>{"Two words", "3"}));  // a blank line is skipped
  EXPECT_EQ(in.read_integers(3, "across lines"), (std::vector<std::int64_t>{1, 2, 3}));  // two records
  EXPECT_EQ(in.line(), 6);
  EXPECT_EQ(in.read_reals(3, "reals"), (std::vector<double>{4, 5, 6}));
  EXPECT_TRUE(in.at_end());
  try {
    in.read(1, "missing");
    FAIL() << "no error at the end of the file";
  } catch (const FormatError& e) {
    EXPECT_NE(std::string(e.what()).find("s.txt"), std::string::npos) << e.what();
  }
  fortran::ListReader bad("1 x\n", "b.txt");
  try {
    bad.read_integers(2, "pair");
    FAIL() << "'x' read as an integer";
  } catch (const FormatError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("b.txt"), std::string::npos) << m;
    EXPECT_NE(m.find("line 1"), std::string::npos) << m;
    EXPECT_NE(m.find("'x'"), std::string::npos) << m;
  }
}

// A streamed file is read as the same text in memory: records, values split across the
// windows' edges, line numbers and byte offsets.
TEST(FortranText, StreamedInputReadsAsInMemory) {
  abtest::TempDir dir;
  std::string text;
  for (int i = 1; i <= 800000; ++i) text += std::to_string(i) + (i % 7 == 0 ? "\n  " : "   ") + std::to_string(i % 13) + "\n";
  text += "42 x\n";
  const std::string path = dir.file("zones.txt");
  abtest::write_bytes(path, std::vector<unsigned char>(text.begin(), text.end()));
  ASSERT_GT(text.size(), std::size_t{8} << 20);  // more than two windows
  fortran::ListReader streamed(path), whole(text, path);
  for (int i = 1; i <= 800000; ++i) {
    const auto a = streamed.read_integers(2, "node, zone");
    ASSERT_EQ(a, whole.read_integers(2, "node, zone")) << i;
    ASSERT_EQ(a[0], i);
    ASSERT_EQ(streamed.line(), whole.line());
    ASSERT_EQ(streamed.offset(), whole.offset());
  }
  try {
    streamed.read_integers(2, "node, zone");
    FAIL() << "'x' read as an integer";
  } catch (const FormatError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("at byte " + std::to_string(text.size() - 5)), std::string::npos) << m;
  }
  EXPECT_TRUE(streamed.at_end());
}
