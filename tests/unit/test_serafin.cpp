// SERAFIN: round trips, byte-for-byte expectations, fixtures, random access, limits.
#include <cstring>

#include "core/error.hpp"
#include "formats/serafin.hpp"
#include "helpers.hpp"

using namespace anabranch;
using abtest::TempDir;

namespace {

// Copies a whole file through Reader and Writer (values read at the file's precision).
void copy_serafin(const std::string& in, const std::string& out) {
  serafin::Reader r(in);
  Mesh m = r.read_mesh();
  serafin::Writer w(out, r.header(), m);
  std::vector<double> v(static_cast<std::size_t>(r.header().npoin));
  for (std::int64_t f = 0; f < r.frame_count(); ++f) {
    w.begin_frame(r.read_time(f));
    for (int k = 0; k < r.header().nvar(); ++k) {
      r.read_values(f, k, v.data());
      w.write_variable(v.data());
    }
  }
  w.close();
}

// Big-endian bytes written independently of the library, for the byte-exact test.
struct BigEndianBytes {
  std::vector<unsigned char> b;
  void i32(std::int32_t v) {
    auto u = static_cast<std::uint32_t>(v);
    for (int s = 24; s >= 0; s -= 8) b.push_back(static_cast<unsigned char>(u >> s));
  }
  void f32(float f) {
    std::uint32_t u;
    std::memcpy(&u, &f, 4);
    i32(static_cast<std::int32_t>(u));
  }
  void text(const std::string& s) { b.insert(b.end(), s.begin(), s.end()); }
};

}  // namespace

TEST(Serafin, WritesExpectedBytesForATinyMesh) {
  TempDir tmp;
  Mesh m = abtest::square_mesh();
  auto h = abtest::header_for(m, 1, Precision::Single, ByteOrder::Big);
  h.variables[0] = {"DEPTH", "M"};
  serafin::Writer w(tmp.file("t.slf"), h, m);
  std::vector<float> vals = {1.5f, 2.5f, 3.5f, 4.5f};
  w.write_frame<float>(10.0, {vals.data()});
  w.close();

  BigEndianBytes e;
  std::string title = "unit test mesh";
  title.resize(72, ' ');
  title += "SERAFIN ";
  e.i32(80), e.text(title), e.i32(80);
  e.i32(8), e.i32(1), e.i32(0), e.i32(8);
  e.i32(32), e.text("DEPTH           M               "), e.i32(32);
  e.i32(40), e.i32(1);
  for (int i = 0; i < 9; ++i) e.i32(0);
  e.i32(40);
  e.i32(16), e.i32(2), e.i32(4), e.i32(3), e.i32(1), e.i32(16);
  e.i32(24);
  for (int v : {1, 2, 3, 1, 3, 4}) e.i32(v);
  e.i32(24);
  e.i32(16);
  for (int v : {1, 2, 3, 4}) e.i32(v);
  e.i32(16);
  e.i32(16);
  for (float v : {0.f, 1.f, 1.f, 0.f}) e.f32(v);
  e.i32(16);
  e.i32(16);
  for (float v : {0.f, 0.f, 1.f, 1.f}) e.f32(v);
  e.i32(16);
  e.i32(4), e.f32(10.f), e.i32(4);
  e.i32(16);
  for (float v : vals) e.f32(v);
  e.i32(16);
  EXPECT_EQ(abtest::read_bytes(tmp.file("t.slf")), e.b);
}

TEST(Serafin, RoundTripsEveryVariantOfATinyMesh) {
  TempDir tmp;
  for (auto p : {Precision::Single, Precision::Double})
    for (auto o : {ByteOrder::Big, ByteOrder::Little}) {
      auto bytes = abtest::small_file(p, o, 3);
      abtest::write_bytes(tmp.file("in.slf"), bytes);
      serafin::Reader r(tmp.file("in.slf"));
      EXPECT_EQ(r.header().precision, p);
      EXPECT_EQ(r.header().byte_order, o);
      EXPECT_EQ(r.frame_count(), 3);
      EXPECT_EQ(r.integrity().status, serafin::Integrity::Ok);
      ASSERT_TRUE(r.header().date.has_value());
      EXPECT_EQ((*r.header().date)[0], 2024);
      EXPECT_EQ(r.read_time(2), 1.0);
      std::vector<double> v(4);
      r.read_values(1, 1, v.data());
      for (int k = 0; k < 4; ++k) EXPECT_EQ(v[static_cast<std::size_t>(k)], 100 + k + 0.5);
      copy_serafin(tmp.file("in.slf"), tmp.file("out.slf"));
      EXPECT_EQ(abtest::read_bytes(tmp.file("out.slf")), bytes) << to_string(p) << " " << to_string(o);
    }
}

