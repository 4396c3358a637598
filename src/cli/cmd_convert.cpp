// anabranch convert IN OUT: SERAFIN <-> HDF5 (VTKHDF + XDMF sidecar) -> VTU. The output
// format comes from OUT's extension or --to. Frames stream: one block of one variable at a
// time per rank. Under mpiexec the ranks share the nodes and write collectively.
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include <chrono>
#include <cstring>
#include <cstdio>
#include <optional>

#include "cli/commands.hpp"
#include "cli/cgns_helper.hpp"
#include "core/error.hpp"
#include "core/outputs.hpp"
#include "core/progress.hpp"
#include "core/provenance.hpp"
#include "formats/serafin.hpp"
#include "blockformats/plot3d.hpp"
#include "blockformats/vts.hpp"
#include "formats/vtu.hpp"
#include "layouts/block_io.hpp"
#include "parallel/mpi_util.hpp"
#include "h5/cgns_files.hpp"
#include "h5/results.hpp"
#include "io/strategy.hpp"
#include "h5/vtkhdf.hpp"
#include "layouts/writer.hpp"

namespace anabranch::cli {
namespace {

struct ConvertOptions {
  std::string input, output, to, strategy = "aggregated", compress;
  std::int64_t frame = -1;
  std::vector<std::string> solutions;  // a PLOT3D grid's q or function files: one frame each
};

bool ends_with(const std::string& s, const std::string& e) {
  return s.size() >= e.size() && s.compare(s.size() - e.size(), e.size(), e) == 0;
}

std::string target_format(const ConvertOptions& o) {
  if (!o.to.empty()) return o.to;
  if (hdf5_file_name(o.output)) return "hdf5";
  std::string lower = o.output;
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (ends_with(lower, ".vtu")) return "vtu";
  if (ends_with(lower, ".cgns")) return "cgns";
  if (ends_with(lower, ".plt")) return "tecplot";
  for (const char* e : {".slf", ".srf", ".sel", ".res", ".geo", ".selafin", ".serafin"})
    if (ends_with(lower, e)) return "serafin";
  throw UsageError("cannot tell the output format from the name " + o.output + ": give --to serafin, hdf5, cgns, tecplot or vtu");
}

// Every rank writes its block of nodes; T is the file's precision.
template <class T>
void convert_parallel(MPI_Comm comm, const pio::ResultFile& in, const std::string& output, const std::string& strategy,
                      const Compression& compress) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  const serafin::Header& h = in.header();
  const std::int64_t first = h.npoin * rank / size, last = h.npoin * (rank + 1) / size, n = last - first;
  std::vector<std::int32_t> ids(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) ids[static_cast<std::size_t>(i)] = static_cast<std::int32_t>(first + i + 1);
  pio::OutputDescription out;
  out.header = h;
  Mesh mesh;
  pio::collective(comm, [&] {
    if (rank != 0) return;
    if (in.format() != std::string("cgns") && in.format() != std::string("tecplot")) {
      out.geometry = in.name();  // every rank copies its share of the input's mesh
    } else {
      mesh = in.read_mesh();
      out.mesh = &mesh;
    }
  });
  pio::WriterOptions wo;
  wo.strategy = strategy;
  wo.atomic = true;
  wo.compress = compress;
  wo.frames = in.frame_count();
  pio::Writer w(comm, output, out, ids.data(), n, wo);
  std::vector<std::vector<T>> values(static_cast<std::size_t>(h.nvar()), std::vector<T>(static_cast<std::size_t>(n)));
  std::vector<const T*> ptrs;
  for (auto& v : values) ptrs.push_back(v.data());
  const std::int64_t frames = in.frame_count();
  Progress progress("convert", frames);
  std::vector<double> times;
  if (rank == 0) times = in.times();
  times.resize(static_cast<std::size_t>(frames));
  MPI_Bcast(times.data(), static_cast<int>(frames), MPI_DOUBLE, 0, comm);
  const serafin::Reader* reader = in.serafin_reader();
  for (std::int64_t f = 0; f < frames; ++f) {
    // The kernel reads this rank's block of the next frames while this one is written.
    if (reader && f + 1 < frames) reader->prefetch(f + 1, std::min<std::int64_t>(2, frames - f - 1), first, n);
    pio::collective(comm, [&] {
      for (int v = 0; v < h.nvar(); ++v) in.read_values(f, v, first, n, values[static_cast<std::size_t>(v)].data());
    });
    w.write_frame(times[static_cast<std::size_t>(f)], ptrs.data());
    if (rank == 0) progress.update(f + 1);
  }
  w.close();
  if (rank == 0) progress.finish();
}

// Alone (no launcher) to SERAFIN: no MPI. A SERAFIN input's mesh records are streamed and
// its frames copied a variable at a time as they are encoded, reading ahead.
void convert_alone(const pio::ResultFile& in, const std::string& output) {
  const serafin::Reader* reader = in.serafin_reader();
  if (reader == nullptr) {  // HDF5
    pio::write_serafin_copy(in, output);
    return;
  }
  const serafin::Header& h = in.header();
  serafin::Writer w(output, h, *reader);
  const std::int64_t frames = in.frame_count();
  const auto times = in.times();
  std::vector<unsigned char> values(static_cast<std::size_t>(h.npoin * real_size(h.precision)));
  Progress progress("convert", frames);
  for (std::int64_t f = 0; f < frames; ++f) {
    if (f + 1 < frames) reader->prefetch(f + 1, std::min<std::int64_t>(2, frames - f - 1));
    w.begin_frame(times[static_cast<std::size_t>(f)]);
    for (int v = 0; v < h.nvar(); ++v) {
      reader->read_encoded(f, v, 0, h.npoin, values.data());
      w.write_variable_encoded(values.data());
    }
    progress.update(f + 1);
  }
  w.close();
  progress.finish();
}

// Alone, an HDF5 output is written by HDF5's POSIX driver: no MPI at all. A frame at a time.
template <class T>
void convert_alone_hdf5(const pio::ResultFile& in, const std::string& output, const Compression& compress) {
  const serafin::Header& h = in.header();
  pio::vtkhdf::LoneOutput file(output, h, {{"strategy", "serial"}}, compress);
  if (const serafin::Reader* r = in.serafin_reader()) {
    file.out().write_mesh(r);  // streamed from the file: the mesh is never held whole
  } else if (in.format() == std::string("hdf5")) {
    const serafin::Reader view(pio::vtkhdf::serafin_view(in.name()));  // the same, from the HDF5 file's arrays
    file.out().write_mesh(&view);
  } else {
    const Mesh mesh = in.read_mesh();
    file.out().write_mesh(&mesh);
  }
  const std::int64_t frames = in.frame_count();
  const auto times = in.times();
  std::vector<T> values(static_cast<std::size_t>(h.nvar() * h.npoin));
  Progress progress("convert", frames);
  for (std::int64_t f = 0; f < frames; ++f) {
    for (int v = 0; v < h.nvar(); ++v) in.read_values(f, v, 0, h.npoin, values.data() + static_cast<std::size_t>(v) * static_cast<std::size_t>(h.npoin));
    file.out().write_frame(times[static_cast<std::size_t>(f)], 0, h.npoin, values.data());
    progress.update(f + 1);
  }
  progress.finish();
  file.commit();
}

// --frame K, 0-based; a negative K counts from the end (-1, the default: the last).
std::int64_t chosen_frame(std::int64_t k, std::int64_t frames, const std::string& name) {
  const std::int64_t f = k < 0 ? frames + k : k;
  if (f < 0 || f >= frames)
    throw UsageError("--frame " + std::to_string(k) + ": " + name + " holds " + std::to_string(frames) + " frames (0.." +
                     std::to_string(frames - 1) + ", or -" + std::to_string(frames) + "..-1 from the end)");
  return f;
}

void convert_vtu(const pio::ResultFile& in, const std::string& output, std::int64_t frame) {
  const serafin::Header& h = in.header();
  const std::int64_t frames = in.frame_count();
  if (frames == 0 && h.nvar() > 0) throw UsageError(in.name() + " holds no frame to write");
  if (frames > 0) frame = chosen_frame(frame, frames, in.name());
  const Mesh mesh = in.read_mesh();
  const double time = frames > 0 ? in.times()[static_cast<std::size_t>(frame)] : 0.0;
  vtu::write(output, h, mesh, time, [&](int v, std::vector<double>& out) {
    out.resize(static_cast<std::size_t>(h.npoin));
    in.read_values(frame, v, 0, h.npoin, out.data());
  });
}

std::int64_t size_of(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 ? static_cast<std::int64_t>(st.st_size) : 0;
}

// Multi-block files: to the other block format (every block whole, dealt to the ranks), or
// one frame to a VTK MultiBlock index (.vtm) and one StructuredGrid (.vts) per block.
// An output named as a PLOT3D grid.
bool plot3d_name(const std::string& path) {
  std::string lower = path;
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (const char* e : {".xyz", ".x", ".g", ".p3d", ".grd"})
    if (ends_with(lower, e)) return true;
  return false;
}

// An input PLOT3D grid, whatever its name: told by its first bytes (never a SERAFIN or HDF5 file).
bool plot3d_grid(const std::string& path) {
  return file_exists(path) && !pio::looks_like_hdf5(path) && !serafin::looks_like_serafin(path) && plot3d::is_plot3d(path);
}

// Rank 0's v on every rank.
void share_from_root(MPI_Comm comm, std::vector<std::int64_t>& v) {
  long long n = static_cast<long long>(v.size());
  MPI_Bcast(&n, 1, MPI_LONG_LONG, 0, comm);
  v.resize(static_cast<std::size_t>(n));
  MPI_Bcast(v.data(), static_cast<int>(n), MPI_INT64_T, 0, comm);
}

// Rank 0's grid description on every rank: its blocks and where each block's values lie.
void broadcast_grid(MPI_Comm comm, plot3d::Grid& g) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  std::vector<std::int64_t> v;
  if (rank == 0) {
    v = {g.real_bytes, g.big_endian, g.records, g.iblank, g.multi, g.dimensions, g.formatted, g.native, g.stream,
         static_cast<std::int64_t>(g.blocks.size()), static_cast<std::int64_t>(g.coords_at.size()),
         static_cast<std::int64_t>(g.coords_end.size()), static_cast<std::int64_t>(g.coords_skip.size())};
    for (const auto& b : g.blocks) v.insert(v.end(), {b.id, b.dims[0], b.dims[1], b.dims[2]});
    v.insert(v.end(), g.coords_at.begin(), g.coords_at.end());
    v.insert(v.end(), g.coords_end.begin(), g.coords_end.end());
    v.insert(v.end(), g.coords_skip.begin(), g.coords_skip.end());
  }
  share_from_root(comm, v);
  if (rank == 0) return;
  auto at = v.begin();
  auto next = [&] { return *at++; };
  g.real_bytes = static_cast<int>(next());
  g.big_endian = next() != 0;
  g.records = next() != 0;
  g.iblank = next() != 0;
  g.multi = next() != 0;
  g.dimensions = static_cast<int>(next());
  g.formatted = next() != 0;
  g.native = next() != 0;
  g.stream = next() != 0;
  const auto nb = next(), na = next(), ne = next(), ns = next();
  g.blocks.resize(static_cast<std::size_t>(nb));
  for (auto& b : g.blocks) {
    b.id = next();
    for (auto& d : b.dims) d = next();
  }
  g.coords_at.assign(at, at + na);
  g.coords_end.assign(at + na, at + na + ne);
  g.coords_skip.assign(at + na + ne, at + na + ne + ns);
}

