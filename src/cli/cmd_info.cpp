// anabranch info FILE...: header, sizes, variables, frames and integrity of result files
// (SERAFIN, or anabranch's HDF5 with its provenance).
// Reads the header records and the time of each frame only, so it is instant on big files.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <future>
#include <limits>
#include <optional>
#include <thread>

#include <unistd.h>

#include "cli/cgns_helper.hpp"
#include "cli/commands.hpp"
#include "core/byteorder.hpp"
#include "core/error.hpp"
#include "core/io.hpp"
#include "grid/mesh.hpp"
#include "blockformats/plot3d.hpp"
#include "formats/serafin.hpp"
#include "layouts/block_io.hpp"
#include "h5/cgns_files.hpp"
#include "h5/results.hpp"

namespace anabranch::cli {
namespace {

struct InfoOptions {
  std::vector<std::string> files;
  bool check = false;
  bool stats = false;
  int max_times = 10;
};

// A multi-block file (raw with its sidecar, or HDF5 with a block table).
nlohmann::json describe_blocks(const std::string& path, bool check) {
  const auto i = pio::describe_block_file(path);
  nlohmann::json j;
  j["file"] = path;
  j["format"] = "blocks-" + i.format;
  j["precision"] = i.real_bytes == 8 ? "double" : "single";
  j["records"] = i.records ? "fortran" : "none";
  j["file_bytes"] = i.file_bytes;
  std::int64_t points = 0;
  nlohmann::json blocks = nlohmann::json::array();
  for (std::size_t k = 0; k < i.blocks.size(); ++k) {
    const auto& b = i.blocks[k];
    points += b.points();
    blocks.push_back({{"id", b.id}, {"dims", b.dims}});
    if (k < i.zones.size()) blocks.back()["zone"] = i.zones[k], blocks.back()["points"] = b.dims;
  }
  if (i.format == "hdf5" && !i.compression.empty()) j["reading"] = "anabranch's engine: each rank decodes the chunks of its pieces through HDF5";
  if (i.format == "tecplot") j["reading"] = "anabranch's engine: each rank reads its zones' arrays where they are";
  if (i.format == "cgns") {  // read in place: every array contiguous, the zones' points, vertex solutions
    j["reading"] = i.compression.empty() ? "anabranch's engine: each rank reads its zones' arrays where they are"
                                         : "anabranch's engine: each rank decodes the chunks of its zones' pieces through HDF5";
    j["location"] = "Vertex";
    j["skipped_solutions"] = 0;
  }
  j["block_count"] = i.blocks.size();
  j["points"] = points;
  j["blocks"] = blocks;
  j["variables"] = i.variables;
  j["grid"] = i.has_grid;
  j["frames"] = i.frames();
  j["times"] = i.times;
  j["provenance"] = i.provenance;
  j["integrity"] = "OK";
#ifdef ANABRANCH_HAVE_HDF5
  if (!i.compression.empty()) {  // each variable's filters, bound and ratio over its blocks and frames (the grid: lossless)
    const pio::ChunkedArrays file(i);
    const bool zstd = i.compression.find(":zstd") != std::string::npos;
    for (int v = i.has_grid ? -3 : 0; v < i.nvar(); ++v) {
      if (v == -2 || v == -1) continue;  // the grid's x, y and z together
      double stored = 0, values = 0;
      for (std::int64_t f = 0; f < (v < 0 ? 1 : i.frames()); ++f)
        for (int c = v; c < (v < 0 ? 0 : v + 1); ++c) {
          stored += static_cast<double>(file.stored_bytes(f, c));
          values += static_cast<double>(points * i.real_bytes);
        }
      char ratio[96];
      std::snprintf(ratio, sizeof ratio, ", %.2fx (%.0f of %.0f bytes)", stored > 0 ? values / stored : 0.0, stored, values);
      const std::string spec = v < 0 ? Compression::parse(i.compression).codec == Compression::Codec::Zstd ? "lossless:zstd" : "lossless" : i.compression;
      j["compression"][v < 0 ? std::string("grid") : i.variables[static_cast<std::size_t>(v)]] =
          std::string(zstd ? "shuffle+zstd, " : "shuffle+deflate, ") + spec + ratio;
    }
  }
#endif
  if (check) {
    const std::string damage = pio::check_block_file(i);
    if (!damage.empty()) throw FormatError(damage);
    j["checked"] = true;
  }
  return j;
}

// A PLOT3D grid: its form and layout, blocks and dimensions; --check reads every coordinate
// (a formatted value that is not a number is named with its block and byte).
nlohmann::json describe_plot3d(const plot3d::Grid& g, bool check) {
  const std::string& path = g.path;
  nlohmann::json j;
  j["file"] = path;
  j["format"] = "blocks-plot3d";
  j["form"] = g.formatted ? "formatted" : "binary";
  j["layout"] = g.multi ? "multi-grid" : g.native ? "CFL3D (dimensions before each block, no count)" : "single-grid";
  if (g.formatted)  // how the values were written: a WRITE per block, or one for the whole grid
    j["dialect"] = g.stream ? "one read for every block (a block may start on the line where the one before ended)"
                            : "a read per block (each block's values start on a line of their own)";
  j["dimensions"] = g.dimensions;
  j["iblank"] = g.iblank;
  j["precision"] = g.formatted ? "text" : g.real_bytes == 8 ? "double" : "single";
  if (!g.formatted) j["byte_order"] = g.big_endian ? "big" : "little";
  j["records"] = g.records ? "fortran" : "none";
  j["file_bytes"] = FileSource(path).size();
  std::int64_t points = 0;
  nlohmann::json blocks = nlohmann::json::array();
  for (const auto& b : g.blocks) {
    points += b.points();
    blocks.push_back({{"id", b.id}, {"dims", b.dims}});
  }
  j["block_count"] = g.blocks.size();
  j["points"] = points;
  j["blocks"] = blocks;
  j["variables"] = nlohmann::json::array();
  j["grid"] = true;
  j["frames"] = 0;
  j["times"] = nlohmann::json::array();
  j["integrity"] = "OK";
  if (check) {  // every coordinate read, and finite
    std::array<std::vector<double>, 3> xyz;
    for (std::size_t b = 0; b < g.blocks.size(); ++b) {
      plot3d::read_block(g, b, xyz);
      const auto& d = g.blocks[b].dims;
      const std::int64_t n = g.blocks[b].points();
      for (int c = 0; c < g.dimensions; ++c)
        for (std::int64_t i = 0; i < n; ++i) {
          const double x = xyz[static_cast<std::size_t>(c)][static_cast<std::size_t>(i)];
          if (std::isfinite(x)) continue;
          const std::string point = "(" + std::to_string(i % d[0] + 1) + ", " + std::to_string(i / d[0] % d[1] + 1) + ", " +
                                    std::to_string(i / (d[0] * d[1]) + 1) + ")";
          throw FormatError(path, "block " + std::to_string(g.blocks[b].id) + ", " + "xyz"[c] + " at point " + point,
                            g.formatted ? g.coords_at[b] : g.coords_at[b] + (c * n + i) * g.real_bytes,
                            (g.formatted ? "a coordinate of the block whose values start here is " : "the coordinate is ") +
                                std::string(std::isnan(x) ? "NaN" : "infinite"));
        }
    }
    j["checked"] = true;
  }
  return j;
}

// A PLOT3D solution (q or function file): its form, blocks, variables and, for a q file, the
// free-stream values of its header; --check reads every value.
nlohmann::json describe_plot3d_solution(const plot3d::Solution& s, bool check) {
  nlohmann::json j;
  j["file"] = s.path;
  j["format"] = "blocks-plot3d-solution";
  j["kind"] = s.function ? "function" : "q";
  j["form"] = s.formatted ? "formatted" : "binary";
  j["layout"] = s.multi ? "multi-grid" : "single-grid";
  j["dimensions"] = s.dimensions;
  j["iblank"] = false;
  j["precision"] = s.formatted ? "text" : s.real_bytes == 8 ? "double" : "single";
  if (!s.formatted) j["byte_order"] = s.big_endian ? "big" : "little";
  j["records"] = s.records ? "fortran" : "none";
  j["file_bytes"] = FileSource(s.path).size();
  std::int64_t points = 0;
  nlohmann::json blocks = nlohmann::json::array();
  for (const auto& b : s.blocks) {
    points += b.points();
    blocks.push_back({{"id", b.id}, {"dims", b.dims}});
  }
  j["block_count"] = s.blocks.size();
  j["points"] = points;
  j["blocks"] = blocks;
  j["variables"] = s.names();
  j["grid"] = false;
  j["frames"] = 1;
  j["times"] = {s.time};
  if (!s.function) j["free_stream"] = {{"mach", s.mach}, {"alpha", s.alpha}, {"reynolds", s.reynolds}, {"time", s.time}};
  j["integrity"] = "OK";
  if (check) {
    std::vector<std::vector<double>> values;
    for (std::size_t b = 0; b < s.blocks.size(); ++b) plot3d::read_solution_block(s, b, values);
    j["checked"] = true;
  }
  return j;
}

// A CGNS file, through the CGNS helper: its structured zones (as blocks), the variables and
// times of its vertex flow solutions (the frames; or of its cell-centred ones when it has no
// vertex solution, the blocks then being the zones' cells), and how many other solutions it
// holds.
nlohmann::json describe_cgns(const std::string& path) {
  std::string why = "not an HDF5 file (ADF)";
  if (pio::cgns_files::is_cgns_hdf5(path)) {
    BlockFileInfo info;
    pio::cgns_files::describe(path, info, why);
  }
  std::string text;
  run_cgns_helper({"describe", path}, nullptr, [&](int fd) {
    char buf[65536];
    for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) > 0;) text.append(buf, static_cast<std::size_t>(n));
  });
  const auto h = nlohmann::json::parse(text);
  nlohmann::json j;
  j["file"] = path;
  j["format"] = "blocks-cgns";
  j["precision"] = "double";
  j["records"] = "none";
  j["file_bytes"] = FileSource(path).size();
  std::int64_t points = 0;
  for (const auto& b : h["blocks"]) points += b["dims"][0].get<std::int64_t>() * b["dims"][1].get<std::int64_t>() * b["dims"][2].get<std::int64_t>();
  j["block_count"] = h["blocks"].size();
  j["points"] = points;
  j["blocks"] = h["blocks"];
  j["variables"] = h["variables"];
  j["grid"] = true;
  j["frames"] = h["times"].size();
  j["times"] = h["times"];
  j["bases"] = h["bases"];
  j["location"] = h["location"];
  j["skipped_solutions"] = h["skipped_solutions"];
  j["reading"] = "CGNS's library, on rank 0: " + why;
  j["integrity"] = "OK";
  return j;
}

