// The `anabranch` commands: one source file per command, each adding itself to the app.
#pragma once
#include <CLI/CLI.hpp>
#include <functional>
#include <string>
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

}  // namespace anabranch::cli

#include "formats/partel.hpp"

namespace anabranch::cli {

// Splits input along the parts of plan (base name or CONCAT) into dir/name<suffix>.
partel::WriteReport split_file(const std::string& input, const std::string& plan, int parts, const std::string& dir,
                               const std::string& name, partel::Layout layout, int threads);

// Prints j (indented) on stdout.
void print_json(const nlohmann::json& j);
// "12,345,678"
std::string thousands(long long v);
// Seconds since t0.
double seconds_since(const std::chrono::steady_clock::time_point& t0);

}  // namespace anabranch::cli