// Rank 0's solution header on every rank: its form, blocks, free-stream values and where each
// block's values lie.
void broadcast_solution(MPI_Comm comm, plot3d::Solution& s) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  std::vector<std::int64_t> v;
  std::array<double, 4> fs{s.mach, s.alpha, s.reynolds, s.time};
  if (rank == 0) {
    v = {s.function, s.nvar, s.real_bytes, s.big_endian, s.records, s.multi, s.dimensions, s.formatted,
         static_cast<std::int64_t>(s.blocks.size()), static_cast<std::int64_t>(s.values_at.size()),
         static_cast<std::int64_t>(s.values_end.size())};
    for (const auto& b : s.blocks) v.insert(v.end(), {b.id, b.dims[0], b.dims[1], b.dims[2]});
    v.insert(v.end(), s.values_at.begin(), s.values_at.end());
    v.insert(v.end(), s.values_end.begin(), s.values_end.end());
  }
  share_from_root(comm, v);
  MPI_Bcast(fs.data(), 4, MPI_DOUBLE, 0, comm);
  if (rank == 0) return;
  auto at = v.begin();
  auto next = [&] { return *at++; };
  s.function = next() != 0;
  s.nvar = static_cast<int>(next());
  s.real_bytes = static_cast<int>(next());
  s.big_endian = next() != 0;
  s.records = next() != 0;
  s.multi = next() != 0;
  s.dimensions = static_cast<int>(next());
  s.formatted = next() != 0;
  const auto nb = next(), na = next(), ne = next();
  s.blocks.resize(static_cast<std::size_t>(nb));
  for (auto& b : s.blocks) {
    b.id = next();
    for (auto& d : b.dims) d = next();
  }
  s.values_at.assign(at, at + na);
  s.values_end.assign(at + na, at + na + ne);
  s.mach = fs[0], s.alpha = fs[1], s.reynolds = fs[2], s.time = fs[3];
}