void print_blocks(const nlohmann::json& j, int max_times) {
  if (j.contains("form"))  // PLOT3D
    std::printf("%s: PLOT3D %s, %s, %s, %dD%s%s%s, %lld bytes\n", j["file"].get<std::string>().c_str(),
                !j.contains("kind") ? "grid" : j["kind"] == "q" ? "q file" : "function file", j["form"].get<std::string>().c_str(),
                j["layout"].get<std::string>().c_str(), j["dimensions"].get<int>(), j["iblank"].get<bool>() ? ", IBLANK" : "",
                j["precision"] == "text" ? "" : (", " + j["precision"].get<std::string>() + " precision, " + j["byte_order"].get<std::string>() + "-endian").c_str(),
                j["records"] == "fortran" ? ", Fortran records" : "", static_cast<long long>(j["file_bytes"].get<std::int64_t>()));
  else
    std::printf("%s: %s, %s precision%s, %lld bytes\n", j["file"].get<std::string>().c_str(), j["format"].get<std::string>().c_str(),
                j["precision"].get<std::string>().c_str(), j["records"] == "fortran" ? ", Fortran records" : "",
                static_cast<long long>(j["file_bytes"].get<std::int64_t>()));
  if (j.contains("dialect")) std::printf("  values: %s\n", j["dialect"].get<std::string>().c_str());
  if (j.contains("reading")) std::printf("  read by %s\n", j["reading"].get<std::string>().c_str());
  std::printf("  %zu blocks, %lld points%s\n", j["blocks"].size(), static_cast<long long>(j["points"].get<std::int64_t>()),
              j["grid"].get<bool>() ? ", with grid coordinates" : "");
  std::size_t shown = 0;
  for (const auto& b : j["blocks"]) {
    if (shown++ == 8) {
      std::printf("  ...\n");
      break;
    }
    std::printf("  block %-8lld %lld x %lld x %lld\n", static_cast<long long>(b["id"].get<std::int64_t>()),
                static_cast<long long>(b["dims"][0].get<std::int64_t>()), static_cast<long long>(b["dims"][1].get<std::int64_t>()),
                static_cast<long long>(b["dims"][2].get<std::int64_t>()));
  }
  std::string vars;
  for (const auto& v : j["variables"]) vars += (vars.empty() ? "" : ", ") + v.get<std::string>();
  std::printf("  variables: %s\n", vars.c_str());
  std::printf("  %lld frame%s", static_cast<long long>(j["frames"].get<std::int64_t>()), j["frames"].get<std::int64_t>() == 1 ? "" : "s");
  const auto& t = j["times"];
  for (std::size_t k = 0; k < t.size() && static_cast<int>(k) < max_times; ++k) std::printf("%s%g", k ? ", " : ": t = ", t[k].get<double>());
  std::printf("%s\n", t.size() > static_cast<std::size_t>(max_times) ? ", ..." : "");
  if (j.contains("compression")) {
    std::printf("  compressed\n");
    std::string all;
    for (const auto& [k, v] : j["compression"].items()) {
      std::printf("    %-17s %s\n", k.c_str(), v.get<std::string>().c_str());
      all += v.get<std::string>();
    }
    say_zstd_plugin(all, "    ");
  }
  if (j.contains("free_stream"))
    std::printf("  Mach %g, angle of attack %g, Reynolds number %g\n", j["free_stream"]["mach"].get<double>(),
                j["free_stream"]["alpha"].get<double>(), j["free_stream"]["reynolds"].get<double>());
  if (j.contains("location") && j["location"] == "CellCenter")
    std::printf("  cell-centred solutions: each block is its zone's cells, at the cells' centres\n");
  if (j.contains("skipped_solutions") && j["skipped_solutions"].get<int>() > 0)
    std::printf("  %d flow solutions at other locations (%s): not read\n", j["skipped_solutions"].get<int>(),
                j["location"] == "CellCenter" ? "not cell-centred" : "not at the vertices");
  if (j.contains("checked")) std::printf("  every record and value checked\n");
}

