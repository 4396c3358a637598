// anabranch bench-plot RESULTS.json... -o PLOT.png: runs the plotting script of the Python
// package (matplotlib) on `anabranch bench` results.
#include <unistd.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "core/outputs.hpp"
#include "core/error.hpp"
#include "core/io.hpp"

namespace anabranch::cli {

Runner add_bench_plot(CLI::App& app, Common&) {
  auto files = std::make_shared<std::vector<std::string>>();
  auto output = std::make_shared<std::string>("bench.png");
  auto metric = std::make_shared<std::string>("to_disk_mbs_median");
  auto* sub = app.add_subcommand("bench-plot", "Plot `anabranch bench -o` results (strategies x rank counts) to a PNG");
  sub->add_option("results", *files, "JSON files from `anabranch bench -o`, one per rank count")->required()->check(CLI::ExistingFile);
  sub->add_option("-o,--output", *output, "PNG file")->capture_default_str();
  sub->add_option("--metric", *metric, "write_mbs_median, to_disk_mbs_median or read_mbs_median")->capture_default_str();
  return [files, output, metric]() -> int {
    const char* env = std::getenv("ANABRANCH_BENCH_PLOT");
    const std::string script = env ? env : ANABRANCH_SOURCE_DIR "/bindings/python/anabranch/bench_plot.py";
    if (!file_exists(script)) throw IoError("the plotting script is missing: " + script + " (set ANABRANCH_BENCH_PLOT)");
    const char* env_py = std::getenv("PYTHON");
    std::string py = env_py ? env_py : "python3";
#ifdef ANABRANCH_PYTHON
    if (!env_py && file_exists(ANABRANCH_PYTHON)) py = ANABRANCH_PYTHON;
#endif
    std::vector<std::string> args = {py, script, "-o", *output, "--metric", *metric};
    args.insert(args.end(), files->begin(), files->end());
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    unblock_termination_signals();  // the plotting program is interrupted as any other
    ::execvp(argv[0], argv.data());
    throw IoError::from_errno("cannot run", args[0]);
  };
}

}  // namespace anabranch::cli
