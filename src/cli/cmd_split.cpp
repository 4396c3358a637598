// anabranch split GLOBAL.slf --plan GEO: a global result or restart file split along the
// parts of an existing partition (per-rank GEO files or a GEO-CONCAT container), so that a
// run restarts on any number of processes.
#include <unistd.h>

#include <cstdio>
#include <thread>

#include "cli/commands.hpp"
#include "core/error.hpp"
#include "core/progress.hpp"
#include "formats/partel.hpp"
#include "formats/serafin.hpp"
#include "h5/results.hpp"

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