// Every mesh record read, IKLE checked (node numbers in 1..NPOIN), a piece at a time: the
// mesh is never held whole.
void check_mesh(const serafin::Reader& r) {
  const auto& h = r.header();
  constexpr std::int64_t kPiece = std::int64_t{1} << 16;
  std::vector<std::int32_t> ints(static_cast<std::size_t>(kPiece * h.ndp));
  std::vector<double> xy(static_cast<std::size_t>(kPiece));
  for (std::int64_t e = 0; e < h.nelem; e += kPiece) r.read_ikle_rows(e, std::min(kPiece, h.nelem - e), ints.data());
  for (std::int64_t i = 0; i < h.npoin; i += kPiece) {
    const std::int64_t n = std::min(kPiece, h.npoin - i);
    r.read_ipobo(i, n, ints.data());
    r.read_coordinates(false, i, n, xy.data());
    r.read_coordinates(true, i, n, xy.data());
  }
}

// Values that are not finite (NaN, infinities: a solver that diverged) among variable
// records [first, end) (record k: frame k / nvar, variable k % nvar), tested as stored: a
// value is not finite when its exponent bits are all ones, tested with the exponent's mask in
// the file's byte order. W: the stored word (4 or 8 bytes).
struct NonFinite {
  std::int64_t count = 0;
  std::int64_t record = -1;  // the first one's record and node (0-based)
  std::int64_t node = -1;
};
template <class W>
NonFinite non_finite_in(const serafin::Reader& r, std::int64_t first, std::int64_t end) {
  const auto& h = r.header();
  const W native = sizeof(W) == 4 ? W(0x7f800000u) : W(0x7ff0000000000000ull);
  const W mask = h.byte_order != native_byte_order() ? bswap(native) : native;
  // A piece the size of a core's L2 cache: the words are tested while the read has them there.
  constexpr std::int64_t kPiece = (std::int64_t{256} << 10) / static_cast<std::int64_t>(sizeof(W));
  std::vector<W> buf(static_cast<std::size_t>(std::min(kPiece, h.npoin)));
  NonFinite out;
  for (std::int64_t k = first; k < end; ++k)
    for (std::int64_t at = 0; at < h.npoin; at += kPiece) {
      const std::int64_t n = std::min(kPiece, h.npoin - at);
      r.read_encoded(k / h.nvar(), static_cast<int>(k % h.nvar()), at, n, buf.data());
      std::size_t bad = 0;
      for (std::int64_t i = 0; i < n; ++i) bad += (buf[static_cast<std::size_t>(i)] & mask) == mask;  // vectorised: no branch
      if (bad == 0) continue;
      if (out.count == 0)
        for (std::int64_t i = 0; i < n && out.record < 0; ++i)
          if ((buf[static_cast<std::size_t>(i)] & mask) == mask) {
            out.record = k;
            out.node = at + i;
          }
      out.count += static_cast<std::int64_t>(bad);
    }
  return out;
}

