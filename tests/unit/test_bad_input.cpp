// Bad SERAFIN input: truncations at every byte, broken markers, impossible sizes, IKLE out
// of range, garbage titles and random damage. Every case must end in a FormatError naming
// the file, the record and the byte offset (or, for a cut inside the frames, in a warning
// and the whole frames) and never in a crash. The suite runs under ASan+UBSan in CI.
#include <cstring>
#include <functional>

#include "core/error.hpp"
#include "formats/serafin.hpp"
#include "helpers.hpp"

using namespace anabranch;

namespace {

// Opens bytes as a SERAFIN file in memory and reads everything in it.
void read_everything(const std::vector<unsigned char>& bytes, const std::string& name = "bad.slf") {
  auto src = std::make_shared<MemorySource>(bytes.data(), bytes.size(), name);
  serafin::Reader r(src);
  r.read_mesh();
  std::vector<double> v(static_cast<std::size_t>(r.header().npoin));
  for (std::int64_t f = 0; f < r.frame_count(); ++f) {
    r.read_time(f);
    for (int k = 0; k < r.header().nvar(); ++k) r.read_values(f, k, v.data());
  }
}

std::string format_error_of(const std::vector<unsigned char>& bytes) {
  try {
    read_everything(bytes);
  } catch (const FormatError& e) {
    return e.what();
  }
  return "";
}

// Offsets of every length marker of the header of abtest::small_file (2 variables, date).
std::vector<std::int64_t> header_markers(const std::vector<unsigned char>& b, ByteOrder o) {
  std::vector<std::int64_t> at;
  std::int64_t pos = 0;
  for (int rec = 0; rec < 12; ++rec) {  // title, counts, 2 names, IPARAM, date, sizes, IKLE, IPOBO, X, Y
    std::int32_t n = load<std::int32_t>(b.data() + pos, o);
    at.push_back(pos);
    at.push_back(pos + 4 + n);
    pos += 8 + n;
  }
  return at;
}

// The offset of the record whose leading or trailing marker is at `marker`.
std::int64_t record_start(const std::vector<unsigned char>& b, ByteOrder o, std::int64_t marker) {
  const auto at = header_markers(b, o);
  for (std::size_t i = 0; i < at.size(); i += 2)
    if (at[i] == marker || at[i + 1] == marker) return at[i];
  return -1;
}

void maybe_save(const std::string& name, const std::vector<unsigned char>& bytes) {
  // The corpus doubles as the seed corpus of the fuzz target.
  if (const char* dir = std::getenv("AB_CORPUS_DIR")) abtest::write_bytes(std::string(dir) + "/" + name, bytes);
}

}  // namespace

TEST(BadInput, TruncationAtEveryByte) {
  for (auto p : {Precision::Single, Precision::Double}) {
    const auto good = abtest::small_file(p, ByteOrder::Big, 2);
    const std::int64_t header = serafin::Reader(std::make_shared<MemorySource>(good.data(), good.size(), "g")).layout().header_bytes;
    const std::int64_t frame = serafin::Reader(std::make_shared<MemorySource>(good.data(), good.size(), "g")).layout().frame_bytes;
    for (std::size_t cut = 0; cut < good.size(); ++cut) {
      std::vector<unsigned char> b(good.begin(), good.begin() + static_cast<std::ptrdiff_t>(cut));
      if (cut % 7 == 0) maybe_save("trunc-" + std::to_string(cut) + ".slf", b);
      SCOPED_TRACE("cut at " + std::to_string(cut));
      if (static_cast<std::int64_t>(cut) < header) {
        std::string msg = format_error_of(b);
        ASSERT_FALSE(msg.empty());
        EXPECT_NE(msg.find("bad.slf: "), std::string::npos) << msg;
        EXPECT_NE(msg.find(" at byte "), std::string::npos) << msg;
        EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
      } else {
        auto src = std::make_shared<MemorySource>(b.data(), b.size(), "cut.slf");
        serafin::Reader r(src);
        const std::int64_t rest = static_cast<std::int64_t>(cut) - header;
        EXPECT_EQ(r.frame_count(), rest / frame);
        auto want = rest % frame == 0 ? serafin::Integrity::Ok
                                      : (rest % frame == 1 ? serafin::Integrity::StrayByte : serafin::Integrity::TornFrame);
        EXPECT_EQ(r.integrity().status, want);
        EXPECT_NO_THROW(read_everything(b));
      }
    }
  }
}

