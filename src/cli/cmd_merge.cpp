// anabranch merge RES --geo MESH.slf [-o OUT.slf]: per-rank result files (RES<suffix>, as
// TELEMAC's solvers write them) or a concatenated container into one global file, as
// gretel does, streaming. Under mpiexec the ranks share the parts.
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <optional>

#include "cli/commands.hpp"
#include "core/error.hpp"
#include "core/io.hpp"
#include "core/progress.hpp"
#include "tools/merge.hpp"
#include "parallel/mpi_util.hpp"
#include "io/strategy.hpp"

namespace anabranch::cli {
namespace {

struct MergeCli {
  pio::MergeOptions o;
  bool gretel = false;
};

// gretel's 8 answers on standard input, as TELEMAC's runner writes them: geometry, its
// format, boundary file, result base name, its format, parts, planes, method.
void read_gretel_answers(std::istream& in, pio::MergeOptions& o) {
  const std::vector<std::string> a = read_answers(in);
  if (a.size() < 8) throw UsageError("gretel answers: expected 8 lines on standard input, got " + std::to_string(a.size()));
  for (int i : {1, 4})
    if (a[static_cast<std::size_t>(i)].rfind("SERAFIN", 0) != 0)
      throw UsageError("gretel answers: line " + std::to_string(i + 1) + ", the format, is '" + a[static_cast<std::size_t>(i)] +
                       "' (SERAFIN or SERAFIND; MED is not supported)");
  o.geometry = a[0];
  o.cli = a[2];
  o.base = a[3];
  o.output = o.base;
  try {
    o.nparts = std::stoi(a[5]);
    (void)std::stoi(a[6]);  // planes: taken from the parts
    (void)std::stoi(a[7]);  // method: memory use is always one variable of one frame
  } catch (...) {
    throw UsageError("gretel answers: lines 6-8 (parts, planes, method) must be integers: '" + a[5] + "', '" + a[6] + "', '" + a[7] + "'");
  }
  if (o.nparts < 1) throw UsageError("gretel answers: line 6, the number of parts, is " + a[5]);
  for (const auto* f : {&o.geometry, &o.cli})
    if (!file_exists(*f)) throw IoError("gretel answers: " + *f + " does not exist");
}

}  // namespace

Runner add_merge(CLI::App& app, Common& common) {
  auto m = std::make_shared<MergeCli>();
  auto* sub = app.add_subcommand("merge", "Merge per-rank result files (or a CONCAT container) into one global file (gretel)");
  sub->add_option("parts", m->o.base, "base name of the parts: RES for RES00003-00000..., or RES for RES-CONCAT");
  sub->add_option("--geo", m->o.geometry, "the global geometry (connectivity, IPOBO, coordinates; for 3D parts the 2D mesh "
                                          "may be given, extruded as gretel does)")->check(CLI::ExistingFile);
  sub->add_option("--cli", m->o.cli, "the global boundary file: IPARAM(8) = its boundary points, as gretel writes it")
      ->check(CLI::ExistingFile);
  sub->add_flag("--gretel", m->gretel, "read gretel's 8 answers from standard input (as TELEMAC's runner calls gretel)");
  sub->add_option("-n,--parts", m->o.nparts, "number of parts (default: found from the files)");
  sub->add_option("-o,--output", m->o.output, "output file (default: the base name)");
  sub->add_flag("--allow-partial", m->o.allow_partial, "merge the frames every part has when some parts have fewer");
  auto* strategy = sub->add_option("--strategy", m->o.strategy, "write strategy when run on several ranks (hdf5 for an "
                                                                 "output named .h5, .hdf, .hdf5 or .vtkhdf)")
                       ->capture_default_str();
  sub->add_flag("--json", common.json, "print a JSON summary on stdout");
  return [m, &common, strategy]() {
    if (m->gretel) read_gretel_answers(std::cin, m->o);
    if (m->o.base.empty()) throw UsageError("no parts given (the base name of the per-rank files)");
    if (m->o.geometry.empty()) throw UsageError("merge needs the global geometry file (--geo)");
    if (m->o.output.empty()) m->o.output = m->o.base;
    // The output's name says its format; the strategy must agree with it.
    pio::make_strategy(m->o.strategy);  // refuses unknown names, also when run alone
    if (m->o.strategy == "file-per-process") throw UsageError("merge writes one file: --strategy file-per-process does not apply");
    if (hdf5_file_name(m->o.output) && m->o.strategy != "hdf5") {
      if (strategy->count() > 0)
        throw UsageError("the output " + m->o.output + " is named as HDF5 but --strategy " + m->o.strategy +
                         " writes SERAFIN (use --strategy hdf5, or name it .slf)");
      m->o.strategy = "hdf5";
    }
    if (m->o.strategy == "hdf5" && !hdf5_file_name(m->o.output))
      throw UsageError("--strategy hdf5 writes HDF5: name the output .h5, .hdf, .hdf5 or .vtkhdf (" + m->o.output + ")");
    // Alone (no MPI launcher), merge without MPI: its start-up would cost more than the
    // merge of a small file (HDF5 through its POSIX driver).
    std::optional<pio::MpiSession> mpi;
    if (pio::started_by_launcher()) mpi.emplace(nullptr, nullptr);
    const MPI_Comm comm = mpi ? MPI_COMM_WORLD : MPI_COMM_NULL;
    int rank = 0;
    if (mpi) MPI_Comm_rank(comm, &rank);
    if (rank != 0) Progress::set_enabled(false);
    const pio::MergeReport r = pio::merge_parts(comm, m->o);
    if (rank != 0) return 0;
    if (!r.warning.empty()) std::fprintf(stderr, "anabranch merge: warning: %s\n", r.warning.c_str());
    if (common.json) {
      print_json({{"output", m->o.output}, {"parts", r.parts}, {"frames", r.frames}, {"npoin", r.npoin}, {"bytes", r.bytes},
                  {"bytes_read", r.bytes_read}, {"seconds", r.seconds}, {"peak_rss_bytes", peak_rss_bytes()},
                  {"warning", r.warning}, {"kept", r.kept}});
    } else if (r.kept) {
      std::printf("%s was written during the run (%lld frames) and its %d parts hold no frames: left as it is, nothing to merge\n",
                  m->o.output.c_str(), static_cast<long long>(r.frames), r.parts);
    } else {
      std::printf("merged %d parts into %s: %lld frames, %s nodes, %s in %.2f s (%.0f MB/s read)\n", r.parts, m->o.output.c_str(),
                  static_cast<long long>(r.frames), thousands(r.npoin).c_str(), human_bytes(static_cast<double>(r.bytes)).c_str(),
                  r.seconds, r.seconds > 0 ? static_cast<double>(r.bytes_read) / r.seconds / 1e6 : 0.0);
    }
    return 0;
  };
}

}  // namespace anabranch::cli