// A multi-block output's format: --to, else from the output's name.
std::string block_output_format(const ConvertOptions& o) {
  if (!o.to.empty()) return o.to;
  std::string lower = o.output;
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return ends_with(lower, ".vtm")     ? "vtm"
         : hdf5_file_name(o.output) ? "hdf5"
         : plot3d_name(o.output)    ? "plot3d"
         : cgns_file_name(o.output) ? "cgns"
         : tecplot_file_name(o.output) ? "tecplot"
                                    : "raw";
}

// A PLOT3D grid into an HDF5 block file (the grid, no frame yet), every rank its share of
// the blocks: rank 0 reads the header, each rank only its blocks' values.
nlohmann::json convert_plot3d(const ConvertOptions& o) {
  const std::string format = block_output_format(o);
  if (format != "hdf5" && format != "cgns" && format != "tecplot")
    throw UsageError("a PLOT3D grid converts to an HDF5 block file (.h5), CGNS (.cgns) or Tecplot (.plt): " + o.output);
  pio::MpiSession mpi(nullptr, nullptr);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  plot3d::Grid g;
  pio::collective(MPI_COMM_WORLD, [&] {
    if (rank == 0) g = plot3d::read_header(o.input);  // a formatted grid's header pass reads the whole file: once
  });
  broadcast_grid(MPI_COMM_WORLD, g);
  g.path = o.input;
  BlockLayout l;
  l.blocks = g.blocks;
  const std::size_t nb = g.blocks.size();
  for (std::size_t b = nb * static_cast<std::size_t>(rank) / static_cast<std::size_t>(size);
       b < nb * static_cast<std::size_t>(rank + 1) / static_cast<std::size_t>(size); ++b) {
    const auto& d = g.blocks[b].dims;
    l.pieces.push_back({static_cast<std::int64_t>(b), {{{0, d[0]}, {0, d[1]}, {0, d[2]}}}});
  }
  // The solutions, each a frame: their headers read by rank 0 (a few records; a formatted
  // file's whole text, once) and sent to every rank, checked against the grid and against the
  // first.
  std::vector<plot3d::Solution> sols;
  std::vector<std::unique_ptr<FileSource>> held;  // open inputs: the output may not be one of them, by any name
  for (const auto& path : o.solutions) {
    held.push_back(std::make_unique<FileSource>(path));
    sols.emplace_back();
    pio::collective(MPI_COMM_WORLD, [&] {
      if (rank == 0) sols.back() = plot3d::read_solution(path);
    });
    broadcast_solution(MPI_COMM_WORLD, sols.back());
    sols.back().path = path;
  }
  pio::collective(MPI_COMM_WORLD, [&] {
    for (std::size_t k = 0; k < sols.size(); ++k) {
      const auto& path = o.solutions[k];
      const auto& s = sols[k];
      if (s.blocks.size() != g.blocks.size())
        throw FormatError(path + ": " + std::to_string(s.blocks.size()) + " blocks, the grid " + o.input + " has " + std::to_string(g.blocks.size()));
      for (std::size_t b = 0; b < nb; ++b)
        if (s.blocks[b].dims != g.blocks[b].dims)
          throw FormatError(path + ": block " + std::to_string(b + 1) + " is " + std::to_string(s.blocks[b].dims[0]) + " x " +
                            std::to_string(s.blocks[b].dims[1]) + " x " + std::to_string(s.blocks[b].dims[2]) + ", the grid's " +
                            std::to_string(g.blocks[b].dims[0]) + " x " + std::to_string(g.blocks[b].dims[1]) + " x " +
                            std::to_string(g.blocks[b].dims[2]));
      if (s.names() != sols.front().names())
        throw FormatError(path + ": " + std::to_string(s.nvar) + " variables (" + (s.function ? "a function file" : "a q file") + "), " +
                          o.solutions.front() + " " + std::to_string(sols.front().nvar));
    }
  });
  pio::BlockFileOptions wo;
  wo.format = format;
  wo.atomic = true;
  wo.compress = Compression::parse(o.compress);
  wo.frames = static_cast<std::int64_t>(sols.size());
  pio::BlockWriter w(MPI_COMM_WORLD, o.output, l, sols.empty() ? std::vector<std::string>{} : sols.front().names(), wo);
  std::vector<std::vector<double>> xyz;
  pio::collective(MPI_COMM_WORLD, [&] {
    std::array<std::vector<double>, 3> block;
    for (const auto& p : l.pieces) {
      plot3d::read_block(g, static_cast<std::size_t>(p.block), block);
      for (auto& c : block) xyz.push_back(std::move(c));
    }
  });
  std::vector<const double*> ptr;
  for (const auto& x : xyz) ptr.push_back(x.data());
  w.write_grid(ptr.data());
  for (const auto& s : sols) {
    std::vector<std::vector<double>> values;
    pio::collective(MPI_COMM_WORLD, [&] {
      values.clear();
      std::vector<std::vector<double>> block;
      for (const auto& p : l.pieces) {
        plot3d::read_solution_block(s, static_cast<std::size_t>(p.block), block);
        for (auto& v : block) values.push_back(std::move(v));
      }
    });
    std::vector<const double*> vp;
    for (const auto& v : values) vp.push_back(v.data());
    w.write_frame(s.time, vp.data());
  }
  w.close();
  nlohmann::json j = {{"input", o.input}, {"input_format", "plot3d"}, {"output", o.output}, {"output_format", "blocks-" + format},
                      {"blocks", nb}, {"frames", sols.size()}, {"precision", g.real_bytes}, {"big_endian", g.big_endian}, {"records", g.records},
                      {"iblank", g.iblank}};
  if (rank != 0) j["quiet"] = true;
  return j;
}

