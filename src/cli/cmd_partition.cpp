// anabranch partition: a partel replacement. Mesh (+ .cli + extra files) -> P parts in
// TELEMAC's per-rank layout or its concatenated variant, with a quality report.
#include <malloc.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <iostream>
#include <sstream>
#include <thread>

#include "cli/commands.hpp"
#include "grid/contour.hpp"
#include "core/error.hpp"
#include "core/io.hpp"
#include "grid/plan.hpp"
#include "core/progress.hpp"
#include "grid/refine.hpp"
#include "formats/boundary.hpp"
#include "formats/epart.hpp"
#include "formats/partel.hpp"
#include "formats/serafin.hpp"
#include "partition/partitioner.hpp"
#include "parallel/mpi_util.hpp"
#include "partition/partition_distributed.hpp"
#include "h5/vtkhdf.hpp"

namespace anabranch::cli {
namespace {

struct PartitionOptions {
  std::string mesh, cli, output = ".", names, method, layout = "telemac", weights;
  std::string sections, zones, weirs;  // case files split per part as partel does
  std::vector<std::string> also;
  int parts = 0;
  int threads = 0;
  bool partel = false;
  std::string split_on;  // partel mode: the geometry whose parts exist
  bool split_headers_only = false;  // ... and the parts get header and mesh only
  std::string partition;  // --partition: each element's part, from a file
  bool dry_run = false;
  int ranks = 0;  // --dry-run: the ranks to estimate for (0: those it runs on)
};

std::string basename_of(const std::string& p) {
  auto s = p.find_last_of('/');
  return s == std::string::npos ? p : p.substr(s + 1);
}

// 2D base elements of a mesh: the first NELEM2 elements' first NDP2 nodes.
std::vector<std::int32_t> base_ikle(const serafin::Reader& r, int& ndp2) {
  auto ikle = r.read_ikle();
  const auto& h = r.header();
  if (h.nplan() <= 1) {
    ndp2 = h.ndp;
    return ikle;
  }
  if (h.ndp != 6) throw UsageError(r.name() + ": a 3D mesh must be made of prisms (NDP 6), this one has NDP " + std::to_string(h.ndp));
  ndp2 = 3;
  const std::int64_t ne2 = h.nelem / (h.nplan() - 1);
  std::vector<std::int32_t> base(static_cast<std::size_t>(ne2 * 3));
  for (std::int64_t e = 0; e < ne2; ++e)
    for (int k = 0; k < 3; ++k) base[static_cast<std::size_t>(e * 3 + k)] = ikle[static_cast<std::size_t>(e * 6 + k)];
  return base;
}

std::vector<std::int32_t> read_weights(const std::string& path, std::int64_t nelem) {
  std::istringstream in(read_text_file(path));  // read as an input: no output may replace it
  std::vector<std::int32_t> w;
  long long v;
  while (in >> v) {
    if (v < 0 || v > 1000000000) throw FormatError(path + ": weight " + std::to_string(w.size() + 1) + " = " + std::to_string(v) + " is out of range 0..1e9");
    w.push_back(static_cast<std::int32_t>(v));
  }
  if (!in.eof()) throw FormatError(path + ": entry " + std::to_string(w.size() + 1) + " is not an integer");
  if (static_cast<std::int64_t>(w.size()) != nelem)
    throw UsageError(path + ": " + std::to_string(w.size()) + " weights for " + std::to_string(nelem) + " (2D) elements");
  return w;
}

// ANABRANCH_TELEMAC_RESTART=1: TELEMAC's previous computation file (the runner names it
// T2DPRE, T3DPRE, ...) is not split: its parts get the header and mesh only, and every rank
// reads its values from the one file during the run (integrations/telemac's READ_DATASET).
bool restart_from_one_file(const std::string& input) {
  const char* env = std::getenv("ANABRANCH_TELEMAC_RESTART");
  if (!env || std::string(env) != "1") return false;
  const std::string name = basename_of(input);
  return name.size() == 6 && name.compare(3, 3, "PRE") == 0;
}

// partel's standard-input answers (TELEMAC 2018: 10 lines; v8: 11, the last YES/NO for
// concatenation).
void read_partel_answers(std::istream& in, PartitionOptions& o) {
  const std::vector<std::string> a = read_answers(in);
  if (a.size() < 10)
    throw UsageError("partel answers: expected 10 (TELEMAC 2018) or 11 (v8) lines on standard input, got " + std::to_string(a.size()));
  const std::string input = a[0], cli = a[2], geometry = a[8];
  try {
    o.parts = std::stoi(a[3]);
  } catch (...) {
    throw UsageError("partel answers: line 4, the number of parts, is '" + a[3] + "'");
  }
  if (a[4] != "1" && a[4] != "2") throw UsageError("partel answers: line 5, the method, is '" + a[4] + "' (1 METIS, 2 SCOTCH)");
  o.method = a[4] == "1" ? "metis" : "scotch";
  o.sections = a[5];
  o.zones = a[6];
  o.weirs = a[7];
  for (const auto* f : {&o.sections, &o.zones, &o.weirs})
    if (!f->empty() && !file_exists(*f)) throw IoError("partel answers: " + *f + " does not exist");
  o.layout = "telemac";
  if (a.size() >= 11 && (a[10] == "YES" || a[10] == "yes" || a[10] == "TRUE")) o.layout = "concat";
  // partel's second mode: another file on a geometry whose parts exist is split on them.
  const bool parts_exist = o.layout == "concat" ? file_exists(geometry + "-CONCAT") : file_exists(geometry + partel::suffix(o.parts, 0));
  if (input != geometry && parts_exist) o.split_on = geometry;
  o.split_headers_only = !o.split_on.empty() && restart_from_one_file(input);
  o.mesh = input;
  o.cli = cli;
  o.output = ".";
  o.names = basename_of(input) + "," + basename_of(cli);
}

// Where the parts go and under which names (--names GEO,CLI, or the input files' names).
partel::Names output_names(const PartitionOptions& o, bool with_cli) {
  partel::Names names;
  names.dir = o.output;
  names.geo = basename_of(o.mesh);
  names.cli = o.cli.empty() ? "" : basename_of(o.cli);
  if (!o.names.empty()) {
    auto comma = o.names.find(',');
    names.geo = o.names.substr(0, comma);
    if (comma != std::string::npos) names.cli = o.names.substr(comma + 1);
  }
  if (with_cli && names.cli.empty()) throw UsageError("--names: give GEO,CLI");
  names.par = partel::par_name(names.geo);
  for (const auto& f : o.also) names.also.push_back(basename_of(f));
  return names;
}

// partel splits sections, zones and weirs of 2D meshes only.
void warn_cases_not_split(const PartitionOptions& o) {
  for (const auto* f : {&o.sections, &o.zones, &o.weirs})
    if (!f->empty())
      std::fprintf(stderr, "anabranch partition: warning: %s is not split: partel splits sections, zones and weirs of 2D meshes only\n",
                   f->c_str());
}

// The serial route: the whole mesh in this process (partitioned here, or --partition read).
int run_serial(PartitionOptions& o, bool json, std::chrono::steady_clock::time_point t0) {
  if (o.method.empty()) o.method = metis_available() ? "metis" : "sfc";
  const PartitionMethod method = o.method == "ptscotch" ? PartitionMethod::Sfc : parse_partition_method(o.method);
  const bool epart_only = o.layout == "partition-file";
  const partel::Layout layout = epart_only ? partel::Layout::Telemac : partel::parse_layout(o.layout);
  const int threads = o.threads > 0 ? o.threads : std::max(1u, std::thread::hardware_concurrency());
  nlohmann::json phases = nlohmann::json::object(), phase_rss = nlohmann::json::object();
  std::int64_t peak = 0;
  auto phase = [&](const char* name, std::chrono::steady_clock::time_point since) {
    phases[name] = seconds_since(since);
    const std::int64_t rss = peak_rss_bytes();
    phase_rss[name] = rss;
    peak = std::max(peak, rss);  // the kernel's high-water mark, never reset (users' accounting reads it)
  };

  auto t = std::chrono::steady_clock::now();
  serafin::Reader reader(pio::vtkhdf::serafin_source(o.mesh));
  report_integrity("partition", reader);
  const auto& h = reader.header();
  const int nplan = h.nplan();
  const std::int64_t npoin2 = h.npoin / nplan;
  const std::int64_t nelem2 = nplan > 1 ? h.nelem / (nplan - 1) : h.nelem;
  if (o.parts > nelem2)
    throw UsageError("cannot make " + std::to_string(o.parts) + " parts of " + std::to_string(nelem2) + " elements");
  // the output folder once the input is known to make parts (a refused command leaves none)
  make_folder(o.output);
  if (::access(o.output.c_str(), W_OK) != 0) throw IoError::from_errno("cannot write into output folder", o.output);
  std::vector<const serafin::Reader*> also_ptrs;
  std::vector<std::unique_ptr<serafin::Reader>> also;
  for (const auto& f : o.also) {
    also.push_back(std::make_unique<serafin::Reader>(pio::vtkhdf::serafin_source(f)));
    const auto& ah = also.back()->header();
    if (ah.npoin != h.npoin || ah.nelem != h.nelem || ah.ndp != h.ndp)
      throw UsageError(f + " is not on the mesh of " + o.mesh + " (NELEM, NPOIN or NDP differ)");
    also_ptrs.push_back(also.back().get());
  }
  boundary::File cli;
  if (!o.cli.empty()) {
    cli = boundary::read(o.cli, false);  // the parts' lines are written from their values
    boundary::validate(cli, npoin2, o.mesh);
    auto ipobo = reader.read_ipobo();
    std::int64_t nptfr = 0;
    for (std::int64_t i = 0; i < npoin2; ++i) nptfr += ipobo[static_cast<std::size_t>(i)] != 0;
    if (nptfr != 0 && nptfr != static_cast<std::int64_t>(cli.lines.size()))
      throw UsageError(o.mesh + " has " + std::to_string(nptfr) + " boundary nodes (IPOBO) but " + o.cli + " has " +
                       std::to_string(cli.lines.size()) + " lines: the mesh and the boundary file disagree");
  }
  std::vector<std::int32_t> weights;
  if (!o.weights.empty()) weights = read_weights(o.weights, nelem2);
  phase("read", t);

  // Partition the 2D base mesh.
  t = std::chrono::steady_clock::now();
  PartitionStats stats;
  std::vector<std::int32_t> epart;
  int ndp2 = 0;
  Coordinates x, y;
  if (!o.partition.empty()) {
    epart = epart::read(o.partition, o.parts, nelem2);
  } else if (method == PartitionMethod::Metis || method == PartitionMethod::Scotch) {
    auto eind = base_ikle(reader, ndp2);
    for (auto& v : eind) --v;
    if (method == PartitionMethod::Metis)
      epart = partition_metis(std::move(eind), nelem2, ndp2, npoin2, o.parts, weights, &stats);
    else if (!weights.empty())
      throw UsageError("--weights: partel's SCOTCH call takes no weights; use --method metis or sfc");
    else
      epart = partition_scotch(std::move(eind), nelem2, ndp2, npoin2, o.parts, &stats);
  } else {
    auto ikle2 = base_ikle(reader, ndp2);
    x = reader.read_coordinates(false);
    y = reader.read_coordinates(true);
    epart = partition_sfc(ikle2.data(), nelem2, ndp2, ndp2, x, y, o.parts, weights, &stats);
    x.clear();  // read again after the plan: less memory at the peak
    y.clear();
  }
  weights = {};
  phase("partition", t);

  t = std::chrono::steady_clock::now();
  auto ikle2 = base_ikle(reader, ndp2);
  Plan plan = build_plan(ikle2.data(), nelem2, ndp2, ndp2, npoin2, std::move(epart), o.parts);
  const PlanQuality q = plan_quality(plan, ikle2.data(), ndp2);
  x = reader.read_coordinates(false);
  y = reader.read_coordinates(true);
  phase("plan", t);

  partel::WriteReport report;
  t = std::chrono::steady_clock::now();
  if (epart_only) {  // the element -> part file alone (ab_part_open_global reads it with the geometry)
    const std::string name = o.names.empty() ? basename_of(o.mesh) : o.names.substr(0, o.names.find(','));
    const std::string path = epart::file_name(o.output, name, o.parts);
    epart::write(path, plan.epart);
    report.files = 1;
    report.bytes = file_size(path);
    report.paths.push_back(path);
  } else {
        Contour contour;
    std::vector<std::int32_t> numliq;
    partel::GlobalMesh gm;
    gm.ikle2 = &ikle2;
    gm.stride = ndp2;
    gm.x = &x;
    gm.y = &y;
    if (!cli.lines.empty()) {
      std::vector<std::int32_t> nodes;
      std::vector<int> lih, liu;
      for (const auto& l : cli.lines) {
        nodes.push_back(static_cast<std::int32_t>(l.n));
        lih.push_back(l.lihbor);
        liu.push_back(l.liubor);
      }
      contour = build_contour(nodes, ikle2.data(), nelem2, ndp2, ndp2, x, y);
      numliq = number_liquid_boundaries(contour, nodes, lih, liu, x, y);
      gm.cli = &cli;
      gm.contour = &contour;
      gm.numliq = &numliq;
    }
    const partel::Names names = output_names(o, !cli.lines.empty());
    std::vector<partel::PartText> texts;
    if (nplan > 1) {
      warn_cases_not_split(o);
    } else {
      if (!o.sections.empty()) {
        if (ndp2 != 3) throw UsageError(o.sections + ": control sections need a mesh of triangles");
        texts.push_back(partel::control_sections(o.sections, plan, ikle2.data(), x, y));
      }
      if (!o.zones.empty()) texts.push_back(partel::friction_zones(o.zones, plan));
      if (!o.weirs.empty()) texts.push_back(partel::weirs(o.weirs, plan));
    }
    report = partel::write_parts(plan, reader, also_ptrs, gm, names, layout, threads, texts);
  }
  phase("write", t);
  const double total = seconds_since(t0);

  nlohmann::json j = {{"mesh", o.mesh},
                      {"parts", o.parts},
                      {"method", o.method},
                      {"layout", o.layout},
                      {"nelem", h.nelem},
                      {"npoin", h.npoin},
                      {"nplan", nplan},
                      {"elements_per_part", {{"min", q.min_elems}, {"mean", q.mean_elems}, {"max", q.max_elems}}},
                      {"imbalance", q.imbalance},
                      {"edge_cut", q.edge_cut},
                      {"interface_nodes", q.interface_nodes},
                      {"max_part_interface_nodes", q.max_part_interface},
                      {"empty_parts", q.empty_parts},
                      {"seconds", total},
                      {"phases", phases},
                      {"phase_peak_rss_bytes", phase_rss},
                      {"partitioner_seconds", stats.seconds},
                      {"partitioner_peak_rss_bytes", stats.peak_rss},
                      {"peak_rss_bytes", peak},
                      {"files", report.files},
                      {"bytes", report.bytes}};
  if (json) {
    print_json(j);
  } else {
    // With --partition, the parts came from the file, not from a method.
    const std::string how = o.partition.empty() ? o.method : "parts from " + o.partition;
    std::printf("partitioned %s into %d parts (%s, %s layout): %lld files, %s in %.2f s\n", o.mesh.c_str(), o.parts,
                how.c_str(), o.layout.c_str(), static_cast<long long>(report.files),
                human_bytes(static_cast<double>(report.bytes)).c_str(), total);
    std::printf("  elements per part  min %lld, mean %.1f, max %lld (imbalance %.3f)\n", static_cast<long long>(q.min_elems),
                q.mean_elems, static_cast<long long>(q.max_elems), q.imbalance);
    std::printf("  edge cut           %s\n", thousands(q.edge_cut).c_str());
    std::printf("  interface nodes    %s in all, at most %s in one part\n", thousands(q.interface_nodes).c_str(),
                thousands(q.max_part_interface).c_str());
    if (q.empty_parts) std::printf("  warning: %lld parts are empty\n", static_cast<long long>(q.empty_parts));
    std::printf("  time               read %.2f s, %s %.2f s (%.0f%%), plan %.2f s, write %.2f s\n", phases["read"].get<double>(),
                o.partition.empty() ? o.method.c_str() : "reading the parts", phases["partition"].get<double>(),
                100.0 * phases["partition"].get<double>() / total,
                phases["plan"].get<double>(), phases["write"].get<double>());
    std::printf("  peak memory        %s (reached by the end of: read %s, %s %s, plan %s, write %s)\n", human_bytes(static_cast<double>(peak)).c_str(),
                human_bytes(phase_rss["read"].get<double>()).c_str(), o.method.c_str(),
                human_bytes(phase_rss["partition"].get<double>()).c_str(), human_bytes(phase_rss["plan"].get<double>()).c_str(),
                human_bytes(phase_rss["write"].get<double>()).c_str());
  }
  return 0;
}

// What each rank holds at its peak under mpiexec (bytes), from the mesh's sizes: the model
// the README explains, fitted to measured runs (26.6M and 106.5M triangles on 2 ranks). E
// and N: the 2D elements and nodes per rank. sfc: the slice's IKLE and parts, the curve
// keys (sorted, exchanged), its nodes' coordinates: 24 E + 20 N. ptscotch: the dual graph's
// arcs and PT-Scotch's own memory, most of it (the slice's IKLE is let go meanwhile, PT-Scotch
// runs one thread a rank): 113 E at 6.66M triangles, 115 E at 26.6M and 106.5M. Writing the
// per-part files (telemac, concat layouts): the parts' IKLE rows, nodes and where they sit,
// the coordinates in the file's precision, one part's header and one record's values:
// 30 E + 18 N. Plus about 30 MiB of MPI and program.
struct RankEstimate {
  std::int64_t sfc = 0, ptscotch = 0, writer = 0, serial_metis = 0;
};
RankEstimate estimate(std::int64_t nelem, std::int64_t npoin, int ranks) {
  const double e = static_cast<double>(nelem) / ranks, n = static_cast<double>(npoin) / ranks, base = 30.0 * (1 << 20);
  RankEstimate r;
  r.sfc = static_cast<std::int64_t>(base + 24 * e + 20 * n);
  r.ptscotch = static_cast<std::int64_t>(base + 116 * e);
  r.writer = static_cast<std::int64_t>(base + 30 * e + 18 * n);
  // The serial route with METIS, measured: about 112 bytes per triangle, the files included,
  // on top of the program's own.
  r.serial_metis = static_cast<std::int64_t>(base + static_cast<double>(nelem) * 112);
  return r;
}

int dry_run(const PartitionOptions& o, int ranks, bool json) {
  const serafin::Reader reader(pio::vtkhdf::serafin_source(o.mesh));
  const auto& h = reader.header();
  const int nplan = h.nplan();
  const std::int64_t nelem2 = nplan > 1 ? h.nelem / (nplan - 1) : h.nelem, npoin2 = h.npoin / nplan;
  const RankEstimate r = estimate(nelem2, npoin2, ranks);
  const bool files = o.layout != "partition-file";
  const std::int64_t sfc = files ? std::max(r.sfc, r.writer) : r.sfc, pt = files ? std::max(r.ptscotch, r.writer) : r.ptscotch;
  if (json) {
    print_json({{"mesh", o.mesh}, {"nelem", nelem2}, {"npoin", npoin2}, {"parts", o.parts}, {"ranks", ranks}, {"layout", o.layout},
                {"per_rank_bytes", {{"sfc", sfc}, {"ptscotch", pt}}}, {"serial_metis_bytes", r.serial_metis}});
    return 0;
  }
  std::printf("partition of %s (%s elements, %s nodes in 2D) into %d parts on %d ranks, %s layout: estimated peak per rank\n",
              o.mesh.c_str(), thousands(nelem2).c_str(), thousands(npoin2).c_str(), o.parts, ranks, o.layout.c_str());
  std::printf("  --method sfc       %s\n", human_bytes(static_cast<double>(sfc)).c_str());
  std::printf("  --method ptscotch  %s\n", human_bytes(static_cast<double>(pt)).c_str());
  std::printf("  (one process with METIS: about %s)\n", human_bytes(static_cast<double>(r.serial_metis)).c_str());
  return 0;
}

// The route under mpiexec: each rank reads a slice of the elements, the ranks partition
// together, and write the partition file together; in the per-part layouts each rank writes
// the files of a range of parts.
int run_distributed(PartitionOptions& o, bool json, std::chrono::steady_clock::time_point t0) {
  MPI_Comm comm = MPI_COMM_WORLD;
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  if (o.method == "metis" || o.method == "scotch")
    throw UsageError("--method " + o.method + " runs in one process, not on " + std::to_string(size) +
                     " ranks: under mpiexec use --method ptscotch or --method sfc");
  if (!o.partition.empty()) throw UsageError("--partition: the parts are given, nothing to partition on " + std::to_string(size) + " ranks");
  const bool epart_only = o.layout == "partition-file";
  // The rank's large arrays come and go in turn: each is mapped on its own and given back
  // whole when freed. Left to itself, glibc raises its threshold at the first such free and
  // keeps the later ones in the heap, where what was freed stays in the rank (20 MiB of 60
  // at 8 ranks on a 6.7M-element mesh; PT-Scotch's ranks together at 4 ranks: 1254 MiB
  // left to glibc, 1156 at 16 MiB, 957 at 4 MiB). The cost: fresh pages for those arrays,
  // 6% of the time at 2 ranks on a 26.6M-element mesh. A fixed threshold also fixes the
  // heap's trim threshold at 128 KiB, so that a buffer of a few MiB freed at the heap's top
  // went back to the system and came again as fresh pages at the next round of an exchange
  // (28K of the 177K page faults of a rank at 2 ranks on 6.7M elements): up to the same
  // 4 MiB stays, the phases' malloc_trim giving it back (under 1 MiB more a rank at 8 ranks).
  ::mallopt(M_MMAP_THRESHOLD, 4 << 20);
  ::mallopt(M_TRIM_THRESHOLD, 4 << 20);
  std::optional<serafin::Reader> reader;
  pio::collective(comm, [&] { reader.emplace(pio::vtkhdf::serafin_source(o.mesh)); });
  const auto& h = reader->header();
  const int nplan = h.nplan();
  const std::int64_t nelem2 = nplan > 1 ? h.nelem / (nplan - 1) : h.nelem;
  if (o.parts > nelem2)
    throw UsageError("cannot make " + std::to_string(o.parts) + " parts of " + std::to_string(nelem2) + " elements");
  // the output folder once the input is known to make parts (a refused command leaves none)
  pio::collective(comm, [&] {
    if (rank != 0) return;
    make_folder(o.output);
    if (::access(o.output.c_str(), W_OK) != 0) throw IoError::from_errno("cannot write into output folder", o.output);
  });
  auto t = std::chrono::steady_clock::now();
  pio::MeshSlice slice = pio::read_mesh_slice(comm, *reader);
  std::vector<std::int32_t> weights;
  if (!o.weights.empty()) weights = pio::read_weights_slice(comm, o.weights, slice);
  const double read_s = seconds_since(t);
  t = std::chrono::steady_clock::now();
  std::vector<std::int32_t> parts;
  pio::collective(comm, [&] {
    parts = o.method == "sfc" ? pio::partition_sfc_distributed(comm, *reader, slice, o.parts, weights)
                              : pio::partition_ptscotch_distributed(comm, *reader, slice, o.parts, weights);
  });
  const double part_s = seconds_since(t);
  if (epart_only) slice.ikle = pio::read_mesh_slice(comm, *reader).ikle;  // the edge cut is counted on the slice
  pio::DistributedQuality q = pio::distributed_quality(comm, slice, parts, o.parts, epart_only);
  t = std::chrono::steady_clock::now();
  std::int64_t files = 1, bytes = 0;
  if (epart_only) {
    const std::string name = o.names.empty() ? basename_of(o.mesh) : o.names.substr(0, o.names.find(','));
    const std::string path = epart::file_name(o.output, name, o.parts);
    pio::write_partition_file(comm, path, parts);
    if (rank == 0) bytes = file_size(path);
  } else {
    // Every rank writes the files of a range of parts.
    std::optional<boundary::File> cli;
    std::vector<std::unique_ptr<serafin::Reader>> also;
    std::vector<const serafin::Reader*> also_ptrs;
    partel::Names names;
    pio::collective(comm, [&] {
      if (!o.cli.empty()) {
        cli = boundary::read(o.cli, false);  // the parts' lines are written from their values
        boundary::validate(*cli, slice.npoin, o.mesh);
      }
      for (const auto& f : o.also) {
        also.push_back(std::make_unique<serafin::Reader>(pio::vtkhdf::serafin_source(f)));
        const auto& ah = also.back()->header();
        if (ah.npoin != h.npoin || ah.nelem != h.nelem || ah.ndp != h.ndp)
          throw UsageError(f + " is not on the mesh of " + o.mesh + " (NELEM, NPOIN or NDP differ)");
        also_ptrs.push_back(also.back().get());
      }
      names = output_names(o, cli.has_value());
    });
    const pio::CaseFiles cases{o.sections, o.zones, o.weirs};
    if (nplan > 1 && cases.any() && rank == 0) warn_cases_not_split(o);
    const auto report = pio::write_parts_distributed(comm, *reader, also_ptrs, slice, std::move(parts), o.parts, cli ? &*cli : nullptr, names,
                                                   partel::parse_layout(o.layout), cases, &q.edge_cut);
    files = report.files;
    bytes = report.bytes;
  }
  const double write_s = seconds_since(t);
  std::int64_t peak = peak_rss_bytes(), largest = 0;
  MPI_Reduce(&peak, &largest, 1, MPI_INT64_T, MPI_MAX, 0, comm);
  if (rank != 0) return 0;
  const double total = seconds_since(t0);
  if (json) {
    print_json({{"mesh", o.mesh},
                {"parts", o.parts},
                {"method", o.method},
                {"layout", o.layout},
                {"ranks", size},
                {"nelem", h.nelem},
                {"npoin", h.npoin},
                {"nplan", nplan},
                {"elements_per_part", {{"min", q.min_elems}, {"mean", q.mean_elems}, {"max", q.max_elems}}},
                {"imbalance", q.imbalance},
                {"edge_cut", q.edge_cut},
                {"empty_parts", q.empty_parts},
                {"seconds", total},
                {"phases", {{"read", read_s}, {"partition", part_s}, {"write", write_s}}},
                {"peak_rss_bytes_largest_rank", largest},
                {"files", files},
                {"bytes", bytes}});
  } else {
    std::printf("partitioned %s into %d parts (%s on %d ranks, %s layout): %lld files, %s in %.2f s\n", o.mesh.c_str(), o.parts,
                o.method.c_str(), size, o.layout.c_str(), static_cast<long long>(files), human_bytes(static_cast<double>(bytes)).c_str(),
                total);
    std::printf("  elements per part  min %lld, mean %.1f, max %lld (imbalance %.3f)\n", static_cast<long long>(q.min_elems),
                q.mean_elems, static_cast<long long>(q.max_elems), q.imbalance);
    std::printf("  edge cut           %s\n", thousands(q.edge_cut).c_str());
    if (q.empty_parts) std::printf("  warning: %lld parts are empty\n", static_cast<long long>(q.empty_parts));
    std::printf("  time               read %.2f s, %s %.2f s, write %.2f s\n", read_s, o.method.c_str(), part_s, write_s);
    std::printf("  peak memory        %s on the largest rank\n", human_bytes(static_cast<double>(largest)).c_str());
  }
  return 0;
}

}  // namespace

Runner add_partition(CLI::App& app, Common& common) {
  auto o = std::make_shared<PartitionOptions>();
  auto* sub = app.add_subcommand("partition", "Split a mesh into P parts for P MPI processes (TELEMAC partel replacement)");
  sub->add_option("mesh", o->mesh, "SERAFIN mesh (geometry) file, or an anabranch HDF5 mesh; its frames are carried into the parts (SERAFIN)")->check(CLI::ExistingFile);
  sub->add_option("--cli", o->cli, "boundary-conditions file (needed for TELEMAC's .cli and PAR part files)")->check(CLI::ExistingFile);
  sub->add_option("-n,--parts", o->parts, "number of parts P (1..100000)");
  sub->add_option("--method", o->method,
                  "metis (partel's method 1), scotch (partel's method 2), sfc (Hilbert curve; fast, little memory; in one process "
                  "or under mpiexec, the same parts) or ptscotch (PT-Scotch, under mpiexec: each rank reads a slice of the mesh). "
                  "Default: metis, under mpiexec ptscotch")
      ->check(CLI::IsMember({"metis", "scotch", "sfc", "ptscotch"}));
  sub->add_option("--layout", o->layout,
                  "telemac (3 files per part), concat (6 files) or partition-file (one file, <mesh>.epart.<P>: each element's "
                  "part, one per line, for solvers that read their part from the global geometry)")
      ->capture_default_str()
      ->check(CLI::IsMember({"telemac", "concat", "partition-file"}));
  sub->add_option("--also", o->also, "other SERAFIN files on the same mesh, split the same way")->check(CLI::ExistingFile);
  sub->add_option("--names", o->names, "base names of the outputs: GEO,CLI (default: the input file names)");
  sub->add_option("--sections", o->sections, "control-sections file, split per part as partel does (T2DSEC)")->check(CLI::ExistingFile);
  sub->add_option("--zones", o->zones, "friction-zones file, split per part as partel does (T2DZFI)")->check(CLI::ExistingFile);
  sub->add_option("--weirs", o->weirs, "weirs file (TYPE OF WEIRS = 2), split per part as partel does (T2DSEU)")->check(CLI::ExistingFile);
  sub->add_option("--weights", o->weights, "text file with one integer weight per (2D) element")->check(CLI::ExistingFile);
  sub->add_option("-o,--output", o->output, "output folder")->capture_default_str();
  sub->add_option("--threads", o->threads, "threads writing parts (default: all cores)");
  sub->add_option("--partition", o->partition,
                  "take each element's part from this file (one per line, as --layout partition-file writes it) instead of "
                  "partitioning")
      ->check(CLI::ExistingFile);
  sub->add_flag("--dry-run", o->dry_run, "print the estimated peak memory per rank for this mesh, -n and --ranks; partition nothing");
  sub->add_option("--ranks", o->ranks, "--dry-run: the number of ranks to estimate for (default: those it runs on)")
      ->check(CLI::PositiveNumber);
  sub->add_flag("--partel", o->partel, "read partel's answers from standard input (as TELEMAC's scripts call partel)");
  sub->add_flag("--json", common.json, "print the report as JSON on stdout");
  return [o, &common]() {
    const auto t0 = std::chrono::steady_clock::now();
    std::optional<pio::MpiSession> mpi;  // MPI's start-up only under mpiexec (or for PT-Scotch)
    if (pio::started_by_launcher() || o->method == "ptscotch") mpi.emplace(nullptr, nullptr);
    int size = 1, rank = 0;
    if (mpi) {
      MPI_Comm_size(MPI_COMM_WORLD, &size);
      MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    }
    if (o->partel) {
      // partel's answers: on standard input, which mpiexec gives rank 0; the others get them from it.
      std::string text;
      if (rank == 0) text.assign(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
      if (size > 1) text = pio::broadcast(MPI_COMM_WORLD, std::move(text));
      std::istringstream in(text);
      read_partel_answers(in, *o);
      if (size > 1 && o->split_on.empty()) {
        // partel's METIS or SCOTCH run in one process: on several ranks, PT-Scotch (or the curve).
        o->method = pio::ptscotch_available() ? "ptscotch" : "sfc";
        if (rank == 0)
          std::fprintf(stderr, "anabranch partition: note: partel's answers on %d ranks: partitioned with %s\n", size, o->method.c_str());
      }
    }
    if (!o->split_on.empty()) {
      std::optional<partel::WriteReport> r;
      pio::collective(size > 1 ? MPI_COMM_WORLD : MPI_COMM_NULL, [&] {
        if (rank != 0) return;  // one process splits (a file on existing parts)
        const int threads = o->threads > 0 ? o->threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
        r = split_file(o->mesh, o->split_on, o->parts, ".", basename_of(o->mesh), partel::parse_layout(o->layout), threads,
                       !o->split_headers_only);
      });
      if (rank != 0) return 0;
      if (!common.json)
        std::printf("split %s along the parts of %s: %lld files, %s%s\n", o->mesh.c_str(), o->split_on.c_str(),
                    static_cast<long long>(r->files), human_bytes(static_cast<double>(r->bytes)).c_str(),
                    o->split_headers_only ? " (header and mesh only: the ranks read their values from the one file, "
                                            "ANABRANCH_TELEMAC_RESTART=1)" : "");
      else
        print_json({{"input", o->mesh}, {"files", r->files}, {"bytes", r->bytes}});
      return 0;
    }
    if (o->mesh.empty()) throw UsageError("no mesh file given");
    if (o->parts < 1 || o->parts > partel::kMaxParts)
      throw UsageError("the number of parts must be in 1.." + std::to_string(partel::kMaxParts) + " (-n)");
    if (o->dry_run) return dry_run(*o, o->ranks > 0 ? o->ranks : size, common.json);
    if (o->method.empty()) o->method = size > 1 ? (pio::ptscotch_available() ? "ptscotch" : "sfc") : metis_available() ? "metis" : "sfc";
    if (size > 1 || o->method == "ptscotch") return run_distributed(*o, common.json, t0);
    return run_serial(*o, common.json, t0);
  };
}

}  // namespace anabranch::cli