// Every value record of a SERAFIN file, after `first` (the mesh's check) on this thread: a
// second thread reads the later half of the records meanwhile (the kernel's copy of the
// file, most of the time, then runs on two cores).
template <class W>
NonFinite non_finite(const serafin::Reader& r, const std::function<void()>& first) {
  const std::int64_t records = r.frame_count() * r.header().nvar();
  const std::int64_t bytes = records * r.header().npoin * static_cast<std::int64_t>(sizeof(W));
  if (records < 2 || bytes < (std::int64_t{16} << 20) || std::thread::hardware_concurrency() < 2) {
    first();
    return non_finite_in<W>(r, 0, records);
  }
  auto later = std::async(std::launch::async, [&r, records] { return non_finite_in<W>(r, records / 2, records); });
  first();  // an error here or in the first half is the file's first
  NonFinite out = non_finite_in<W>(r, 0, records / 2);
  const NonFinite second = later.get();
  if (out.count == 0) {
    out.record = second.record;
    out.node = second.node;
  }
  out.count += second.count;
  return out;
}

nlohmann::json describe(const std::string& path, bool check, bool stats) {
  if (pio::is_block_file(path)) return describe_blocks(path, check);
  if (cgns_file_name(path) && !pio::cgns_files::is_mesh_result(path)) return describe_cgns(path);
  if (!pio::looks_like_hdf5(path) && !serafin::looks_like_serafin(path)) {
    std::optional<plot3d::Solution> s;
    if (plot3d::is_plot3d(path)) {
      std::optional<plot3d::Grid> g;
      try {
        g = plot3d::read_header(path);
      } catch (const FormatError&) {  // a formatted q file's first lines look like a grid's
        try {
          s = plot3d::read_solution(path);
        } catch (const FormatError&) {
        }
        if (!s) throw;
      }
      if (g) return describe_plot3d(*g, check);  // a grid: a damaged value is its error
    } else {
      try {
        s = plot3d::read_solution(path);
      } catch (const FormatError&) {  // not one: read below as a result file, and refused as such
      }
    }
    if (s) return describe_plot3d_solution(*s, check);
  }
  const auto file = pio::ResultFile::open(path);
  const serafin::Reader* r = file->serafin_reader();  // null for HDF5
  const auto& h = file->header();
  nlohmann::json j;
  j["file"] = path;
  j["format"] = file->format();
  j["title"] = printable(trimmed(h.title.substr(0, 72)));
  j["title_suffix"] = printable(h.title.substr(std::min<std::size_t>(72, h.title.size())));
  j["precision"] = to_string(h.precision);
  j["byte_order"] = to_string(h.byte_order);
  j["file_bytes"] = file->file_bytes();
  if (r) {
    j["header_bytes"] = r->layout().header_bytes;
    j["frame_bytes"] = r->layout().frame_bytes;
  }
  j["nelem"] = h.nelem;
  j["npoin"] = h.npoin;
  j["ndp"] = h.ndp;
  j["nplan"] = h.nplan();
  j["element_type"] = element_type_name(h.ndp, h.nplan());
  j["iparam"] = h.iparam;
  j["nptfr"] = h.iparam[7];
  j["nptir"] = h.iparam[8];
  j["date"] = h.date ? nlohmann::json(*h.date) : nlohmann::json(nullptr);
  nlohmann::json vars = nlohmann::json::array();
  for (const auto& v : h.variables) vars.push_back({{"name", printable(trimmed(v.name))}, {"unit", printable(trimmed(v.unit))}});
  j["variables"] = vars;
  j["frames"] = file->frame_count();
  j["times"] = file->times();
  j["integrity"] = r ? serafin::to_string(r->integrity().status) : "OK";
  j["trailing_bytes"] = r ? r->integrity().trailing_bytes : 0;
  for (const auto& [k, v] : file->extras()) {
    if (k.rfind("provenance.", 0) == 0)
      j["provenance"][k.substr(11)] = v;
    else if (k.rfind("compression.", 0) == 0)
      j["compression"][k.substr(12)] = v;
    else
      j[k] = v;
  }
  if (check) {
    // Full check: every mesh record and every value record; values that are not numbers
    // (NaN, infinities: a solver that diverged) are counted.
    NonFinite bad;
    if (r) {
      r->source().advise_sequential();
      const auto mesh = [r] { check_mesh(*r); };
      bad = h.precision == Precision::Single ? non_finite<std::uint32_t>(*r, mesh) : non_finite<std::uint64_t>(*r, mesh);
    } else {
      file->read_mesh();
      std::vector<float> buf(static_cast<std::size_t>(h.npoin));
      for (std::int64_t f = 0; f < file->frame_count(); ++f)
        for (int v = 0; v < h.nvar(); ++v) {
          file->read_values(f, v, 0, h.npoin, buf.data());
          for (std::size_t i = 0; i < buf.size(); ++i)
            if (!std::isfinite(buf[i]) && bad.count++ == 0) {
              bad.record = f * h.nvar() + v;
              bad.node = static_cast<std::int64_t>(i);
            }
        }
    }
    nlohmann::json first_bad;
    if (bad.count > 0)
      first_bad = {{"frame", bad.record / h.nvar() + 1},
                   {"variable", trimmed(h.variables[static_cast<std::size_t>(bad.record % h.nvar())].name)},
                   {"node", bad.node + 1}};
    j["checked"] = true;
    j["non_finite_values"] = bad.count;
    if (bad.count > 0) j["first_non_finite"] = first_bad;
  }
  if (stats) {
    // Minimum, maximum and mean of every variable in every frame.
    nlohmann::json all = nlohmann::json::array();
    std::vector<double> buf(static_cast<std::size_t>(h.npoin));
    for (std::int64_t f = 0; f < file->frame_count() && h.npoin > 0; ++f) {
      nlohmann::json frame = nlohmann::json::array();
      for (int v = 0; v < h.nvar(); ++v) {
        file->read_values(f, v, 0, h.npoin, buf.data());
        // Over the finite values; NaN and infinities are counted apart.
        double lo = std::numeric_limits<double>::infinity(), hi = -lo, sum = 0;
        std::int64_t n = 0;
        for (double x : buf) {
          if (!std::isfinite(x)) continue;
          lo = std::min(lo, x);
          hi = std::max(hi, x);
          sum += x;
          ++n;
        }
        nlohmann::json st = {{"non_finite", static_cast<std::int64_t>(buf.size()) - n}};
        if (n > 0) {
          st["min"] = lo;
          st["max"] = hi;
          st["mean"] = sum / static_cast<double>(n);
        }
        frame.push_back(st);
      }
      all.push_back(frame);
    }
    j["stats"] = all;
  }
  return j;
}

