// anabranch: partition meshes, write one shared file from all MPI ranks, merge and convert.
#include <cstdio>
#include <iostream>

#include "cli/commands.hpp"
#include "core/error.hpp"
#include "core/progress.hpp"
#include "core/provenance.hpp"
#include "pio/mpi_util.hpp"

namespace anabranch::cli {

void print_json(const nlohmann::json& j) { std::cout << j.dump(2) << std::endl; }

std::string thousands(long long v) {
  std::string s = std::to_string(v < 0 ? -v : v);
  for (int i = static_cast<int>(s.size()) - 3; i > 0; i -= 3) s.insert(static_cast<std::size_t>(i), ",");
  return v < 0 ? "-" + s : s;
}

double seconds_since(const std::chrono::steady_clock::time_point& t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace anabranch::cli

int main(int argc, char** argv) {
  using namespace anabranch;
  CLI::App app{"anabranch: scalable I/O for parallel mesh-based simulations (SERAFIN/TELEMAC, MPI-IO, HDF5)",
               "anabranch"};
  app.require_subcommand(1);
  // One line on bad usage, like every other error.
  app.failure_message([](const CLI::App* a, const CLI::Error& e) {
    std::string cmd = a->get_name();
    for (const auto* sub : a->get_subcommands()) cmd += " " + sub->get_name();
    return cmd + ": error: " + e.what() + " (see --help)\n";
  });
  app.set_version_flag("--version", std::string("anabranch ") + ANABRANCH_VERSION);
  bool quiet = false;
  app.add_flag("-q,--quiet", quiet, "no progress output on stderr");
  cli::Common common;
  std::vector<std::pair<CLI::App*, cli::Runner>> runners;
  auto add = [&](cli::Runner (*fn)(CLI::App&, cli::Common&)) {
    auto before = app.get_subcommands({});
    cli::Runner r = fn(app, common);
    auto after = app.get_subcommands({});
    runners.emplace_back(after.back(), std::move(r));
    (void)before;
  };
  add(cli::add_info);
  add(cli::add_generate);
  add(cli::add_refine);
  add(cli::add_partition);
  add(cli::add_merge);
  add(cli::add_split);
  add(cli::add_convert);
  add(cli::add_balance);
  add(cli::add_tune);
  add(cli::add_bench);
  add(cli::add_bench_plot);

  provenance::set_command_line(argc, argv);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  if (quiet) Progress::set_enabled(false);
  // Under mpiexec, failures are agreed across ranks: rank 0 alone reports them.
  auto reporting = [] { return pio::MpiSession::world_rank() == 0; };
  for (auto& [sub, run] : runners) {
    if (!sub->parsed()) continue;
    try {
      return run();
    } catch (const anabranch::Error& e) {
      if (reporting()) std::fprintf(stderr, "anabranch %s: error: %s\n", sub->get_name().c_str(), e.what());
      return 1;
    } catch (const std::bad_alloc&) {
      std::fprintf(stderr, "anabranch %s: error: out of memory\n", sub->get_name().c_str());
      return 1;
    } catch (const std::exception& e) {
      std::fprintf(stderr, "anabranch %s: error: %s\n", sub->get_name().c_str(), e.what());
      return 1;
    }
  }
  return 0;
}
