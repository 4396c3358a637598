// anabranch bench: the command line over the bench engine (tools/bench.hpp): its options,
// its JSON report on stdout or in a file, exit 1 when a file was not verified. anabranch
// bench-plot RESULTS.json... -o PLOT.png: runs the plotting script of the Python package
// (matplotlib) on its results.
#include <unistd.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "core/error.hpp"
#include "core/io.hpp"
#include "core/outputs.hpp"
#include "parallel/mpi_util.hpp"
#include "tools/bench.hpp"

namespace anabranch::cli {

Runner add_bench(CLI::App& app, Common& common) {
  auto o = std::make_shared<pio::BenchOptions>();
  auto* sub = app.add_subcommand("bench", "Measure the write strategies on a real or generated decomposition (run under mpiexec)");
  sub->add_option("--generate", o->generate, "generated channel of N triangles (default when no --mesh)")->capture_default_str();
  sub->add_option("--mesh", o->mesh, "a SERAFIN mesh: its geometry, split by the Hilbert curve or by --plan")->check(CLI::ExistingFile);
  sub->add_option("--plan", o->plan, "parts of the mesh from `anabranch partition` (base name or CONCAT; as many as ranks)");
  sub->add_option("--vars", o->vars, "variables per frame")->capture_default_str()->check(CLI::Range(1, 1000));
  sub->add_option("--frames", o->frames, "frames per run")->capture_default_str()->check(CLI::Range(1, 100000));
  sub->add_option("--strategies", o->strategies, "all, or a comma-separated list")->capture_default_str();
  sub->add_option("--repeat", o->repeat, "measured runs per strategy (after one warm-up)")->capture_default_str()->check(CLI::Range(1, 1000));
  sub->add_option("--writers", o->writers, "writers per node (aggregated strategies, hdf5), and readers with --read: auto or a number")
      ->capture_default_str()
      ->check([](const std::string& v) {
        if (v == "auto") return std::string();
        try {
          return std::stoi(v) >= 1 && std::stoi(v) <= 1024 ? std::string() : "--writers: auto or 1..1024";
        } catch (...) {
          return std::string("--writers: auto or 1..1024");
        }
      });
  sub->add_flag("--read", o->read,
                "also measure reading (a restart): every read strategy, each rank its own nodes, open/read/close apart, "
                "from a dropped page cache where allowed, beside plain pread of the same bytes");
  sub->add_option("--dir", o->dir, "folder for the files (put it on the file system to measure)")->capture_default_str();
  sub->add_option("-o,--output", o->output, "write the JSON results here");
  sub->add_flag("--json", common.json, "print the JSON results on stdout");
  return [o, &common]() {
    pio::MpiSession mpi(nullptr, nullptr);
    const MPI_Comm comm = MPI_COMM_WORLD;
    const nlohmann::json j = pio::bench(comm, *o, !common.json);
    int rank = 0;
    MPI_Comm_rank(comm, &rank);
    if (rank == 0) {
      if (common.json) print_json(j);
      if (!o->output.empty()) {
        AtomicFileSink sink(o->output, 1 << 16);
        const std::string text = j.dump(2) + "\n";
        sink.write(text.data(), text.size());
        sink.commit();
      }
    }
    return pio::bench_verified(j) ? 0 : 1;
  };
}

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