void print_text(const nlohmann::json& j, int max_times) {
  std::printf("%s\n", j["file"].get<std::string>().c_str());
  std::printf("  title      %s\n", j["title"].get<std::string>().c_str());
  if (j["format"] == "serafin")
    std::printf("  format     SERAFIN, %s precision, %s-endian, %s bytes (header %s, frame %s)\n",
                j["precision"].get<std::string>().c_str(), j["byte_order"].get<std::string>().c_str(),
                thousands(j["file_bytes"].get<long long>()).c_str(), thousands(j["header_bytes"].get<long long>()).c_str(),
                thousands(j["frame_bytes"].get<long long>()).c_str());
  else if (j["format"] == "cgns")
    std::printf("  format     CGNS (one unstructured zone), %s precision, %s bytes; from %s-endian SERAFIN\n",
                j["precision"].get<std::string>().c_str(), thousands(j["file_bytes"].get<long long>()).c_str(),
                j["byte_order"].get<std::string>().c_str());
  else if (j["format"] == "tecplot")
    std::printf("  format     Tecplot binary (#!TDV%s, %s zones, one a frame), %s precision, %s bytes\n", j.value("tecplot_version", "?").c_str(),
                j.value("zone_type", "?").c_str(), j["precision"].get<std::string>().c_str(), thousands(j["file_bytes"].get<long long>()).c_str());
  else
    std::printf("  format     HDF5 (VTKHDF %s), %s precision, %s bytes; from %s-endian SERAFIN\n",
                j.value("vtkhdf_version", "?").c_str(), j["precision"].get<std::string>().c_str(),
                thousands(j["file_bytes"].get<long long>()).c_str(), j["byte_order"].get<std::string>().c_str());
  const int nplan = j["nplan"].get<int>();
  std::printf("  mesh       %s, NELEM %s %ss (NDP %d), NPOIN %s", nplan > 1 ? "3D" : "2D",
              thousands(j["nelem"].get<long long>()).c_str(), j["element_type"].get<std::string>().c_str(),
              j["ndp"].get<int>(), thousands(j["npoin"].get<long long>()).c_str());
  if (nplan > 1) std::printf(", NPLAN %d", nplan);
  std::printf("\n  IPARAM    ");
  for (auto& v : j["iparam"]) std::printf(" %d", v.get<int>());
  std::printf("\n");
  if (!j["date"].is_null()) {
    auto d = j["date"];
    std::printf("  date       %04d-%02d-%02d %02d:%02d:%02d\n", d[0].get<int>(), d[1].get<int>(), d[2].get<int>(),
                d[3].get<int>(), d[4].get<int>(), d[5].get<int>());
  }
  std::printf("  variables  %zu\n", j["variables"].size());
  int i = 0;
  for (auto& v : j["variables"])
    std::printf("    %2d  %-16s %s\n", ++i, v["name"].get<std::string>().c_str(), v["unit"].get<std::string>().c_str());
  const auto& times = j["times"];
  std::printf("  frames     %lld", j["frames"].get<long long>());
  if (!times.empty()) {
    std::printf(", t =");
    const std::size_t n = times.size();
    for (std::size_t k = 0; k < n; ++k) {
      if (static_cast<int>(k) == max_times / 2 && n > static_cast<std::size_t>(max_times)) {
        std::printf(" ...");
        k = n - static_cast<std::size_t>(max_times / 2);
      }
      std::printf(" %g", times[k].get<double>());
    }
  }
  std::printf("\n  integrity  %s", j["integrity"].get<std::string>().c_str());
  if (j["trailing_bytes"].get<long long>() > 0)
    std::printf(" (%lld bytes after the last whole frame)", j["trailing_bytes"].get<long long>());
  if (j.contains("checked")) std::printf(", every record checked");
  if (j.value("non_finite_values", 0LL) > 0) {
    const auto& b = j["first_non_finite"];
    std::printf("; %s values NaN or infinite (the first: frame %lld, %s, node %lld)",
                thousands(j["non_finite_values"].get<long long>()).c_str(), b["frame"].get<long long>(),
                b["variable"].get<std::string>().c_str(), b["node"].get<long long>());
  }
  std::printf("\n");
  if (j.contains("compression")) {
    std::printf("  compressed\n");
    std::string all;
    for (const auto& [k, v] : j["compression"].items()) {
      std::printf("    %-17s %s\n", k.c_str(), v.get<std::string>().c_str());
      all += v.get<std::string>();
    }
    say_zstd_plugin(all, "    ");
  }
  if (j.contains("provenance")) {
    std::printf("  provenance\n");
    for (const auto& [k, v] : j["provenance"].items()) std::printf("    %-17s %s\n", k.c_str(), v.get<std::string>().c_str());
  }
  if (j.contains("stats")) {
    std::printf("  statistics (min / mean / max)\n");
    for (std::size_t f = 0; f < j["stats"].size(); ++f) {
      std::printf("    frame %zu, t = %g\n", f + 1, j["times"][f].get<double>());
      for (std::size_t v = 0; v < j["stats"][f].size(); ++v) {
        const auto& s = j["stats"][f][v];
        const auto bad = s["non_finite"].get<long long>();
        std::printf("      %-16s", j["variables"][v]["name"].get<std::string>().c_str());
        if (s.contains("min"))
          std::printf(" %14.6g %14.6g %14.6g", s["min"].get<double>(), s["mean"].get<double>(), s["max"].get<double>());
        if (bad > 0) std::printf("  (%s values NaN or infinite)", thousands(bad).c_str());
        std::printf("\n");
      }
    }
  }
}

}  // namespace

