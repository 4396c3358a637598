// The command line: every command on one CLI11 app, run by the executable (main.cpp) and
// by the library (ab_command: the same code, the JSON report returned instead of printed).
#include <algorithm>
#include <cstring>
#include <csignal>
#include <cstdio>
#include <iostream>
#include <optional>

#include "cli/commands.hpp"
#include "core/error.hpp"
#include "core/io.hpp"
#include "core/outputs.hpp"
#include "core/progress.hpp"
#include "core/provenance.hpp"
#include "parallel/mpi_util.hpp"
#include "h5/vtkhdf.hpp"

namespace anabranch::cli {

namespace {
thread_local std::string* g_report = nullptr;  // set while the library runs a command
}

bool in_library() { return g_report != nullptr; }

std::vector<std::string> read_answers(std::istream& in) {
  std::vector<std::string> a;
  for (std::string line; std::getline(in, line);) {
    std::string s = trimmed(line);  // also drops a DOS line end
    if (s.size() >= 2 && (s.front() == '\'' || s.front() == '"') && s.back() == s.front()) s = s.substr(1, s.size() - 2);
    a.push_back(std::move(s));
  }
  return a;
}

void print_json(const nlohmann::json& j) {
  if (g_report)
    *g_report = j.dump();
  else
    std::cout << j.dump(2) << std::endl;
}

std::string thousands(long long v) {
  std::string s = std::to_string(v < 0 ? -v : v);
  for (int i = static_cast<int>(s.size()) - 3; i > 0; i -= 3) s.insert(static_cast<std::size_t>(i), ",");
  return v < 0 ? "-" + s : s;
}

void say_zstd_plugin(const std::string& compression, const char* indent) {
  if (compression.find("zstd") == std::string::npos) return;
  std::printf("%sother readers need HDF5's zstd filter (32015): h5py after `import hdf5plugin`; ParaView and h5dump with "
              "HDF5_PLUGIN_PATH set to hdf5plugin's plugins folder (docs/formats/hdf5.md#compressed-frames)\n",
              indent);
}

void report_integrity(const char* command, const serafin::Reader& reader) {
  const auto& i = reader.integrity();
  if (i.message.empty()) return;
  std::fprintf(stderr, "anabranch %s: %s: %s\n", command, i.status == serafin::Integrity::StrayByte ? "note" : "warning",
               i.message.c_str());
}

double seconds_since(const std::chrono::steady_clock::time_point& t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

namespace {

// Builds the app and runs the one command argv names. library: errors are thrown, never
// printed, and usage problems become UsageError.
int run(int argc, char** argv, bool library) {
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
  app.add_flag("-q,--quiet", quiet, "no progress output on stderr (accepted before or after the command)");
  app.fallthrough();  // subcommands made from here on pass -q up to the app
  Common common;
  std::vector<std::pair<CLI::App*, Runner>> runners;
  auto add = [&](Runner (*fn)(CLI::App&, Common&)) {
    auto before = app.get_subcommands({});
    Runner r = fn(app, common);
    auto after = app.get_subcommands({});
    runners.emplace_back(after.back(), std::move(r));
    (void)before;
  };
  add(add_info);
  add(add_diff);
  add(add_generate);
  add(add_refine);
  add(add_partition);
  add(add_merge);
  add(add_split);
  add(add_convert);
  add(add_balance);
  add(add_tune);
  add(add_bench);
  add(add_bench_plot);

  if (!library) provenance::set_command_line(argc, argv);  // a library caller's own command line stays
  // The first word that is not an option names the command: an unknown one is said so.
  std::string command;
  for (int i = 1; i < argc; ++i) {
    const std::string word = argv[i];
    if (word.empty() || word[0] == '-') continue;
    command = word;
    const auto subs = app.get_subcommands({});
    if (std::none_of(subs.begin(), subs.end(), [&](const CLI::App* sub) { return sub->check_name(word); })) {
      std::string known;
      for (const auto* sub : subs) known += (known.empty() ? "" : ", ") + sub->get_name();
      const std::string message = "unknown command '" + word + "' (commands: " + known + ")";
      if (library) throw UsageError(message);
      std::fprintf(stderr, "anabranch: error: %s\n", message.c_str());
      return 2;
    }
    break;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (library) throw UsageError(std::string(argv[argc > 2 ? 2 : 0]) + ": " + e.what());
    // CLI11's own codes (105, 106, ...) say nothing to a batch script: the command line
    // itself is 2 (an input that does not exist among it: CLI11's Existing* validators); a
    // value the command refuses (out of its range, not one of its names) is 1.
    const int rc = app.exit(e);
    const bool refused = dynamic_cast<const CLI::ValidationError*>(&e) && !std::strstr(e.what(), " does not exist: ");
    return rc == 0 ? 0 : refused ? 1 : 2;
  }
  // diff answers 1 for "different", as cmp does: its failures are 2.
  const int failed = command == "diff" ? 2 : 1;
  if (quiet) Progress::set_enabled(false);
  // Under mpiexec, failures are agreed across ranks: rank 0 alone reports them.
  auto reporting = [] { return pio::MpiSession::world_rank() == 0; };
  const InputScope inputs;  // no output of this command may replace a file it read
  const pio::FinalizeLater finalize_after_report;
  for (auto& [sub, runner] : runners) {
    if (!sub->parsed()) continue;
    if (library) return runner();
    try {
      return runner();
    } catch (const anabranch::Error& e) {
      // A refusal made before MPI started, under a launcher: MPI starts now, so that rank 0
      // says it and every rank leaves with it (MPI_Finalize waits for all; a rank leaving
      // first would have the launcher end rank 0 before it spoke).
      std::optional<pio::MpiSession> together;
      if (pio::started_by_launcher() && !pio::MpiSession::started()) together.emplace(nullptr, nullptr);
      if (reporting()) std::fprintf(stderr, "anabranch %s: error: %s\n", sub->get_name().c_str(), e.what());
      return failed;
    } catch (const std::bad_alloc&) {
      std::fprintf(stderr, "anabranch %s: error: out of memory\n", sub->get_name().c_str());
      return failed;
    } catch (const std::exception& e) {
      std::fprintf(stderr, "anabranch %s: error: %s\n", sub->get_name().c_str(), e.what());
      return failed;
    }
  }
  return 0;
}

}  // namespace

// Called as `partel` or `gretel` (a link to the executable in a folder TELEMAC's
// configuration names), anabranch answers as they do: their answers on standard input.
int main(int argc, char** argv) {
  // A file-size limit (RLIMIT_FSIZE) must fail the write (EFBIG, one line, temporaries
  // removed), not kill the process with SIGXFSZ and leave them behind.
  std::signal(SIGXFSZ, SIG_IGN);
  reserve_descriptors(1024);       // while the process has one thread (io.hpp)
  remove_temporaries_on_signals();  // first: every later thread (MPI's) inherits the mask
  const std::string self = argc > 0 ? argv[0] : "";
  const std::string name = self.substr(self.find_last_of('/') == std::string::npos ? 0 : self.find_last_of('/') + 1);
  if (name == "partel" || name == "gretel") {
    std::vector<std::string> all = {"anabranch", name == "partel" ? "partition" : "merge", name == "partel" ? "--partel" : "--gretel"};
    for (int i = 1; i < argc; ++i) all.emplace_back(argv[i]);
    std::vector<char*> args;
    for (auto& a : all) args.push_back(a.data());
    return run(static_cast<int>(args.size()), args.data(), false);
  }
  // A command naming an HDF5 file opens the HDF5 library before its reading starts (with a
  // cold cache, a library opened later is read from the disk behind the command's own reads:
  // convert to HDF5 of 208 MB took 0.37 s, not 0.29).
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (hdf5_file_name(a.substr(a.find('=') == std::string::npos ? 0 : a.find('=') + 1))) {
      try {
        pio::vtkhdf::load_library();
      } catch (const Error&) {  // said again where the command uses HDF5
      }
      break;
    }
  }
  return run(argc, argv, false);
}

std::string run_for_report(const std::vector<std::string>& args) {
  std::vector<std::string> all = {"anabranch", "-q"};
  all.insert(all.end(), args.begin(), args.end());
  all.push_back("--json");
  std::vector<char*> argv;
  for (auto& a : all) argv.push_back(a.data());
  std::string report;
  g_report = &report;
  struct Reset {
    ~Reset() { g_report = nullptr; }
  } reset;
  const int rc = run(static_cast<int>(argv.size()), argv.data(), true);
  // Commands that report failures inside their report (info, bench) return it.
  if (rc != 0 && report.empty()) throw Error("anabranch " + (args.empty() ? std::string() : args[0]) + " failed");
  return report;
}

}  // namespace anabranch::cli
