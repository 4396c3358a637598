// anabranch tune [PATH]: the file system under PATH (statfs; Lustre stripes through `lfs`),
// the node layout of the ranks, and the settings to use: writers per node, stripe count
// and size, MPI-IO hints and the anabranch options that apply them. The rules are seed
// 003's heuristics: at most 2 writers per node, 2 stripes per writer, at most 66% of the
// OSTs; elsewhere, the fastest strategy of a `bench` result.
#include <sys/statfs.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <memory>
#include <sstream>
#include <thread>

#include "cli/commands.hpp"
#include "core/outputs.hpp"
#include "core/error.hpp"
#include "core/io.hpp"
#include "core/progress.hpp"

namespace anabranch::cli {
namespace {

struct TuneOptions {
  std::string path = ".", fs, bench;
  int ranks = 0, nodes = 0;
};

std::string run_command(const std::string& cmd) {
  std::string out;
  unblock_termination_signals();  // the shell inherits this thread's mask: it must stay interruptible
  std::unique_ptr<FILE, int (*)(FILE*)> p(::popen((cmd + " 2>/dev/null").c_str(), "r"), ::pclose);
  block_termination_signals();
  if (!p) return out;
  std::array<char, 4096> buf{};
  while (std::fgets(buf.data(), static_cast<int>(buf.size()), p.get())) out += buf.data();
  return out;
}

// `lfs getstripe -d DIR`: "stripe_count:  1 stripe_size:   1048576 ..." (either order).
void parse_getstripe(const std::string& text, long long& count, long long& size) {
  std::istringstream in(text);
  for (std::string tok; in >> tok;) {
    if (tok == "stripe_count:" || tok == "lmm_stripe_count:") in >> count;
    if (tok == "stripe_size:" || tok == "lmm_stripe_size:") in >> size;
  }
}

// `lfs df DIR`: one line per OST ("... OST:N ...").
int count_osts(const std::string& text) {
  int n = 0;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    if (line.find("[OST:") != std::string::npos) ++n;
  return n;
}

}  // namespace

Runner add_tune(CLI::App& app, Common& common) {
  auto o = std::make_shared<TuneOptions>();
  auto* sub = app.add_subcommand("tune", "File system, node layout and the I/O settings to use (writers, stripes, MPI-IO hints)");
  sub->add_option("path", o->path, "folder the results will be written to")->capture_default_str();
  sub->add_option("--ranks", o->ranks, "MPI ranks of the run (default: this machine's cores)")->check(CLI::PositiveNumber);
  sub->add_option("--nodes", o->nodes, "nodes of the run (default: 1)")->check(CLI::PositiveNumber);
  sub->add_option("--fs", o->fs, "treat PATH as this file system (lustre, ext4, ...) instead of asking statfs");
  sub->add_option("--bench", o->bench, "results of `anabranch bench --json` to recommend from")->check(CLI::ExistingFile);
  sub->add_flag("--json", common.json, "print the recommendation as JSON");
  return [o, &common]() {
    struct statfs st {};
    if (::statfs(o->path.c_str(), &st) != 0) throw IoError::from_errno("cannot examine", o->path);
    const std::string fs = o->fs.empty() ? file_system_name(o->path) : o->fs;
    const int ranks = o->ranks > 0 ? o->ranks : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    const int nodes = std::max(1, o->nodes > 0 ? o->nodes : 1);
    if (ranks < nodes) throw UsageError("fewer ranks than nodes");
    const int per_node = (ranks + nodes - 1) / nodes;
    const int writers_per_node = std::min(2, per_node);
    const int writers = writers_per_node * nodes;
    nlohmann::json j = {{"path", o->path},
                        {"file_system", fs},
                        {"ranks", ranks},
                        {"nodes", nodes},
                        {"ranks_per_node", per_node},
                        {"writers_per_node", writers_per_node},
                        {"writers", writers},
                        {"free_bytes", static_cast<long long>(st.f_bavail) * st.f_bsize}};
    std::vector<std::string> notes;
    std::string hints = "cb_nodes=" + std::to_string(writers) + ",romio_cb_write=enable";
    if (fs == "lustre") {
      long long count = -1, size = -1;
      parse_getstripe(run_command("lfs getstripe -d '" + o->path + "'"), count, size);
      const int osts = count_osts(run_command("lfs df '" + o->path + "'"));
      j["current_stripe_count"] = count;
      j["current_stripe_size"] = size;
      j["osts"] = osts;
      // Seed 003's rules: 2 stripes per writer, at most 66% of the OSTs.
      int stripes = 2 * writers;
      if (osts > 0) stripes = std::max(1, std::min(stripes, static_cast<int>(std::floor(0.66 * osts))));
      const long long stripe_size = 4LL << 20;
      j["stripe_count"] = stripes;
      j["stripe_size"] = stripe_size;
      hints += ",striping_factor=" + std::to_string(stripes) + ",striping_unit=" + std::to_string(stripe_size) +
               ",cb_buffer_size=" + std::to_string(stripe_size);
      j["lfs_command"] = "lfs setstripe -c " + std::to_string(stripes) + " -S " + std::to_string(stripe_size) + " " + o->path;
      notes.push_back("heuristics from seed 003: 2 stripes per writer, at most 2 writers per node, at most 66% of the OSTs" +
                      std::string(osts > 0 ? "" : " (OST count unknown: lfs df gave nothing)"));
    } else {
      notes.push_back(fs + " is not a parallel file system: stripes do not apply; measure with `anabranch bench` and use the fastest strategy");
    }
    std::string strategy = "aggregated";
    if (!o->bench.empty()) {
      std::ifstream in(o->bench);
      nlohmann::json b;
      try {
        in >> b;
      } catch (const nlohmann::json::exception&) {
        throw FormatError(o->bench + ": not a JSON file of `anabranch bench`");
      }
      double best = 0;
      for (const auto& r : b.value("results", nlohmann::json::array())) {
        const double mbs = r.value("write_mbs_median", 0.0);
        if (r.value("strategy", "") != "file-per-process" && mbs > best) {
          best = mbs;
          strategy = r["strategy"].get<std::string>();
        }
      }
      notes.push_back("fastest shared-file strategy in " + o->bench + ": " + strategy);
    }
    j["strategy"] = strategy;
    j["mpiio_hints"] = hints;
    j["anabranch_options"] = "strategy=" + strategy + " writers_per_node=" + std::to_string(writers_per_node);
    j["environment"] = "ANABRANCH_MPIIO_HINTS=" + hints;
    j["notes"] = notes;
    if (common.json) {
      print_json(j);
      return 0;
    }
    std::printf("file system   %s at %s (%s free)\n", fs.c_str(), o->path.c_str(),
                human_bytes(static_cast<double>(j["free_bytes"].get<long long>())).c_str());
    std::printf("layout        %d ranks on %d node(s), %d per node\n", ranks, nodes, per_node);
    if (fs == "lustre") {
      std::printf("stripes now   count %lld, size %lld; %d OSTs\n", j["current_stripe_count"].get<long long>(),
                  j["current_stripe_size"].get<long long>(), j["osts"].get<int>());
      std::printf("set stripes   %s\n", j["lfs_command"].get<std::string>().c_str());
    }
    std::printf("writers       %d per node, %d in all\n", writers_per_node, writers);
    std::printf("strategy      %s\n", strategy.c_str());
    std::printf("writer opts   %s\n", j["anabranch_options"].get<std::string>().c_str());
    std::printf("MPI-IO hints  export %s\n", j["environment"].get<std::string>().c_str());
    for (const auto& n : notes) std::printf("note          %s\n", n.c_str());
    return 0;
  };
}

}  // namespace anabranch::cli