// A CGNS file (structured zones, vertex solutions) into a block file, through the helper;
// written by rank 0 alone.
nlohmann::json convert_cgns(const ConvertOptions& o) {
  pio::cgns_files::check_root(o.input);
  const std::string format = !o.to.empty() ? o.to : hdf5_file_name(o.output) ? "hdf5" : tecplot_file_name(o.output) ? "tecplot" : "raw";
  if (format != "hdf5" && format != "raw" && format != "tecplot")
    throw UsageError("a CGNS file converts to a block file: raw, hdf5 or tecplot (--to " + format + ")");
  pio::MpiSession mpi(nullptr, nullptr);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  nlohmann::json report;
  pio::collective(MPI_COMM_WORLD, [&] {
    if (rank != 0) return;
    run_cgns_helper({"read", o.input}, nullptr, [&](int fd) {
      char magic[8];
      read_fd(fd, magic, 8);
      if (std::memcmp(magic, "ABBLKS1\n", 8) != 0) throw FormatError("anabranch-cgns: not a block stream");
      std::uint64_t n = 0;
      read_fd(fd, &n, 8);
      std::string text(n, '\0');
      read_fd(fd, text.data(), n);
      const auto h = nlohmann::json::parse(text);
      BlockLayout l;
      for (const auto& b : h["blocks"]) {
        l.blocks.push_back({b[0].get<std::int64_t>(), {b[1].get<std::int64_t>(), b[2].get<std::int64_t>(), b[3].get<std::int64_t>()}});
        const auto& d = l.blocks.back().dims;
        l.pieces.push_back({static_cast<std::int64_t>(l.blocks.size() - 1), {{{0, d[0]}, {0, d[1]}, {0, d[2]}}}});
      }
      const auto vars = h["variables"].get<std::vector<std::string>>();
      const auto times = h["times"].get<std::vector<double>>();
      pio::BlockFileOptions wo;
      wo.format = format;
      wo.atomic = true;
      wo.frames = static_cast<std::int64_t>(times.size());
      pio::BlockWriter w(MPI_COMM_SELF, o.output, l, vars, wo);
      std::vector<std::vector<double>> a(l.blocks.size() * std::max<std::size_t>(3, vars.size()));
      std::vector<const double*> p;
      auto fill = [&](std::size_t per) {
        p.clear();
        for (std::size_t b = 0; b < l.blocks.size(); ++b)
          for (std::size_t c = 0; c < per; ++c) {
            auto& x = a[b * per + c];
            x.resize(static_cast<std::size_t>(l.blocks[b].points()));
            read_fd(fd, x.data(), x.size() * 8);
            p.push_back(x.data());
          }
      };
      fill(3);
      if (format != "raw") w.write_grid(p.data());
      for (double t : times) {
        fill(vars.size());
        w.write_frame(t, p.data());
      }
      w.close();
      report = {{"input", o.input}, {"input_format", "cgns"}, {"output", o.output}, {"output_format", "blocks-" + format},
                {"blocks", l.blocks.size()}, {"frames", times.size()}};
    });
  });
  if (rank != 0) report["quiet"] = true;
  return report;
}