TEST(Serafin, RandomAccessReadsOneVariableOfOneFrame) {
  TempDir tmp;
  abtest::write_bytes(tmp.file("in.slf"), abtest::small_file(Precision::Double, ByteOrder::Big, 5, 3));
  serafin::Reader r(tmp.file("in.slf"));
  std::vector<float> v(2);
  r.read_values(4, 2, 1, 2, v.data());  // nodes 2..3 of variable 3, frame 5
  EXPECT_FLOAT_EQ(v[0], 200 + 1 + 2.0f);
  EXPECT_FLOAT_EQ(v[1], 200 + 2 + 2.0f);
  EXPECT_EQ(r.layout().values_offset(4, 2), r.layout().frame_offset(4) + 8 + 8 + 2 * (8 + 4 * 8) + 4);
  EXPECT_THROW(r.read_values(5, 0, v.data()), UsageError);
  EXPECT_THROW(r.read_values(0, 3, v.data()), UsageError);
}

TEST(Serafin, PrecisionComesFromTheXRecordNotTheTitle) {
  TempDir tmp;
  auto bytes = abtest::small_file(Precision::Double, ByteOrder::Big, 1);
  std::memcpy(bytes.data() + 4 + 72, "SERAFIN ", 8);  // a lying suffix
  abtest::write_bytes(tmp.file("in.slf"), bytes);
  serafin::Reader r(tmp.file("in.slf"));
  EXPECT_EQ(r.header().precision, Precision::Double);
  EXPECT_EQ(r.header().title.substr(72), "SERAFIN ");
  // Written back in double precision, the suffix is corrected for suffix-trusting readers.
  EXPECT_EQ(r.header().title_for_output().substr(72), "SERAFIND");
}

TEST(Serafin, TornLastFrameAndStrayByteAreReportedNotFatal) {
  TempDir tmp;
  auto bytes = abtest::small_file(Precision::Single, ByteOrder::Big, 3);
  auto torn = bytes;
  torn.resize(bytes.size() - 7);
  abtest::write_bytes(tmp.file("torn.slf"), torn);
  serafin::Reader r(tmp.file("torn.slf"));
  EXPECT_EQ(r.frame_count(), 2);
  EXPECT_EQ(r.integrity().status, serafin::Integrity::TornFrame);
  EXPECT_NE(r.integrity().message.find("frame 3"), std::string::npos);

  auto stray = bytes;
  stray.push_back(0);
  abtest::write_bytes(tmp.file("stray.slf"), stray);
  serafin::Reader s(tmp.file("stray.slf"));
  EXPECT_EQ(s.frame_count(), 3);
  EXPECT_EQ(s.integrity().status, serafin::Integrity::StrayByte);
}

TEST(Serafin, RefusesRecordsOverTheLimitAndSaysWhatToDo) {
  TempDir tmp;
  Mesh m = abtest::square_mesh();
  auto h = abtest::header_for(m, 1, Precision::Double, ByteOrder::Big);
  serafin::WriteOptions small;
  small.max_record_bytes = 24;  // IKLE is 24 bytes: fits; X in double is 32: does not
  try {
    serafin::Writer w(tmp.file("big.slf"), h, m, small);
    FAIL() << "expected the record limit to be enforced";
  } catch (const UsageError& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("record X"), std::string::npos) << msg;
    EXPECT_NE(msg.find("HDF5"), std::string::npos) << msg;
  }
  EXPECT_FALSE(abtest::fs::exists(tmp.file("big.slf")));
  EXPECT_TRUE(abtest::fs::is_empty(tmp.path()));
}

TEST(Serafin, UnfinishedWriterLeavesNothingBehind) {
  TempDir tmp;
  Mesh m = abtest::square_mesh();
  auto h = abtest::header_for(m, 2, Precision::Single, ByteOrder::Big);
  {
    serafin::Writer w(tmp.file("x.slf"), h, m);
    std::vector<double> v(4, 1.0);
    w.begin_frame(0.0);
    w.write_variable(v.data());
    EXPECT_THROW(w.close(), UsageError);  // frame incomplete
  }
  EXPECT_TRUE(abtest::fs::is_empty(tmp.path()));
}

