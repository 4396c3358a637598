// anabranch refine IN.slf [--cli IN.cli] --levels N: split every triangle into 4 (new node
// at each edge midpoint), N times; variables interpolated, boundary file kept consistent.
#include <cstdio>

#include "cli/commands.hpp"
#include "core/error.hpp"
#include "core/io.hpp"
#include "core/progress.hpp"
#include "grid/refine.hpp"
#include "formats/boundary.hpp"
#include "formats/serafin.hpp"

namespace anabranch::cli {
namespace {

struct RefineOptions {
  std::string input, cli, output, cli_output;
  int levels = 1;
};

bool is_wall(const boundary::Line& l) { return l.lihbor == 2; }

// Bytes of the refined mesh's arrays as held in memory (IKLE, IPOBO, X and Y).
std::int64_t mesh_array_bytes(const Mesh& m) {
  return static_cast<std::int64_t>(m.ikle.size() * 4 + m.ipobo.size() * 4 + (m.x.size() + m.y.size()) * 8);
}

}  // namespace

Runner add_refine(CLI::App& app, Common& common) {
  auto o = std::make_shared<RefineOptions>();
  auto* sub = app.add_subcommand("refine", "Split every triangle (or prism column) into 4, N times; frames interpolated");
  sub->add_option("input", o->input, "input SERAFIN mesh or result file")->required()->check(CLI::ExistingFile);
  sub->add_option("--cli", o->cli, "its boundary-conditions file, refined along")->check(CLI::ExistingFile);
  sub->add_option("--levels", o->levels, "refinement levels (each multiplies elements by 4)")->capture_default_str()->check(CLI::Range(1, 8));
  sub->add_option("-o,--output", o->output, "output SERAFIN file (default: INPUT-rN.slf)");
  sub->add_option("--cli-output", o->cli_output, "output boundary file (default: the output name with .cli)");
  sub->add_flag("--json", common.json, "print a JSON summary on stdout");
  return [o, &common]() {
    const auto t0 = std::chrono::steady_clock::now();
    serafin::Reader reader(o->input);
    report_integrity("refine", reader);
    const auto& hin = reader.header();
    Mesh mesh = reader.read_mesh();
    const int nplan = mesh.nplan;

    boundary::File cli;
    std::vector<std::int32_t> order;
    if (!o->cli.empty()) {
      cli = boundary::read(o->cli);
      boundary::validate(cli, mesh.npoin2(), o->input);
      for (const auto& l : cli.lines) order.push_back(static_cast<std::int32_t>(l.n));
    } else {
      order = boundary_order_from_ipobo(mesh);
    }

    // Refine level by level, keeping each level's edge table for the frames; src maps the
    // current boundary entries to the input's boundary entries.
    std::vector<Refinement> levels;
    std::vector<std::int64_t> src(order.size());
    for (std::size_t i = 0; i < src.size(); ++i) src[i] = static_cast<std::int64_t>(i);
    for (int level = 0; level < o->levels; ++level) {
      const Busy busy("refine: level " + std::to_string(level + 1) + " of " + std::to_string(o->levels) + ", the mesh");
      Refinement r = refine(level == 0 ? mesh : levels.back().mesh, order);
      std::vector<std::int64_t> nsrc;
      order.clear();
      for (const auto& e : r.boundary) {
        std::int64_t s = src[static_cast<std::size_t>(e.from)];
        if (e.next >= 0 && !cli.lines.empty()) {
          // A midpoint between a wall and an open boundary node is a wall.
          const std::int64_t t = src[static_cast<std::size_t>(e.next)];
          if (!is_wall(cli.lines[static_cast<std::size_t>(s)]) && is_wall(cli.lines[static_cast<std::size_t>(t)])) s = t;
        }
        nsrc.push_back(s);
        order.push_back(e.node);
      }
      src = std::move(nsrc);
      if (level == 0) {
        mesh.ikle = {};  // free the input mesh early
        mesh.ipobo = {};
      } else {
        levels.back().mesh = Mesh{};
      }
      levels.push_back(std::move(r));
    }
    const Mesh& out = levels.back().mesh;
    const double mesh_seconds = seconds_since(t0);

    serafin::Header h = hin;
    h.set_mesh_sizes(out);
    if (hin.iparam[7] != 0) h.iparam[7] = static_cast<std::int32_t>(order.size()) * std::max(nplan, 1);
    const std::string output = o->output.empty() ? replace_extension(o->input, "") + "-r" + std::to_string(o->levels) + ".slf" : o->output;

    std::vector<std::string> lines;
    if (!cli.lines.empty()) {
      bool sequential = true;
      for (std::size_t i = 0; i < cli.lines.size(); ++i) sequential = sequential && cli.lines[i].k == static_cast<std::int64_t>(i + 1);
      for (std::size_t i = 0; i < order.size(); ++i) {
        const auto& l = cli.lines[static_cast<std::size_t>(src[i])];
        lines.push_back(boundary::rewrite(l, order[i], sequential ? static_cast<std::int64_t>(i + 1) : l.k));
      }
    }

    // Every output checked before anything is written.
    const std::string cli_out = lines.empty() ? std::string() : o->cli_output.empty() ? replace_extension(output, ".cli") : o->cli_output;
    if (!cli_out.empty()) refuse_open_input(cli_out);
    serafin::Writer w(output, h, out);
    const std::int64_t nframes = reader.frame_count();
    Progress progress("refine " + output, nframes * h.nvar());
    std::vector<double> a(static_cast<std::size_t>(hin.npoin)), b;
    for (std::int64_t f = 0; f < nframes; ++f) {
      w.begin_frame(reader.read_time(f));
      for (int v = 0; v < h.nvar(); ++v) {
        reader.read_values(f, v, a.data());
        for (const auto& r : levels) {
          b.resize(static_cast<std::size_t>(r.npoin2_out * std::max(nplan, 1)));
          refine_values(r, nplan, a.data(), b.data());
          std::swap(a, b);
        }
        w.write_variable(a.data());
        a.resize(static_cast<std::size_t>(hin.npoin));
        progress.update(f * h.nvar() + v + 1);
      }
    }
    const std::int64_t bytes = w.bytes_written();
    w.close();
    if (!cli_out.empty()) boundary::write(cli_out, lines);
    progress.finish();
    const double secs = seconds_since(t0);
    if (common.json) {
      print_json({{"file", output}, {"cli", cli_out}, {"levels", o->levels}, {"nelem", out.nelem}, {"npoin", out.npoin},
                  {"nptfr", order.size()}, {"frames", nframes}, {"bytes", bytes}, {"seconds", secs},
                  {"seconds_mesh", mesh_seconds}, {"seconds_write", secs - mesh_seconds},
                  {"output_mesh_array_bytes", mesh_array_bytes(out)}, {"peak_rss_bytes", peak_rss_bytes()}});
    } else {
      std::printf("wrote %s: %s elements, %s nodes, %lld frames, %s in %.2f s (peak memory %s)\n", output.c_str(),
                  thousands(out.nelem).c_str(), thousands(out.npoin).c_str(), static_cast<long long>(nframes),
                  human_bytes(static_cast<double>(bytes)).c_str(), secs, human_bytes(static_cast<double>(peak_rss_bytes())).c_str());
      if (!cli_out.empty()) std::printf("wrote %s: %zu boundary nodes\n", cli_out.c_str(), lines.size());
    }
    return 0;
  };
}

}  // namespace anabranch::cli