nlohmann::json convert_blocks(const ConvertOptions& o) {
  const std::string format = block_output_format(o);
  if (format != "vtm" && format != "hdf5" && format != "raw" && format != "plot3d" && format != "cgns" && format != "tecplot")
    throw UsageError("a multi-block file converts to raw, hdf5, vtm, plot3d, cgns or tecplot (--to " + format + ")");
  const auto info = pio::describe_block_file(o.input);
  if (format == "plot3d") {
    if (!info.has_grid) throw UsageError(o.input + " holds no grid coordinates to write as PLOT3D");
    refuse_open_input(o.output);
    plot3d::write(o.output, info.blocks, false, [&](std::size_t b, int c, std::vector<double>& out) { pio::read_block_array(info, 0, b, -(c + 1), out); });
    return {{"input", o.input}, {"input_format", "blocks-" + info.format}, {"output", o.output}, {"output_format", "plot3d"},
            {"blocks", info.blocks.size()}, {"frames", 0}};
  }
  nlohmann::json report = {{"input", o.input}, {"input_format", "blocks-" + info.format}, {"output", o.output},
                           {"output_format", format == "vtm" ? "vtm" : "blocks-" + format}, {"blocks", info.blocks.size()}};
  if (format == "vtm") {
    if (info.frames() == 0) throw UsageError(o.input + " holds no frame to write");
    const std::int64_t frame = chosen_frame(o.frame, info.frames(), o.input);
    refuse_open_input(o.output);
    std::string stem = o.output.substr(0, o.output.size() - 4);
    const std::string dir_name = stem.substr(stem.find_last_of('/') + 1);
    if (::mkdir(stem.c_str(), 0755) != 0 && errno != EEXIST) throw IoError::from_errno("cannot create the folder", stem);
    std::vector<std::pair<std::string, std::string>> entries;
    std::vector<std::string> written;
    try {
      std::int64_t first = 0;
      Progress progress("convert", static_cast<std::int64_t>(info.blocks.size()));
      for (std::size_t b = 0; b < info.blocks.size(); ++b) {
        const auto& blk = info.blocks[b];
        const std::string name = "block_" + std::to_string(blk.id) + ".vts";
        // Complete blocks count as temporaries until the index is written: a signal removes them.
        register_temporary(stem + "/" + name);
        written.push_back(stem + "/" + name);
        vts::write_block(stem + "/" + name, blk.dims, info.times[static_cast<std::size_t>(frame)], info.real_bytes, info.variables,
                         [&](int c, std::vector<double>& out) {
                           if (info.has_grid) return pio::read_block_array(info, 0, b, -(c + 1), out);
                           out.resize(static_cast<std::size_t>(blk.points()));  // the index space, blocks along x
                           for (std::int64_t n = 0; n < blk.points(); ++n) {
                             const std::int64_t ijk[3] = {n % blk.dims[0], (n / blk.dims[0]) % blk.dims[1], n / (blk.dims[0] * blk.dims[1])};
                             out[static_cast<std::size_t>(n)] = static_cast<double>(ijk[c] + (c == 0 ? first : 0));
                           }
                         },
                         [&](int v, std::vector<double>& out) { pio::read_block_array(info, frame, b, v, out); });
        entries.push_back({"block " + std::to_string(blk.id), dir_name + "/" + name});
        first += blk.points();
        progress.update(static_cast<std::int64_t>(b + 1));
      }
      vts::write_index(o.output, info.times[static_cast<std::size_t>(frame)], entries);
      for (const auto& w : written) release_temporary(w);
      progress.finish();
    } catch (...) {
      for (const auto& w : written) {
        ::unlink(w.c_str());
        release_temporary(w);
      }
      ::rmdir(stem.c_str());
      throw;
    }
    report["frames"] = 1;
    report["frame"] = frame;
    return report;
  }
  // Block file to block file, through the parallel reader and writer.
  pio::MpiSession mpi(nullptr, nullptr);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  BlockLayout l;
  l.blocks = info.blocks;
  const std::size_t nb = info.blocks.size();
  for (std::size_t b = nb * static_cast<std::size_t>(rank) / static_cast<std::size_t>(size);
       b < nb * static_cast<std::size_t>(rank + 1) / static_cast<std::size_t>(size); ++b) {
    const auto& d = info.blocks[b].dims;
    l.pieces.push_back({static_cast<std::int64_t>(b), {{{0, d[0]}, {0, d[1]}, {0, d[2]}}}});
  }
  pio::BlockFileOptions wo;
  wo.format = format;
  wo.compress = Compression::parse(o.compress);
  wo.real_bytes = info.real_bytes;
  wo.atomic = true;
  wo.frames = info.frames();
  pio::BlockReader r(MPI_COMM_WORLD, o.input, l);
  pio::BlockWriter w(MPI_COMM_WORLD, o.output, l, info.variables, wo);
  auto arrays = [&](int n) {
    std::vector<std::vector<double>> a;
    for (std::size_t p = 0; p < l.pieces.size(); ++p)
      for (int v = 0; v < n; ++v) a.emplace_back(static_cast<std::size_t>(l.memory_points(p)));
    return a;
  };
  auto pointers = [](std::vector<std::vector<double>>& a) {
    std::vector<double*> p;
    for (auto& x : a) p.push_back(x.data());
    return p;
  };
  if (info.has_grid && format != "raw") {
    auto g = arrays(3);
    auto p = pointers(g);
    r.read_grid(p.data());
    w.write_grid(const_cast<const double* const*>(p.data()));
  }
  std::optional<Progress> progress;
  if (rank == 0) progress.emplace("convert", info.frames());
  auto q = arrays(info.nvar());
  auto p = pointers(q);
  for (std::int64_t f = 0; f < info.frames(); ++f) {
    r.read_frame(f, p.data());
    w.write_frame(info.times[static_cast<std::size_t>(f)], const_cast<const double* const*>(p.data()));
    if (progress) progress->update(f + 1);
  }
  w.close();
  r.close();
  if (progress) progress->finish();
  report["frames"] = info.frames();
  if (rank != 0) report["quiet"] = true;
  return report;
}

}  // namespace

