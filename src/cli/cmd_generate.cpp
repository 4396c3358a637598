// anabranch generate: a synthetic channel mesh of any size, its .cli file, optional prism
// planes and result frames with smooth fields. Deterministic from --seed.
#include <cstdio>

#include <unistd.h>

#include "cli/commands.hpp"
#include "core/error.hpp"
#include "grid/generate.hpp"
#include "core/progress.hpp"
#include "formats/boundary.hpp"
#include "formats/serafin.hpp"

namespace anabranch::cli {
namespace {

struct GenerateOptions {
  std::string output = "channel.slf";
  std::string cli;
  std::int64_t elements = 20000;
  int planes = 1;
  int frames = 1;
  int vars = -1;
  double dt = 60.0;
  std::uint64_t seed = 1;
  std::string precision = "single";
  std::string endian = "big";
};

boundary::Line line_for(BoundaryKind kind) {
  boundary::Line l;
  switch (kind) {
    case BoundaryKind::Wall: l.lihbor = l.liubor = l.livbor = 2; l.litbor = 2; break;
    case BoundaryKind::Inflow: l.lihbor = 4; l.liubor = l.livbor = 5; l.litbor = 5; break;
    case BoundaryKind::Outflow: l.lihbor = 5; l.liubor = l.livbor = 4; l.litbor = 4; break;
  }
  return l;
}

}  // namespace

Runner add_generate(CLI::App& app, Common& common) {
  auto o = std::make_shared<GenerateOptions>();
  auto* sub = app.add_subcommand("generate", "Generate a synthetic channel mesh (SERAFIN + .cli), optionally 3D and with frames");
  sub->add_option("-o,--output", o->output, "output SERAFIN file")->capture_default_str();
  sub->add_option("--cli", o->cli, "output boundary file (default: the output name with .cli)");
  sub->add_option("-n,--elements", o->elements, "number of 2D triangles wanted (the result is close to it)")
      ->capture_default_str()->check(CLI::Range(2LL, 2000000000LL));
  sub->add_option("--planes", o->planes, "planes of prisms (1: a 2D mesh)")->capture_default_str()->check(CLI::Range(1, 1000));
  sub->add_option("--frames", o->frames, "result frames to write")->capture_default_str()->check(CLI::Range(0, 1000000));
  sub->add_option("--vars", o->vars, "number of variables (default: 5 in 2D, 4 in 3D)")->check(CLI::Range(0, 1000));
  sub->add_option("--dt", o->dt, "time between frames, seconds")->capture_default_str();
  sub->add_option("--seed", o->seed, "random seed")->capture_default_str();
  sub->add_option("--precision", o->precision, "single or double")->capture_default_str()->check(CLI::IsMember({"single", "double"}));
  sub->add_option("--endian", o->endian, "big or little")->capture_default_str()->check(CLI::IsMember({"big", "little"}));
  sub->add_flag("--json", common.json, "print a JSON summary on stdout");
  return [o, &common]() {
    const auto t0 = std::chrono::steady_clock::now();
    ChannelOptions co;
    co.elements = o->elements;
    co.planes = o->planes;
    co.seed = o->seed;
    const bool three_d = o->planes > 1;
    ChannelMesh cm = make_channel(co);
    const Mesh& mesh = cm.mesh;

    serafin::Header h;
    h.precision = o->precision == "double" ? Precision::Double : Precision::Single;
    h.byte_order = o->endian == "little" ? ByteOrder::Little : ByteOrder::Big;
    h.set_title("anabranch generate: channel, seed " + std::to_string(o->seed));
    h.variables = synthetic_variables(o->vars >= 0 ? o->vars : (three_d ? 4 : 5), three_d);
    h.iparam[0] = 1;
    h.set_mesh_sizes(mesh);
    h.iparam[7] = static_cast<std::int32_t>(cm.boundary.size()) * mesh.nplan;  // NPTFR (3D: all planes)

    const std::string cli_path = o->cli.empty() ? replace_extension(o->output, ".cli") : o->cli;
    std::vector<std::string> lines;
    lines.reserve(cm.boundary.size());
    for (std::size_t k = 0; k < cm.boundary.size(); ++k)
      lines.push_back(boundary::format_telemac(line_for(cm.boundary[k].kind), cm.boundary[k].node, static_cast<std::int64_t>(k + 1)));

    serafin::Writer w(o->output, h, mesh);
    Progress progress("generate " + o->output, static_cast<std::int64_t>(o->frames) * h.nvar());
    std::vector<double> values;
    for (int f = 0; f < o->frames; ++f) {
      const double t = f * o->dt;
      w.begin_frame(t);
      for (int v = 0; v < h.nvar(); ++v) {
        synthetic_values(mesh, v, three_d, t, values);
        w.write_variable(values.data());
        progress.update(static_cast<std::int64_t>(f) * h.nvar() + v + 1);
      }
    }
    const std::int64_t bytes = w.bytes_written();
    w.close();
    try {
      boundary::write(cli_path, lines);
    } catch (...) {
      ::unlink(o->output.c_str());  // the pair is the output: no mesh without its .cli
      throw;
    }
    progress.finish();
    const double secs = seconds_since(t0);
    if (common.json) {
      print_json({{"file", o->output}, {"cli", cli_path}, {"nelem", mesh.nelem}, {"npoin", mesh.npoin},
                  {"ndp", mesh.ndp}, {"nplan", mesh.nplan}, {"nptfr", cm.boundary.size()}, {"variables", h.nvar()},
                  {"frames", o->frames}, {"bytes", bytes}, {"seconds", secs}});
    } else {
      std::printf("wrote %s: %s %s, %s nodes, %d variables, %d frames, %s in %.2f s\n", o->output.c_str(),
                  thousands(mesh.nelem).c_str(), three_d ? "prisms" : "triangles", thousands(mesh.npoin).c_str(), h.nvar(),
                  o->frames, human_bytes(static_cast<double>(bytes)).c_str(), secs);
      std::printf("wrote %s: %zu boundary nodes\n", cli_path.c_str(), cm.boundary.size());
    }
    return 0;
  };
}

}  // namespace anabranch::cli
