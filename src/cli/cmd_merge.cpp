// anabranch merge RES --geo MESH.slf [-o OUT.slf]: per-rank result files (RES<suffix>, as
// TELEMAC's solvers write them) or a concatenated container into one global file, as
// gretel does, streaming. Under mpiexec the ranks share the parts. Its inverse, anabranch
// split GLOBAL.slf --plan GEO: a global result or restart file split along the parts of an
// existing partition (per-rank GEO files or a GEO-CONCAT container), so that a run
// restarts on any number of processes.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <optional>
#include <thread>

#include "cli/commands.hpp"
#include "core/error.hpp"
#include "core/io.hpp"
#include "core/progress.hpp"
#include "formats/partel.hpp"
#include "formats/serafin.hpp"
#include "h5/results.hpp"
#include "tools/merge.hpp"
#include "parallel/mpi_util.hpp"
#include "io/strategy.hpp"

namespace anabranch::cli {
namespace {

struct MergeCli {
  pio::MergeOptions o;
  bool gretel = false;
  std::string compress;  // --compress SPEC
};

// gretel's 8 answers on standard input, as TELEMAC's runner writes them: geometry, its
// format, boundary file, result base name, its format, parts, planes, method.
void read_gretel_answers(std::istream& in, pio::MergeOptions& o) {
  const std::vector<std::string> a = read_answers(in);
  if (a.size() < 8) throw UsageError("gretel answers: expected 8 lines on standard input, got " + std::to_string(a.size()));
  for (int i : {1, 4})
    if (a[static_cast<std::size_t>(i)].rfind("SERAFIN", 0) != 0)
      throw UsageError("gretel answers: line " + std::to_string(i + 1) + ", the format, is '" + a[static_cast<std::size_t>(i)] +
                       "' (SERAFIN or SERAFIND; MED is not supported)");
  o.geometry = a[0];
  o.cli = a[2];
  o.base = a[3];
  o.output = o.base;
  try {
    o.nparts = std::stoi(a[5]);
    (void)std::stoi(a[6]);  // planes: taken from the parts
    (void)std::stoi(a[7]);  // method: memory use is always one variable of one frame
  } catch (...) {
    throw UsageError("gretel answers: lines 6-8 (parts, planes, method) must be integers: '" + a[5] + "', '" + a[6] + "', '" + a[7] + "'");
  }
  if (o.nparts < 1) throw UsageError("gretel answers: line 6, the number of parts, is " + a[5]);
  for (const auto* f : {&o.geometry, &o.cli})
    if (!file_exists(*f)) throw IoError("gretel answers: " + *f + " does not exist");
}

}  // namespace

Runner add_merge(CLI::App& app, Common& common) {
  auto m = std::make_shared<MergeCli>();
  auto* sub = app.add_subcommand("merge", "Merge per-rank result files (or a CONCAT container) into one global file (gretel)");
  sub->add_option("parts", m->o.base, "base name of the parts: RES for RES00003-00000..., or RES for RES-CONCAT");
  sub->add_option("--geo", m->o.geometry, "the global geometry (connectivity, IPOBO, coordinates; for 3D parts the 2D mesh "
                                          "may be given, extruded as gretel does)")->check(CLI::ExistingFile);
  sub->add_option("--cli", m->o.cli, "the global boundary file: IPARAM(8) = its boundary points, as gretel writes it")
      ->check(CLI::ExistingFile);
  sub->add_flag("--gretel", m->gretel, "read gretel's 8 answers from standard input (as TELEMAC's runner calls gretel)");
  sub->add_option("-n,--parts", m->o.nparts, "number of parts (default: found from the files)");
  sub->add_option("-o,--output", m->o.output, "output file (default: the base name)");
  sub->add_flag("--allow-partial", m->o.allow_partial, "merge the frames every part has when some parts have fewer");
  auto* strategy = sub->add_option("--strategy", m->o.strategy, "write strategy when run on several ranks (hdf5 for an "
                                                                 "output named .h5, .hdf, .hdf5 or .vtkhdf; tecplot for .plt)")
                       ->capture_default_str();
  sub->add_option("--compress", m->compress,
                  "HDF5 output: compress the frames' values, as convert --compress: lossless, abs=TOL or rel=TOL, then "
                  ":deflate (the default) or :zstd");
  sub->add_flag("--json", common.json, "print a JSON summary on stdout");
  return [m, &common, strategy]() {
    if (m->gretel) read_gretel_answers(std::cin, m->o);
    if (m->o.base.empty()) throw UsageError("no parts given (the base name of the per-rank files)");
    if (m->o.geometry.empty()) throw UsageError("merge needs the global geometry file (--geo)");
    if (m->o.output.empty()) m->o.output = m->o.base;
    // The output's name says its format; the strategy must agree with it.
    pio::make_strategy(m->o.strategy);  // refuses unknown names, also when run alone
    if (m->o.strategy == "file-per-process") throw UsageError("merge writes one file: --strategy file-per-process does not apply");
    if (hdf5_file_name(m->o.output) && m->o.strategy != "hdf5") {
      if (strategy->count() > 0)
        throw UsageError("the output " + m->o.output + " is named as HDF5 but --strategy " + m->o.strategy +
                         " writes SERAFIN (use --strategy hdf5, or name it .slf)");
      m->o.strategy = "hdf5";
    }
    if (m->o.strategy == "hdf5" && !hdf5_file_name(m->o.output))
      throw UsageError("--strategy hdf5 writes HDF5: name the output .h5, .hdf, .hdf5 or .vtkhdf (" + m->o.output + ")");
    if (tecplot_file_name(m->o.output) != (m->o.strategy == "tecplot")) {
      if (m->o.strategy == "tecplot" || strategy->count() > 0)
        throw UsageError(m->o.strategy == "tecplot" ? "--strategy tecplot writes Tecplot: name the output .plt (" + m->o.output + ")"
                                                    : "the output " + m->o.output + " is named as Tecplot but --strategy " + m->o.strategy +
                                                          " writes SERAFIN (use --strategy tecplot, or name it .slf)");
      m->o.strategy = "tecplot";
    }
    m->o.compress = Compression::parse(m->compress);
    if (m->o.compress.on() && m->o.strategy != "hdf5")
      throw UsageError("--compress " + m->compress + ": HDF5 outputs only (name the output .h5: " + m->o.output + " is SERAFIN)");
    // Alone (no MPI launcher), merge without MPI: its start-up would cost more than the
    // merge of a small file (HDF5 through its POSIX driver).
    std::optional<pio::MpiSession> mpi;
    if (pio::started_by_launcher() || m->o.strategy == "tecplot") mpi.emplace(nullptr, nullptr);  // Tecplot: the engine's, on one rank
    const MPI_Comm comm = mpi ? MPI_COMM_WORLD : MPI_COMM_NULL;
    int rank = 0;
    if (mpi) MPI_Comm_rank(comm, &rank);
    if (rank != 0) Progress::set_enabled(false);
    const pio::MergeReport r = pio::merge_parts(comm, m->o);
    if (rank != 0) return 0;
    if (!r.warning.empty()) std::fprintf(stderr, "anabranch merge: warning: %s\n", r.warning.c_str());
    if (common.json) {
      print_json({{"output", m->o.output}, {"parts", r.parts}, {"frames", r.frames}, {"npoin", r.npoin}, {"bytes", r.bytes},
                  {"bytes_read", r.bytes_read}, {"seconds", r.seconds}, {"peak_rss_bytes", peak_rss_bytes()},
                  {"warning", r.warning}, {"kept", r.kept}});
    } else if (r.kept) {
      std::printf("%s was written during the run (%lld frames) and its %d parts hold no frames: left as it is, nothing to merge\n",
                  m->o.output.c_str(), static_cast<long long>(r.frames), r.parts);
    } else {
      std::printf("merged %d parts into %s: %lld frames, %s nodes, %s in %.2f s (%.0f MB/s read)\n", r.parts, m->o.output.c_str(),
                  static_cast<long long>(r.frames), thousands(r.npoin).c_str(), human_bytes(static_cast<double>(r.bytes)).c_str(),
                  r.seconds, r.seconds > 0 ? static_cast<double>(r.bytes_read) / r.seconds / 1e6 : 0.0);
    }
    return 0;
  };
}

}  // namespace anabranch::cli