Runner add_convert(CLI::App& app, Common& common) {
  auto o = std::make_shared<ConvertOptions>();
  auto* sub = app.add_subcommand("convert", "Convert between SERAFIN, HDF5 (VTKHDF + XDMF, for ParaView), CGNS, Tecplot (.plt) and VTU; multi-block files between raw, HDF5, VTK MultiBlock (.vtm), PLOT3D grids, CGNS and Tecplot");
  sub->add_option("input", o->input, "SERAFIN, anabranch HDF5, CGNS or Tecplot file; a multi-block file (raw, HDF5, CGNS or Tecplot), a PLOT3D grid")->required()->check(CLI::ExistingFile);
  sub->add_option("output", o->output, "output file; format from the extension (.slf .h5 .hdf .vtkhdf .cgns .plt .vtu; multi-block: .h5 .vtm .xyz .cgns .plt, raw otherwise) or --to")->required();
  sub->add_option("--to", o->to, "output format (meshes: serafin, hdf5, cgns, tecplot or vtu; multi-block files: raw, hdf5, vtm, plot3d, cgns or tecplot; a PLOT3D grid: hdf5, cgns or tecplot; a CGNS file: raw, hdf5 or tecplot)")->check(CLI::IsMember({"serafin", "hdf5", "vtu", "raw", "vtm", "plot3d", "cgns", "tecplot"}));
  sub->add_option("--frame", o->frame, "VTU and VTK MultiBlock (.vtm): the frame to write, 0-based (default: the last)");
  sub->add_option("--strategy", o->strategy, "SERAFIN output under mpiexec: the write strategy")->capture_default_str();
  sub->add_option("--compress", o->compress,
                  "HDF5 or CGNS output (a multi-block grid's too): compress the frames' values: lossless, abs=TOL (every value within TOL) or rel=TOL (within "
                  "TOL x the variable's range in the frame); then :deflate (the default: any HDF5 reader decodes it) or "
                  ":zstd (faster, smaller; other readers need HDF5's zstd plugin, filter 32015)");
  sub->add_option("--solution", o->solutions, "a PLOT3D grid's solution (q or function file, binary), one frame each; repeat for more")
      ->check(CLI::ExistingFile);
  sub->add_flag("--json", common.json, "print a JSON summary on stdout");
  return [o, &common]() {
    // A CGNS input the engine cannot read (as a block file or a mesh result): CGNS's library.
    const bool cgns_in = cgns_file_name(o->input) && !pio::is_block_file(o->input) && !pio::cgns_files::is_mesh_result(o->input);
    const bool grid_in = !cgns_in && !pio::is_block_file(o->input) && plot3d_grid(o->input);
    const std::string format = cgns_in || grid_in || pio::is_block_file(o->input) ? std::string() : target_format(*o);
    if (o->input == o->output) throw UsageError("input and output are the same file: " + o->input);
    if (!o->solutions.empty() && !grid_in) throw UsageError("--solution goes with a PLOT3D grid; " + o->input + " is not one");
    const auto t0 = std::chrono::steady_clock::now();
    if (cgns_in || grid_in || pio::is_block_file(o->input)) {
      const std::string to = block_output_format(*o);
      if (Compression::parse(o->compress).on() && (cgns_in || (to != "cgns" && to != "hdf5")))
        throw UsageError("--compress " + o->compress + ": " + o->input + " is a multi-block grid" +
                         (cgns_in ? " CGNS's library reads (its outputs are not compressed)"
                                  : ", compressed in CGNS and HDF5 block files only (.cgns, .h5; " + o->output + " is written as " + to + ")"));
      provenance::add_input(o->input);
      auto j = cgns_in ? convert_cgns(*o) : grid_in ? convert_plot3d(*o) : convert_blocks(*o);
      if (j.contains("quiet")) return 0;
      j["bytes"] = size_of(o->output);
      j["seconds"] = seconds_since(t0);
      if (common.json)
        print_json(j);
      else
      {
        std::printf("converted %s (%s, %lld frames) to %s (%s) in %.2f s\n", o->input.c_str(), j["input_format"].get<std::string>().c_str(),
                    static_cast<long long>(j["frames"].get<std::int64_t>()), o->output.c_str(), j["output_format"].get<std::string>().c_str(),
                    j["seconds"].get<double>());
        say_zstd_plugin(o->compress, "  ");
      }
      return 0;
    }
    pio::make_strategy(o->strategy);  // refuses unknown names, also when run alone (where it is not used)
    const Compression compress = Compression::parse(o->compress);
    if (compress.on() && format != "hdf5" && format != "cgns")
      throw UsageError("--compress " + o->compress + ": HDF5 and CGNS outputs only (" + o->output + " is written as " + format + ")");
    // Alone (no MPI launcher), every format is written without MPI: its start-up would cost
    // more than converting a small file (HDF5 through its POSIX driver).
    const bool alone = !pio::started_by_launcher() && format != "cgns" && format != "tecplot";  // CGNS, Tecplot: the engine's, on one rank
    std::optional<pio::MpiSession> mpi;
    if (!alone) mpi.emplace(nullptr, nullptr);
    const MPI_Comm comm = mpi ? MPI_COMM_WORLD : MPI_COMM_NULL;
    int rank = 0;
    if (mpi) MPI_Comm_rank(comm, &rank);
    if (rank != 0) Progress::set_enabled(false);
    // The input's size and checksum for the output's provenance: alone, by a thread beside
    // the conversion; under mpiexec by every rank, a share each, when the output asks.
    provenance::add_input(o->input, alone);
    std::unique_ptr<pio::ResultFile> in;
    pio::collective(comm, [&] { in = pio::ResultFile::open(o->input); });
    const bool single = in->header().precision == Precision::Single;
    if (alone && format == "serafin") {
      convert_alone(*in, o->output);
    } else if (alone && format == "hdf5") {
      if (single)
        convert_alone_hdf5<float>(*in, o->output, compress);
      else
        convert_alone_hdf5<double>(*in, o->output, compress);
    } else if (format == "vtu") {
      pio::collective(comm, [&] {
        if (rank == 0) convert_vtu(*in, o->output, o->frame);
      });
    } else {
      const std::string strategy = format == "hdf5" || format == "cgns" || format == "tecplot" ? format : o->strategy;
      if (format == "serafin" && strategy == "hdf5") throw UsageError("--strategy hdf5 writes HDF5: name a .h5 output or --to hdf5");
      if (single)
        convert_parallel<float>(comm, *in, o->output, strategy, compress);
      else
        convert_parallel<double>(comm, *in, o->output, strategy, compress);
    }
    if (rank != 0) return 0;
    const double seconds = seconds_since(t0);
    const std::int64_t bytes = size_of(o->output);
    if (common.json) {
      print_json({{"input", o->input}, {"input_format", in->format()}, {"output", o->output}, {"output_format", format},
                  {"frames", format == "vtu" ? 1 : in->frame_count()}, {"npoin", in->header().npoin}, {"bytes", bytes},
                  {"seconds", seconds}});
    } else {
      std::printf("converted %s (%s, %lld frames) to %s (%s): %s in %.2f s\n", o->input.c_str(), in->format(),
                  static_cast<long long>(in->frame_count()), o->output.c_str(), format.c_str(),
                  human_bytes(static_cast<double>(bytes)).c_str(), seconds);
      say_zstd_plugin(o->compress, "  ");
    }
    return 0;
  };
}

}  // namespace anabranch::cli