Runner add_info(CLI::App& app, Common& common) {
  auto opt = std::make_shared<InfoOptions>();
  auto* sub = app.add_subcommand("info", "Header, sizes, variables, frames and integrity of SERAFIN and HDF5 result files and of multi-block files");
  sub->add_option("files", opt->files, "files to describe")->required()->check(CLI::ExistingFile);
  sub->add_flag("--check", opt->check, "also read every record (IKLE range, value records)");
  sub->add_flag("--stats", opt->stats, "minimum, mean and maximum of every variable in every frame (reads all values)");
  sub->add_flag("--json", common.json, "print a JSON array on stdout");
  return [opt, &common]() {
    nlohmann::json all = nlohmann::json::array();
    int failures = 0;
    for (const auto& f : opt->files) {
      try {
        auto j = describe(f, opt->check, opt->stats);
        if (common.json)
          all.push_back(j);
        else if (j["format"].get<std::string>().rfind("blocks-", 0) == 0)
          print_blocks(j, opt->max_times);
        else
          print_text(j, opt->max_times);
        if (j["integrity"] != "OK" && !common.json)
          std::fprintf(stderr, "anabranch info: warning: %s: %s\n", f.c_str(), j["integrity"].get<std::string>().c_str());
      } catch (const Error& e) {
        ++failures;
        if (!in_library()) std::fprintf(stderr, "anabranch info: error: %s\n", e.what());
        if (common.json) all.push_back({{"file", f}, {"error", e.what()}});
      }
    }
    if (common.json) print_json(all);
    return failures ? 1 : 0;
  };
}

}  // namespace anabranch::cli