TEST(Serafin, ThreeDimensionalHeaderKeepsPlanes) {
  TempDir tmp;
  Mesh m;
  m.nelem = 1;
  m.npoin = 6;
  m.ndp = 6;
  m.nplan = 2;
  m.ikle = {1, 2, 3, 4, 5, 6};
  m.ipobo = {1, 2, 3, 4, 5, 6};
  m.x = {0, 1, 0, 0, 1, 0};
  m.y = {0, 0, 1, 0, 0, 1};
  auto h = abtest::header_for(m, 1, Precision::Single, ByteOrder::Little);
  serafin::Writer w(tmp.file("p.slf"), h, m);
  std::vector<double> z = {0, 0, 0, 1, 1, 1};
  w.write_frame<double>(0, {z.data()});
  w.close();
  serafin::Reader r(tmp.file("p.slf"));
  EXPECT_EQ(r.header().nplan(), 2);
  EXPECT_EQ(r.header().iparam[6], 2);
  Mesh back = r.read_mesh();
  EXPECT_EQ(back.npoin2(), 3);
  EXPECT_EQ(back.ikle, m.ikle);
}

// Every TELEMAC fixture: read -> write gives back the same bytes (a stray trailing byte,
// which is not part of any record, is reported and dropped).
TEST(SerafinFixtures, ReadWriteGivesBackTheSameBytes) {
  AB_REQUIRE_TELEMAC_DATA();
  TempDir tmp;
  auto files = abtest::telemac_slf_files();
  ASSERT_GE(files.size(), 10u);
  for (const auto& f : files) {
    SCOPED_TRACE(f);
    copy_serafin(f, tmp.file("copy.slf"));
    auto want = abtest::read_bytes(f);
    serafin::Reader r(f);
    if (r.integrity().status == serafin::Integrity::StrayByte) want.pop_back();
    EXPECT_EQ(r.integrity().status == serafin::Integrity::TornFrame, false);
    EXPECT_EQ(abtest::read_bytes(tmp.file("copy.slf")), want);
  }
}

TEST(SerafinFixtures, KnownFactsOfTheFixtures) {
  AB_REQUIRE_TELEMAC_DATA();
  const auto d = abtest::telemac_data() + "/";
  {
    serafin::Reader r(d + "geo_malpasset-small.slf");
    EXPECT_EQ(r.header().nelem, 26000);
    EXPECT_EQ(r.header().npoin, 13541);
    EXPECT_EQ(r.header().precision, Precision::Single);
    EXPECT_EQ(r.header().title.substr(72), "SERAPHIN");  // garbage suffix, single precision
  }
  {
    serafin::Reader r(d + "f2d_nestor3.slf");
    EXPECT_EQ(r.header().precision, Precision::Double);
    EXPECT_EQ(r.header().nvar(), 10);
    EXPECT_EQ(r.header().byte_order, ByteOrder::Big);
  }
  {
    serafin::Reader r(d + "r3d_gouttedo.slf");
    EXPECT_EQ(r.header().ndp, 6);
    EXPECT_EQ(r.header().nplan(), 3);
    EXPECT_EQ(r.frame_count(), 11);
    EXPECT_EQ(trimmed(r.header().variables[0].name), "ELEVATION Z");
  }
  {
    serafin::Reader r(d + "r2d_gouttedo.slf");
    EXPECT_EQ(r.frame_count(), 21);
    EXPECT_EQ(r.header().iparam[7], 268);
    auto ipobo = r.read_ipobo();
    EXPECT_EQ(*std::max_element(ipobo.begin(), ipobo.end()), 268);
  }
  // The same bathymetry in all four precision x byte-order variants (the double big-endian
  // file comes from another run: other variable order, two frames).
  auto bottom_of = [](const serafin::Reader& r) {
    for (int v = 0; v < r.header().nvar(); ++v)
      if (trimmed(r.header().variables[static_cast<std::size_t>(v)].name) == "BOTTOM") return v;
    return -1;
  };
  std::vector<float> ref(10000), v(10000);
  serafin::Reader a(d + "r2d_bowl_vf_gb_SinglePrecision_BigEndian.slf");
  a.read_values(0, bottom_of(a), ref.data());
  for (const char* name : {"r2d_bowl_vf_gb_SinglePrecision_LittleEndian.slf", "r2d_bowl_vf_gb_DoublePrecision_BigEndian.slf",
                           "r2d_bowl_vf_gb_DoublePrecision_LittleEndian.slf"}) {
    serafin::Reader b(d + name);
    ASSERT_GE(bottom_of(b), 0);
    b.read_values(0, bottom_of(b), v.data());
    for (std::size_t k = 0; k < ref.size(); k += 97) EXPECT_FLOAT_EQ(v[k], ref[k]) << name;
  }
}

