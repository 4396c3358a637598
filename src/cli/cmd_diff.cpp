// anabranch diff A B: compares two results numerically, per variable and frame (max
// absolute and relative difference, where, values beyond tolerance), and their headers and
// meshes. Exit status as cmp's and h5diff's: 0 equal within tolerances, 1 different, 2
// trouble (app.cpp).
#include <cmath>
#include <cstdio>
#include <optional>
#include <regex>

#include "cli/commands.hpp"
#include "core/error.hpp"
#include "core/progress.hpp"
#include "layouts/block_io.hpp"
#include "tools/compare.hpp"

namespace anabranch::cli {
namespace {

struct DiffOptions {
  std::string a, b, frames, variables;
  std::vector<std::string> atol, rtol, tol, range_tol;
  bool values_only = false;
};

double tolerance_value(const std::string& text, const std::string& option) {
  try {
    std::size_t used = 0;
    const double v = std::stod(text, &used);
    if (used == text.size() && v >= 0 && std::isfinite(v)) return v;
  } catch (const std::exception&) {
  }
  throw UsageError(option + " " + text + ": a tolerance is a number >= 0");
}

// "--atol 1e-3" (every variable) or "--atol 'VELOCITY U=1e-3'" (that variable; its other
// tolerance is the one for every variable). pass 0: the ones for every variable; pass 1: per
// variable.
void add_tolerances(const std::vector<std::string>& given, double pio::Tolerance::*field, const std::string& option, int pass,
                    pio::CompareOptions& o) {
  for (const auto& g : given) {
    const auto eq = g.rfind('=');
    if (eq == std::string::npos) {
      if (pass == 0) o.all.*field = tolerance_value(g, option);
      continue;
    }
    if (pass == 0) continue;
    const std::string name = pio::variable_key(g.substr(0, eq));
    if (name.empty()) throw UsageError(option + " " + g + ": NAME=VALUE, NAME a variable");
    auto it = o.per_var.emplace(name, o.all).first;
    it->second.*field = tolerance_value(g.substr(eq + 1), option);
  }
}

// "0,3,5:9,-1": numbers (negative from the end) and inclusive ranges (either end may be left
// out) of 0-based frames.
std::vector<std::int64_t> parse_frames(const std::string& spec, std::int64_t frames) {
  std::vector<std::int64_t> out;
  const std::regex item(R"(\s*(-?\d+)?\s*(:)?\s*(-?\d+)?\s*)");
  std::size_t at = 0;
  while (at <= spec.size()) {
    const std::size_t end = std::min(spec.find(',', at), spec.size());
    const std::string word = spec.substr(at, end - at);
    std::smatch m;
    if (!std::regex_match(word, m, item) || (!m[1].matched && !m[2].matched))
      throw UsageError("--frames " + spec + ": '" + word + "' is not a frame (N, -N from the end) or a range (A:B)");
    auto frame = [&](const std::string& t) {
      std::int64_t k = std::stoll(t);
      if (k < 0) k += frames;
      if (k < 0 || k >= frames)
        throw UsageError("--frames " + spec + ": frame " + t + " of " + std::to_string(frames) + " compared frames");
      return k;
    };
    const std::int64_t first = m[1].matched ? frame(m[1]) : 0;
    const std::int64_t last = m[2].matched ? (m[3].matched ? frame(m[3]) : frames - 1) : first;
    if (last < first) throw UsageError("--frames " + spec + ": '" + word + "' holds no frame");
    for (std::int64_t k = first; k <= last; ++k) out.push_back(k);
    at = end + 1;
  }
  return out;
}

std::string g(double v) {
  char s[32];
  std::snprintf(s, sizeof s, "%.3g", v);
  return s;
}

nlohmann::json describe(const pio::Compared& c) {
  const auto& h = c.header();
  nlohmann::json vars = nlohmann::json::array();
  for (const auto& v : h.variables) vars.push_back(trimmed(v.name));
  return {{"name", c.name()}, {"kind", c.kind()}, {"nelem", h.nelem}, {"npoin", h.npoin}, {"variables", vars}, {"frames", c.frames()}};
}

nlohmann::json extreme_json(const pio::Extreme& e) {
  nlohmann::json j = {{"max_abs", e.abs}, {"max_rel", e.rel}, {"beyond", e.beyond}, {"nan", e.nan}};
  if (e.node_abs >= 0) {
    j["node"] = e.node_abs + 1;
    j["x"] = e.x;
    j["y"] = e.y;
    j["a"] = e.a;
    j["b"] = e.b;
  }
  if (e.node_rel >= 0) j["node_rel"] = e.node_rel + 1;
  return j;
}

// Two multi-block files (raw or HDF5, in any mix): the grid, the variables, the frames and
// every value.
int diff_blocks(const std::string& pa, const std::string& pb, const pio::CompareOptions& co, bool json) {
  const auto a = pio::describe_block_file(pa), b = pio::describe_block_file(pb);
  const auto r = pio::compare_block_files(a, b, [&](const std::string& name) {
    const auto it = co.per_var.find(pio::variable_key(name));
    const pio::Tolerance t = it == co.per_var.end() ? co.all : it->second;
    return std::make_pair(t.atol, t.rtol);
  });
  const int status = r.equal ? 0 : 1;
  if (json) {
    nlohmann::json vars = nlohmann::json::array();
    for (const auto& v : r.variables)
      vars.push_back({{"name", v.variable}, {"atol", v.atol}, {"rtol", v.rtol}, {"max_abs", v.abs}, {"max_rel", v.rel}, {"frame", v.frame},
                      {"block", v.block}, {"ijk", v.at}, {"a", v.a}, {"b", v.b}, {"beyond", v.beyond}});
    print_json({{"a", pa}, {"b", pb}, {"differences", r.differences}, {"values", r.values}, {"variables", vars},
                {"identical", r.identical}, {"equal", r.equal}, {"status", status}});
    return status;
  }
  for (const auto* i : {&a, &b})
    std::printf("%s: %s (blocks-%s): %zu blocks, %d variables, %lld frames\n", i == &a ? "A" : "B", i->path.c_str(), i->format.c_str(),
                i->blocks.size(), i->nvar(), static_cast<long long>(i->frames()));
  for (const auto& d : r.differences) std::printf("  %s\n", d.c_str());
  std::printf("%-16s %9s %9s %11s %6s %8s %16s %11s %9s\n", "variable", "atol", "rtol", "max |a-b|", "frame", "block", "i, j, k", "max rel", "beyond");
  for (const auto& v : r.variables) {
    const std::string where = v.block >= 0 ? std::to_string(v.at[0]) + ", " + std::to_string(v.at[1]) + ", " + std::to_string(v.at[2]) : "-";
    std::printf("%-16s %9s %9s %11s %6s %8s %16s %11s %9s\n", v.variable.c_str(), g(v.atol).c_str(), g(v.rtol).c_str(), g(v.abs).c_str(),
                v.frame >= 0 ? std::to_string(v.frame).c_str() : "-", v.block >= 0 ? std::to_string(v.block).c_str() : "-", where.c_str(),
                g(v.rel).c_str(), thousands(v.beyond).c_str());
  }
  if (r.identical)
    std::printf("identical: %s values\n", thousands(r.values).c_str());
  else if (r.equal)
    std::printf("equal within tolerances: %s values\n", thousands(r.values).c_str());
  else
    std::printf("different%s\n", r.differences.empty() ? "" : ": the grids, variables or frames differ");
  return status;
}

}  // namespace

Runner add_diff(CLI::App& app, Common& common) {
  auto o = std::make_shared<DiffOptions>();
  auto* sub = app.add_subcommand(
      "diff", "Compare two results numerically (per variable and frame: max abs/rel difference and where; headers; exit 0 equal, 1 different, 2 trouble)");
  sub->add_option("a", o->a, "a result file (SERAFIN or HDF5), or the base name of per-rank files (RES for RES00004-00000..., RES-CONCAT)")
      ->required();
  sub->add_option("b", o->b, "the other one")->required();
  sub->add_option("--atol", o->atol, "absolute tolerance: X for every variable, or 'NAME=X' for one (repeatable; default 0)")
      ->allow_extra_args(false);
  sub->add_option("--rtol", o->rtol,
                  "relative tolerance, of max(|a|, |b|): X or 'NAME=X' (repeatable; default 0). A value differs when "
                  "|a - b| > atol + rtol * max(|a|, |b|)")
      ->allow_extra_args(false);
  sub->add_option("--range-tol", o->range_tol,
                  "tolerance as a fraction of A's range (max - min) in each frame: X or 'NAME=X' (repeatable; added to the "
                  "absolute one): a file written with --compress rel=X against its source is within --range-tol X")
      ->allow_extra_args(false);
  sub->add_option("--tol", o->tol, "'NAME=X': the absolute tolerance of one variable (as --atol NAME=X)")->allow_extra_args(false);
  sub->add_option("--frames", o->frames, "frames to compare, 0-based: 3, -1 (the last), 2:5 (2 to 5, both included), 5: or a comma list (default: all)");
  sub->add_option("--variables", o->variables, "compare these variables only: NAME,NAME,... (default: all both files have)");
  sub->add_flag("--values-only", o->values_only, "compare the values only, not the headers and meshes");
  sub->add_flag("--json", common.json, "print the JSON report on stdout");
  return [o, &common]() -> int {
    pio::CompareOptions co;
    for (const auto& t : o->tol)
      if (t.find('=') == std::string::npos) throw UsageError("--tol " + t + ": NAME=X (for every variable: --atol X)");
    for (int pass = 0; pass < 2; ++pass) {
      add_tolerances(o->atol, &pio::Tolerance::atol, "--atol", pass, co);
      add_tolerances(o->rtol, &pio::Tolerance::rtol, "--rtol", pass, co);
      add_tolerances(o->tol, &pio::Tolerance::atol, "--tol", pass, co);
      add_tolerances(o->range_tol, &pio::Tolerance::range, "--range-tol", pass, co);
    }
    co.values_only = o->values_only;
    for (std::size_t at = 0; !o->variables.empty() && at <= o->variables.size();) {
      const std::size_t end = std::min(o->variables.find(',', at), o->variables.size());
      const std::string name = pio::variable_key(o->variables.substr(at, end - at));
      if (name.empty()) throw UsageError("--variables " + o->variables + ": NAME,NAME,...");
      co.variables.push_back(name);
      at = end + 1;
    }
    if (pio::is_block_file(o->a) || pio::is_block_file(o->b)) return diff_blocks(o->a, o->b, co, common.json);
    const auto a = pio::Compared::open(o->a);
    const auto b = pio::Compared::open(o->b);
    if (!o->frames.empty()) co.frames = parse_frames(o->frames, std::min(a->frames(), b->frames()));
    std::optional<Progress> progress;
    co.progress = [&](std::int64_t done, std::int64_t total) {
      if (!progress) progress.emplace("diff", total);
      progress->update(done);
    };
    const pio::CompareReport r = pio::compare(*a, *b, co);
    if (progress) progress->finish();
    const int status = r.equal ? 0 : 1;
    if (common.json) {
      nlohmann::json vars = nlohmann::json::array();
      for (const auto& v : r.variables) {
        nlohmann::json j = extreme_json(v.total);
        j["name"] = v.name;
        j["atol"] = v.tol.atol;
        j["rtol"] = v.tol.rtol;
        if (v.tol.range > 0) j["range_tol"] = v.tol.range;
        if (v.total.frame_abs >= 0) j["frame"] = v.total.frame_abs;
        if (v.total.frame_rel >= 0) j["frame_rel"] = v.total.frame_rel;
        nlohmann::json per = nlohmann::json::array();
        for (std::size_t f = 0; f < v.frames.size(); ++f) {
          nlohmann::json e = extreme_json(v.frames[f]);
          e["frame"] = v.frame_numbers[f];
          e["time"] = a->times()[static_cast<std::size_t>(v.frame_numbers[f])];
          per.push_back(std::move(e));
        }
        j["per_frame"] = std::move(per);
        vars.push_back(std::move(j));
      }
      print_json({{"a", describe(*a)},
                  {"b", describe(*b)},
                  {"header", {{"compared", !o->values_only}, {"same", r.header_differences.empty()}, {"differences", r.header_differences},
                              {"notes", r.notes}}},
                  {"values_compared", r.values_compared},
                  {"values", r.values},
                  {"variables", vars},
                  {"identical", r.identical},
                  {"equal", r.equal},
                  {"status", status}});
      return status;
    }
    for (const auto* c : {a.get(), b.get()}) {
      const auto& h = c->header();
      std::printf("%s: %s (%s): %s elements, %s nodes, %d variables, %s frames\n", c == a.get() ? "A" : "B", c->name().c_str(),
                  c->kind().c_str(), thousands(h.nelem).c_str(), thousands(h.npoin).c_str(), h.nvar(), thousands(c->frames()).c_str());
    }
    if (!o->values_only) {
      if (r.header_differences.empty())
        std::printf("header and mesh: the same\n");
      else
        std::printf("header and mesh: %zu difference%s (A / B)\n", r.header_differences.size(), r.header_differences.size() > 1 ? "s" : "");
      for (const auto& d : r.header_differences) std::printf("  %s\n", d.c_str());
      for (const auto& n : r.notes) std::printf("  (not counted) %s\n", n.c_str());
    }
    if (r.values_compared && !r.variables.empty()) {
      std::printf("%-16s %9s %9s %11s %6s %9s %12s %12s %11s %9s\n", "variable", "atol", "rtol", "max |a-b|", "frame", "node", "x", "y",
                  "max rel", "beyond");
      for (const auto& v : r.variables) {
        const auto& e = v.total;
        if (e.node_abs >= 0 && e.abs > 0)
          std::printf("%-16s %9s %9s %11s %6lld %9lld %12.6g %12.6g %11s %9s\n", v.name.c_str(), g(v.tol.atol).c_str(), g(v.tol.rtol).c_str(),
                      g(e.abs).c_str(), static_cast<long long>(e.frame_abs), static_cast<long long>(e.node_abs + 1), e.x, e.y, g(e.rel).c_str(),
                      thousands(e.beyond).c_str());
        else
          std::printf("%-16s %9s %9s %11s %6s %9s %12s %12s %11s %9s\n", v.name.c_str(), g(v.tol.atol).c_str(), g(v.tol.rtol).c_str(), e.node_abs >= 0 ? "0" : "-",
                      "-", "-", "-", "-", e.node_abs >= 0 ? "0" : "-", thousands(e.beyond).c_str());
      }
    }
    // Then each frame of a variable with values beyond tolerance (the first 20; --json has all).
    int shown = 0, more = 0;
    for (const auto& v : r.variables)
      for (std::size_t f = 0; f < v.frames.size(); ++f) {
        const auto& e = v.frames[f];
        if (e.beyond == 0) continue;
        if (shown == 20) {
          ++more;
          continue;
        }
        if (shown++ == 0) std::printf("frames with values beyond tolerance:\n");
        std::printf("  %-16s frame %lld (time %g): max |a-b| %s at node %lld (%.6g, %.6g), a %.9g, b %.9g; %s beyond%s\n", v.name.c_str(),
                    static_cast<long long>(v.frame_numbers[f]), a->times()[static_cast<std::size_t>(v.frame_numbers[f])], g(e.abs).c_str(),
                    static_cast<long long>(e.node_abs + 1), e.x, e.y, e.a, e.b, thousands(e.beyond).c_str(),
                    e.nan ? (" (" + thousands(e.nan) + " NaN on one side)").c_str() : "");
      }
    if (more) std::printf("  ... and %d more (--json lists every frame)\n", more);
    std::int64_t beyond = 0;
    std::string worst;
    for (const auto& v : r.variables) {
      beyond += v.total.beyond;
      if (v.total.beyond > 0) worst += (worst.empty() ? "" : ", ") + v.name;
    }
    if (r.identical)
      std::printf("identical: %s values in %zu frames\n", thousands(r.values).c_str(), r.variables.empty() ? 0 : r.variables[0].frames.size());
    else if (r.equal)
      std::printf("equal within tolerances: %s values\n", thousands(r.values).c_str());
    else if (beyond > 0)
      std::printf("different: %s of %s values beyond tolerance (%s)%s\n", thousands(beyond).c_str(), thousands(r.values).c_str(), worst.c_str(),
                  r.header_differences.empty() ? "" : ", and the headers");
    else
      std::printf("different: the headers%s\n", r.values_compared ? "" : " (values not compared)");
    return status;
  };
}

}  // namespace anabranch::cli
