// The `anabranch` commands: one source file per command, each adding itself to the app.
#pragma once
#include <CLI/CLI.hpp>
#include <filesystem>
#include <functional>
#include <istream>
#include <string>
#include <system_error>
#include <vector>

#include <nlohmann/json.hpp>

namespace anabranch::cli {

// Options every command shares.
struct Common {
  bool json = false;  // print a machine-readable summary on stdout instead of text
};

using Runner = std::function<int()>;

// Each add_* function declares a subcommand and returns what runs it.
Runner add_info(CLI::App& app, Common& common);
Runner add_generate(CLI::App& app, Common& common);
Runner add_refine(CLI::App& app, Common& common);
Runner add_partition(CLI::App& app, Common& common);
Runner add_merge(CLI::App& app, Common& common);
Runner add_split(CLI::App& app, Common& common);
Runner add_convert(CLI::App& app, Common& common);
Runner add_balance(CLI::App& app, Common& common);
Runner add_tune(CLI::App& app, Common& common);
Runner add_bench(CLI::App& app, Common& common);
Runner add_bench_plot(CLI::App& app, Common& common);
Runner add_diff(CLI::App& app, Common& common);

}  // namespace anabranch::cli

#include "core/error.hpp"
#include "formats/partel.hpp"
#include "formats/serafin.hpp"

namespace anabranch::cli {

// Splits input along the parts of plan (base name or CONCAT) into dir/name<suffix>; frames
// false: header and mesh only.
partel::WriteReport split_file(const std::string& input, const std::string& plan, int parts, const std::string& dir,
                               const std::string& name, partel::Layout layout, int threads, bool frames = true);

// The executable's entry point: parses argv, runs the command, prints errors (one line).
int main(int argc, char** argv);
// The library's: runs `anabranch ARGS... --json` in this process and returns the JSON
// report (empty for commands without one, and on ranks other than 0 under MPI); errors are
// thrown as anabranch::Error, except those a command reports in its report (info's "error"
// entries, bench's "verified").
std::string run_for_report(const std::vector<std::string>& args);

// True while run_for_report runs a command (messages meant for a terminal stay quiet).
bool in_library();

// What a command says of an input read whole but not quite clean (serafin::Integrity): a
// torn last frame is a warning; one extra byte after the last record (a trailing newline
// some tools leave, ignored as partel ignores it) only a note, in plain words.
void report_integrity(const char* command, const serafin::Reader& reader);

// What other readers need to read a file compressed with zstd (HDF5's filter 32015, which
// their HDF5 library does not have built in): one indented line, printed when `compression`
// (a SPEC, or info's description of the filters) names zstd.
void say_zstd_plugin(const std::string& compression, const char* indent);

// Prints j (indented) on stdout (or hands it to run_for_report).
void print_json(const nlohmann::json& j);
// "12,345,678"
std::string thousands(long long v);
// The answers a TELEMAC tool (partel, gretel) reads on standard input: one per line,
// trimmed, a file name's quotes removed.
std::vector<std::string> read_answers(std::istream& in);
// Seconds since t0.
double seconds_since(const std::chrono::steady_clock::time_point& t0);

// "dir/mesh.slf" + ".cli" -> "dir/mesh.cli"; a name without extension gets it appended.
inline std::string replace_extension(const std::string& path, const std::string& ext) {
  const auto slash = path.find_last_of('/');
  const auto dot = path.find_last_of('.');
  if (dot == std::string::npos || (slash != std::string::npos && dot < slash)) return path + ext;
  return path.substr(0, dot) + ext;
}

// An output folder: made, with its parents, when it does not exist (as mkdir -p).
inline void make_folder(const std::string& path) {
  std::error_code ec;
  std::filesystem::create_directories(path, ec);
  if (ec) throw IoError("cannot create the output folder " + path + ": " + ec.message());
}

}  // namespace anabranch::cli