TEST(Serafin, ExtrudedMeshRecordsCopiedInSharesAreTheExtrudedMesh) {
  // A 3D result's header on a 2D geometry (TELEMAC-3D): the shares, each made from the
  // geometry's rows and nodes alone, are the header of the mesh extrude() makes, in every
  // precision and byte order, cut into 1 to 7 shares; a geometry that is neither the
  // header's mesh nor its 2D mesh is refused.
  TempDir tmp;
  for (auto pin : {Precision::Single, Precision::Double}) {
    abtest::write_bytes(tmp.file("geo.slf"), abtest::small_file(pin, ByteOrder::Big, 0));
    const serafin::Reader geo(tmp.file("geo.slf"));
    ASSERT_EQ(geo.header().ndp, 3);
    const Mesh m3 = extrude(geo.read_mesh(), 4);
    for (auto p : {Precision::Single, Precision::Double})
      for (auto o : {ByteOrder::Big, ByteOrder::Little}) {
        serafin::Header h = geo.header();
        h.precision = p;
        h.byte_order = o;
        h.iparam[6] = 4;
        h.set_mesh_sizes(m3);
        ASSERT_TRUE(serafin::extrudes(h, geo.header()));
        MemorySink whole;
        serafin::write_header(whole, h, m3);
        const auto start = serafin::mesh_records_offset(h);
        for (int shares = 1; shares <= 7; ++shares) {
          std::vector<unsigned char> got(whole.bytes.begin(), whole.bytes.begin() + start);
          got.resize(whole.bytes.size(), 0xEE);
          for (int share = 0; share < shares; ++share)
            serafin::copy_mesh_records(h, geo, share, shares, [&](std::int64_t at, const void* d, std::size_t n) {
              ASSERT_GE(at, start);
              ASSERT_LE(at + static_cast<std::int64_t>(n), static_cast<std::int64_t>(got.size()));
              std::memcpy(got.data() + at, d, n);
            });
          EXPECT_EQ(got, whole.bytes) << shares << " shares, " << to_string(p) << " " << to_string(o);
        }
        serafin::Header wrong = h;
        wrong.iparam[6] = 3;  // 3 planes: NPOIN and NELEM are not 4 planes' any more
        wrong.npoin = geo.header().npoin * 3;
        EXPECT_THROW(serafin::copy_mesh_records(wrong, geo, 0, 1, [](std::int64_t, const void*, std::size_t) {}), UsageError);
      }
  }
}

TEST(Serafin, MeshRecordsCopiedInSharesMakeTheWholeHeader) {
  // Every precision and byte order of the geometry into every one of the output, cut into
  // 1 to 7 shares (more shares than a record's items too): the pieces, put where they say,
  // are the header write_header streams, byte for byte, and cover it once.
  TempDir tmp;
  for (auto pin : {Precision::Single, Precision::Double})
    for (auto oin : {ByteOrder::Big, ByteOrder::Little}) {
      abtest::write_bytes(tmp.file("geo.slf"), abtest::small_file(pin, oin, 0));
      const serafin::Reader geo(tmp.file("geo.slf"));
      for (auto p : {Precision::Single, Precision::Double})
        for (auto o : {ByteOrder::Big, ByteOrder::Little}) {
          serafin::Header h = geo.header();
          h.precision = p;
          h.byte_order = o;
          MemorySink whole;
          serafin::write_header(whole, h, geo);
          const auto start = serafin::mesh_records_offset(h);
          ASSERT_EQ(static_cast<std::int64_t>(whole.bytes.size()), serafin::Layout::of(h).header_bytes);
          for (int shares = 1; shares <= 7; ++shares) {
            std::vector<unsigned char> got(whole.bytes.begin(), whole.bytes.begin() + start);
            got.resize(whole.bytes.size(), 0xEE);
            std::vector<int> times(whole.bytes.size(), 0);
            for (int share = 0; share < shares; ++share)
              serafin::copy_mesh_records(h, geo, share, shares, [&](std::int64_t at, const void* d, std::size_t n) {
                ASSERT_GE(at, start);
                ASSERT_LE(at + static_cast<std::int64_t>(n), static_cast<std::int64_t>(got.size()));
                std::memcpy(got.data() + at, d, n);
                for (std::size_t i = 0; i < n; ++i) ++times[static_cast<std::size_t>(at) + i];
              });
            EXPECT_EQ(got, whole.bytes) << shares << " shares, " << to_string(p) << " " << to_string(o);
            for (std::size_t i = static_cast<std::size_t>(start); i < times.size(); ++i) ASSERT_EQ(times[i], 1) << "byte " << i;
          }
        }
    }
}