namespace anabranch::cli {
namespace {

struct SplitOptions {
  std::string input, plan, output = ".", name, layout = "telemac";
  int parts = 0, threads = 0;
  bool headers_only = false;
};

std::string strip_concat(const std::string& p) {
  const std::string tail = "-CONCAT";
  return p.size() > tail.size() && p.compare(p.size() - tail.size(), tail.size(), tail) == 0 ? p.substr(0, p.size() - tail.size()) : p;
}

}  // namespace

// Used by `partition --partel` when partel is asked to split a file on existing parts.
partel::WriteReport split_file(const std::string& input, const std::string& plan, int parts, const std::string& dir,
                               const std::string& name, partel::Layout layout, int threads, bool frames) {
  if (pio::looks_like_hdf5(input)) {
    // An HDF5 global file: through a temporary SERAFIN copy beside the outputs.
    const std::string tmp = dir + "/." + name + ".split-" + std::to_string(::getpid()) + ".slf";
    struct Remove {
      std::string path;
      ~Remove() { std::remove(path.c_str()); }
    } remove{tmp};
    pio::write_serafin_copy(*pio::ResultFile::open(input), tmp);
    return split_file(tmp, plan, parts, dir, name, layout, threads, frames);
  }
  serafin::Reader reader(input);
  report_integrity("split", reader);
  const partel::PartSet set(strip_concat(plan), parts);
  // One frame of values at a time: the memory of a frame, and a frame is large enough that
  // every part's write of it is a large one.
  const auto& h = reader.header();
  const std::int64_t frame_bytes = std::max(1, h.nvar()) * h.npoin * real_size(h.precision);
  return partel::split_on_parts(reader, set, dir, name, layout, threads, frame_bytes, frames);
}

Runner add_split(CLI::App& app, Common& common) {
  auto o = std::make_shared<SplitOptions>();
  auto* sub = app.add_subcommand("split", "Split a global file along existing parts (restart on another process count)");
  sub->add_option("input", o->input, "global SERAFIN or HDF5 file (results, restart)")->required()->check(CLI::ExistingFile);
  sub->add_option("--plan", o->plan, "the partitioned geometry: base name of its parts (GEO for GEO00003-00000...) or GEO-CONCAT")
      ->required();
  sub->add_option("-n,--parts", o->parts, "number of parts (default: found from the files)");
  sub->add_option("-o,--output", o->output, "output folder")->capture_default_str();
  sub->add_option("--name", o->name, "base name of the outputs (default: the input file name)");
  sub->add_option("--layout", o->layout, "telemac (a file per part) or concat")->capture_default_str()->check(CLI::IsMember({"telemac", "concat"}));
  sub->add_option("--threads", o->threads, "threads writing parts (default: all cores)");
  sub->add_flag("--headers-only", o->headers_only,
                "each part gets the header and mesh only, no frame: for ranks that read their values from the global file "
                "itself (anabranch's reader; a TELEMAC restart from the one file, docs/telemac.md)");
  sub->add_flag("--json", common.json, "print a JSON summary on stdout");
  return [o, &common]() {
    const auto t0 = std::chrono::steady_clock::now();
    make_folder(o->output);
    std::string name = o->name;
    if (name.empty()) {
      const auto s = o->input.find_last_of('/');
      name = s == std::string::npos ? o->input : o->input.substr(s + 1);
    }
    const int threads = o->threads > 0 ? o->threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    auto r = split_file(o->input, o->plan, o->parts, o->output, name, partel::parse_layout(o->layout), threads, !o->headers_only);
    const double secs = seconds_since(t0);
    if (common.json)
      print_json({{"input", o->input}, {"files", r.files}, {"bytes", r.bytes}, {"seconds", secs}, {"paths", r.paths}});
    else
      std::printf("split %s along %s: %lld files, %s in %.2f s\n", o->input.c_str(), o->plan.c_str(),
                  static_cast<long long>(r.files), human_bytes(static_cast<double>(r.bytes)).c_str(), secs);
    return 0;
  };
}

}  // namespace anabranch::cli
