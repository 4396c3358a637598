// anabranch balance BLOCKS -n P: multi-block structured grids dealt to P processes by
// work, with METIS (block graph: cells as vertex weights, shared face cells as edge
// weights) or greedy longest-processing-time, splitting blocks when the balance needs it;
// compared with the round-robin assignment codes use by default.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <numeric>

#include "cli/cgns_helper.hpp"
#include "cli/commands.hpp"
#include "core/error.hpp"
#include "blockformats/blocks.hpp"
#include "partition/balance.hpp"
#include "partition/partitioner.hpp"

namespace anabranch::cli {
namespace {

struct BalanceCli {
  std::string file, method;
  int procs = 0;
  double comm_weight = 1.0, tolerance = 1.03;
  bool no_split = false, details = false;
};

}  // namespace

Runner add_balance(CLI::App& app, Common& common) {
  auto o = std::make_shared<BalanceCli>();
  auto* sub = app.add_subcommand("balance", "Deal the blocks of a multi-block grid to P processes by work (COSA's load balancing)");
  sub->add_option("blocks", o->file, "block file: JSON {\"blocks\": [...], \"faces\": [...]}, text \"id ni nj nk\" lines, a PLOT3D grid or a CGNS file (zones and their 1-to-1 faces)")
      ->required()->check(CLI::ExistingFile);
  sub->add_option("-n,--procs", o->procs, "number of processes")->required();
  sub->add_option("--method", o->method, "metis (work and communication) or greedy (longest processing time first)")
      ->check(CLI::IsMember({"metis", "greedy"}));
  sub->add_option("--comm-weight", o->comm_weight, "METIS edge weight per shared face cell (0: balance work only)")
      ->capture_default_str();
  sub->add_option("--tolerance", o->tolerance, "wanted max/mean load; blocks are split until it is met")->capture_default_str();
  sub->add_flag("--no-split", o->no_split, "never split blocks");
  sub->add_flag("--details", o->details, "print the load of every process and every assignment");
  sub->add_flag("--json", common.json, "print the report as JSON on stdout");
  return [o, &common]() {
    if (o->procs < 1) throw UsageError("the number of processes must be at least 1 (-n)");
    if (o->tolerance < 1.0) throw UsageError("--tolerance is a max/mean ratio: at least 1");
    if (!(o->comm_weight >= 0)) throw UsageError("--comm-weight is a weight: at least 0");
    if (o->method.empty()) o->method = metis_available() ? "metis" : "greedy";
    blocks::File file;
    if (cgns_file_name(o->file)) {  // the zones' dimensions and their 1-to-1 faces, from the CGNS helper
      std::string text;
      run_cgns_helper({"blocks", o->file}, nullptr, [&](int fd) {
        char buf[65536];
        ssize_t r;
        while ((r = ::read(fd, buf, sizeof buf)) > 0) text.append(buf, static_cast<std::size_t>(r));
      });
      file = blocks::parse(text, o->file);
    } else {
      file = blocks::read(o->file);
    }
    BalanceOptions opt;
    opt.method = parse_balance_method(o->method);
    opt.comm_weight = o->comm_weight;
    opt.split = !o->no_split;
    opt.tolerance = o->tolerance;
    const auto r = balance(file.blocks, file.faces, o->procs, opt);
    const double total = std::accumulate(r.load.begin(), r.load.end(), 0.0);
    const auto [lo, hi] = std::minmax_element(r.load.begin(), r.load.end());
    nlohmann::json assignment = nlohmann::json::array();
    for (std::size_t i = 0; i < r.pieces.size(); ++i) {
      const auto& p = r.pieces[i];
      nlohmann::json a = {{"block", p.block}, {"process", r.process[i]}, {"weight", p.weight}};
      if (p.count > 1) {
        a["piece"] = p.index;
        a["pieces"] = p.count;
        a["range"] = {{p.range[0][0], p.range[0][1]}, {p.range[1][0], p.range[1][1]}, {p.range[2][0], p.range[2][1]}};
      }
      assignment.push_back(a);
    }
    if (common.json) {
      // The grid (ids and dimensions) makes the report a block layout the I/O library reads.
      nlohmann::json grid = nlohmann::json::array();
      for (const auto& b : file.blocks)
        if (b.has_cells()) grid.push_back({{"id", b.id}, {"cells", b.cells}});
      nlohmann::json report = {{"blocks", file.blocks.size()},
                  {"faces", file.faces.size()},
                  {"processes", o->procs},
                  {"method", o->method},
                  {"pieces", r.pieces.size()},
                  {"splits", r.splits},
                  {"load", {{"min", *lo}, {"mean", total / o->procs}, {"max", *hi}, {"per_process", r.load}}},
                  {"imbalance", r.imbalance},
                  {"cut_cells", r.cut_cells},
                  {"roundrobin_imbalance", r.roundrobin_imbalance},
                  {"roundrobin_cut_cells", r.roundrobin_cut_cells},
                  {"assignment", assignment}};
      if (grid.size() == file.blocks.size()) report["grid"] = grid;
      print_json(report);
      return 0;
    }
    std::printf("%zu blocks (%zu faces) on %d processes, %s%s\n", file.blocks.size(), file.faces.size(), o->procs,
                o->method.c_str(), r.splits ? (", " + std::to_string(r.splits) + " splits into " + std::to_string(r.pieces.size()) + " pieces").c_str() : "");
    std::printf("  %-12s %12s %12s %12s %10s %14s\n", "", "min load", "mean load", "max load", "imbalance", "cut face cells");
    std::printf("  %-12s %12.0f %12.0f %12.0f %10.3f %14.0f\n", o->method.c_str(), *lo, total / o->procs, *hi, r.imbalance, r.cut_cells);
    std::printf("  %-12s %12s %12.0f %12s %10.3f %14.0f\n", "round-robin", "", total / o->procs, "", r.roundrobin_imbalance,
                r.roundrobin_cut_cells);
    if (o->details) {
      for (int p = 0; p < o->procs; ++p) std::printf("  process %5d  load %12.0f\n", p, r.load[static_cast<std::size_t>(p)]);
      for (std::size_t i = 0; i < r.pieces.size(); ++i) {
        const auto& p = r.pieces[i];
        std::printf("  block %6lld", static_cast<long long>(p.block));
        if (p.count > 1)
          std::printf(" piece %d/%d [%lld:%lld, %lld:%lld, %lld:%lld]", p.index + 1, p.count, static_cast<long long>(p.range[0][0]),
                      static_cast<long long>(p.range[0][1]), static_cast<long long>(p.range[1][0]), static_cast<long long>(p.range[1][1]),
                      static_cast<long long>(p.range[2][0]), static_cast<long long>(p.range[2][1]));
        std::printf(" -> process %d\n", r.process[i]);
      }
    }
    return 0;
  };
}

}  // namespace anabranch::cli