TEST(BadInput, BrokenLengthMarkers) {
  for (auto o : {ByteOrder::Big, ByteOrder::Little}) {
    const auto good = abtest::small_file(Precision::Single, o, 1);
    int n = 0;
    for (std::int64_t at : header_markers(good, o)) {
      for (std::int32_t wrong : {1, -4, 2147483647}) {
        auto b = good;
        std::int32_t v = load<std::int32_t>(b.data() + at, o);
        store<std::int32_t>(b.data() + at, wrong == 1 ? v + 1 : wrong, o);
        maybe_save("marker-" + std::to_string(n++) + ".slf", b);
        std::string msg = format_error_of(b);
        EXPECT_FALSE(msg.empty()) << "marker at " << at << " set to " << wrong;
        // The file, the record, and the byte offset of the broken marker or of its record.
        EXPECT_EQ(msg.rfind("bad.slf: ", 0), 0u) << msg;
        EXPECT_NE(msg.find("record"), std::string::npos) << msg;
        const std::int64_t start = record_start(good, o, at);
        EXPECT_TRUE(msg.find(" at byte " + std::to_string(at) + ":") != std::string::npos ||
                    msg.find(" at byte " + std::to_string(start) + ":") != std::string::npos)
            << "marker at " << at << " (record at " << start << "): " << msg;
      }
    }
  }
}

TEST(BadInput, ImpossibleSizes) {
  const auto good = abtest::small_file(Precision::Single, ByteOrder::Big, 1);
  const auto markers = header_markers(good, ByteOrder::Big);
  const std::int64_t sizes = markers[12] + 4;  // payload of the sizes record (7th record)
  struct Case {
    int field;
    std::int32_t value;
    const char* expect;
  };
  for (const Case& c : {Case{0, -1, "negative NELEM"}, Case{0, 2147483647, "IKLE"}, Case{1, 0, "impossible NPOIN"},
                        Case{1, -3, "impossible NPOIN"}, Case{1, 2000000000, "IPOBO"}, Case{2, 0, "impossible NDP"},
                        Case{2, 99, "impossible NDP"}, Case{2, 4, "NDP does not match the element count"}}) {
    auto b = good;
    store<std::int32_t>(b.data() + sizes + 4 * c.field, c.value, ByteOrder::Big);
    maybe_save("sizes-" + std::to_string(c.field) + "-" + std::to_string(c.value) + ".slf", b);
    std::string msg = format_error_of(b);
    EXPECT_NE(msg.find(c.expect), std::string::npos) << "field " << c.field << " = " << c.value << ": " << msg;
  }
  // Too many variables for the file, or a file cut short in its names: said as such.
  auto b = good;
  store<std::int32_t>(b.data() + markers[2] + 4, 100000000, ByteOrder::Big);
  EXPECT_NE(format_error_of(b).find("variable names need 4000000000 bytes"), std::string::npos) << format_error_of(b);
  store<std::int32_t>(b.data() + markers[2] + 4, -2, ByteOrder::Big);
  EXPECT_NE(format_error_of(b).find("impossible number of variables NBV1 = -2"), std::string::npos) << format_error_of(b);
  const std::vector<unsigned char> cut(good.begin(), good.begin() + markers[2] + 20);
  EXPECT_NE(format_error_of(cut).find("cut short?"), std::string::npos) << format_error_of(cut);
}

TEST(BadInput, IkleOutOfRangeNamesTheEntry) {
  const auto good = abtest::small_file(Precision::Single, ByteOrder::Big, 1);
  const auto markers = header_markers(good, ByteOrder::Big);
  const std::int64_t ikle = markers[14] + 4;
  for (std::int32_t bad : {0, 5, -1}) {
    auto b = good;
    store<std::int32_t>(b.data() + ikle + 4 * 4, bad, ByteOrder::Big);  // element 2, vertex 2
    maybe_save("ikle-" + std::to_string(bad) + ".slf", b);
    std::string msg = format_error_of(b);
    EXPECT_NE(msg.find("record IKLE at byte " + std::to_string(ikle + 16)), std::string::npos) << msg;
    EXPECT_NE(msg.find("element 2"), std::string::npos) << msg;
  }
}

TEST(BadInput, GarbageTitlesAreNeverFatal) {
  auto b = abtest::small_file(Precision::Double, ByteOrder::Big, 1);
  for (int i = 0; i < 80; ++i) b[static_cast<std::size_t>(4 + i)] = static_cast<unsigned char>(i * 37 + 200);
  EXPECT_NO_THROW(read_everything(b));
}

TEST(BadInput, NotSerafinAtAll) {
  std::string text = "this is a text file, not a mesh\n";
  std::vector<unsigned char> b(text.begin(), text.end());
  EXPECT_NE(format_error_of(b).find("not a SERAFIN file"), std::string::npos);
  EXPECT_NE(format_error_of({}).find("not a SERAFIN file"), std::string::npos);
}

TEST(BadInput, RandomDamageNeverCrashes) {
  const auto good = abtest::small_file(Precision::Single, ByteOrder::Big, 2);
  std::uint64_t state = 12345;
  auto next = [&state]() {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
  };
  int errors = 0;
  for (int trial = 0; trial < 3000; ++trial) {
    auto b = good;
    const int flips = 1 + static_cast<int>(next() % 4);
    for (int k = 0; k < flips; ++k) b[next() % b.size()] = static_cast<unsigned char>(next());
    if (trial % 100 == 0) maybe_save("random-" + std::to_string(trial) + ".slf", b);
    try {
      read_everything(b);
    } catch (const Error&) {
      ++errors;  // a clear error is fine; anything else (crash, bad_alloc) fails the test
    }
  }
  EXPECT_GT(errors, 0);
}
