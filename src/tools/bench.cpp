// The bench engine (`anabranch bench`, ab_command("bench")): every write strategy on the
// same frames (the write pattern of a real partition, or a generated one), warm-up, N
// repetitions, phases timed (open, write, sync), optional read-back (each rank reads its own
// nodes, as a restart does), the raw disk rate measured in the same run, every file verified.
#include <fcntl.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <optional>
#include <thread>

#include "tools/bench.hpp"
#include "core/error.hpp"
#include "grid/generate.hpp"
#include "core/io.hpp"
#include "core/outputs.hpp"
#include "grid/plan.hpp"
#include "formats/partel.hpp"
#include "formats/serafin.hpp"
#include "partition/partitioner.hpp"
#include "parallel/mpi_util.hpp"
#include "layouts/reader.hpp"
#include "io/strategy.hpp"
#include "parallel/topology.hpp"
#include "layouts/writer.hpp"
#include "h5/results.hpp"

namespace anabranch::pio {
namespace {


float value_of(std::int32_t gid, int var, std::int64_t frame) {
  return static_cast<float>(static_cast<double>(gid % 100003) * 0.001 + var * 10.0 + static_cast<double>(frame));
}

// Frame f of every variable at this rank's nodes (vals: one vector of the rank's size per
// variable), as the synthetic solver computes it.
void fill_frame(const std::vector<std::int32_t>& knolg, std::int64_t f, std::vector<std::vector<float>>& vals) {
  for (std::size_t v = 0; v < vals.size(); ++v)
    for (std::size_t i = 0; i < knolg.size(); ++i) vals[v][i] = value_of(knolg[i], static_cast<int>(v), f);
}

// This rank's nodes (KNOLG, 1-based) and local mesh, and the global header and mesh.
struct Decomposition {
  serafin::Header header;
  Mesh global;  // rank 0 (all ranks when generated)
  std::string geometry;
  std::vector<std::int32_t> knolg;
  Mesh local;
};

Decomposition decompose(const BenchOptions& o, int rank, int size) {
  Decomposition d;
  Mesh m;
  if (!o.mesh.empty()) {
    serafin::Reader r(o.mesh);
    d.header = r.header();
    d.geometry = o.mesh;
    if (!o.plan.empty()) {
      const partel::PartSet set(o.plan);
      if (set.size() != size)
        throw UsageError(o.plan + " has " + std::to_string(set.size()) + " parts; run on " + std::to_string(set.size()) + " ranks");
      auto part = set.open(rank);
      d.local = part->read_mesh();
      d.knolg = d.local.ipobo;
      d.header.variables = synthetic_variables(o.vars, d.header.nplan() > 1);
      return d;
    }
    m = r.read_mesh();
  } else {
    ChannelOptions co;
    co.elements = o.generate;
    m = make_channel(co).mesh;
    d.header.set_title("anabranch bench");
    d.header.iparam[0] = 1;
    d.header.set_mesh_sizes(m);
  }
  d.header.variables = synthetic_variables(o.vars, m.nplan > 1);
  const int ndp2 = m.nplan > 1 ? 3 : m.ndp;
  const auto epart = partition_sfc(m.ikle.data(), m.nelem2(), ndp2, m.ndp, Coordinates(m.x), Coordinates(m.y), size, {});
  const Plan plan = build_plan(m.ikle.data(), m.nelem2(), ndp2, m.ndp, m.npoin2(), epart, size);
  std::vector<std::int32_t> loc(static_cast<std::size_t>(m.npoin2()), -1);
  const std::int64_t np = plan.part_npoin(rank);
  for (int j = 0; j < m.nplan; ++j)
    for (std::int64_t i = 0; i < np; ++i) {
      const auto g = plan.part_knolg(rank)[i] + j * m.npoin2();
      d.knolg.push_back(static_cast<std::int32_t>(g + 1));
      d.local.x.push_back(m.x[static_cast<std::size_t>(g)]);
      d.local.y.push_back(m.y[static_cast<std::size_t>(g)]);
    }
  for (std::int64_t i = 0; i < np; ++i) loc[static_cast<std::size_t>(plan.part_knolg(rank)[i])] = static_cast<std::int32_t>(i);
  d.local.ndp = m.ndp;
  d.local.nplan = m.nplan;
  for (std::int64_t j = 0; j < plan.part_nelem(rank); ++j)
    for (int k = 0; k < ndp2; ++k)
      d.local.ikle.push_back(loc[static_cast<std::size_t>(m.ikle[static_cast<std::size_t>(plan.part_elems(rank)[j] * m.ndp + k)] - 1)] + 1);
  if (m.nplan > 1) {  // prisms above the local triangles
    std::vector<std::int32_t> tri = d.local.ikle;
    d.local.ikle.clear();
    for (int l = 0; l + 1 < m.nplan; ++l)
      for (std::size_t e = 0; e < tri.size() / 3; ++e) {
        for (int k = 0; k < 3; ++k) d.local.ikle.push_back(tri[e * 3 + static_cast<std::size_t>(k)] + static_cast<std::int32_t>(l * np));
        for (int k = 0; k < 3; ++k) d.local.ikle.push_back(tri[e * 3 + static_cast<std::size_t>(k)] + static_cast<std::int32_t>((l + 1) * np));
      }
  }
  d.local.nelem = static_cast<std::int64_t>(d.local.ikle.size()) / m.ndp;
  d.local.npoin = static_cast<std::int64_t>(d.knolg.size());
  if (rank == 0) d.global = std::move(m);
  return d;
}

void sync_path(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY);
  if (fd >= 0) {
    ::fdatasync(fd);
    ::close(fd);
  }
}

// Sequential write of `bytes` with fdatasync: the disk's ceiling (what dd conv=fdatasync does).
double raw_disk_rate(const std::string& dir, std::int64_t bytes) {
  const std::string path = dir + "/anabranch-bench-dd." + std::to_string(::getpid());
  const ScratchFile scratch(path);  // removed also when the disk fills
  const double t0 = MPI_Wtime();
  {
    AtomicFileSink sink(path, 8u << 20, true);
    std::vector<unsigned char> block(8u << 20, 0);
    for (std::int64_t done = 0; done < bytes; done += static_cast<std::int64_t>(block.size())) sink.write(block.data(), block.size());
    sink.commit();
  }
  sync_path(path);
  const double secs = MPI_Wtime() - t0;
  return static_cast<double>(bytes) / secs / 1e6;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : (v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]));
}

// The file system's own rates for this run's bytes, without the library: every rank writes
// its share of each frame with pwrite (a barrier after each frame, as in the solver loop)
// to its own file (what file-per-process can reach) or to its own range of one shared file
// (what any one-file strategy can reach here: Linux's local file systems serialise buffered
// writes to one file on the inode lock). The files get the same bytes as the library's:
// a header as long as theirs (the global mesh's in the shared file, by rank 0; each rank's
// own in its file) written first and not timed, as the library writes it at open, then the
// frames after it. Medians of `repeat` runs, MB/s of the frames' write calls and of those
// calls + fdatasync (the header's flush included, as in the library's figures).
struct RawRates {
  double own_write = 0, own_disk = 0, shared_write = 0, shared_disk = 0;
};

RawRates raw_file_rates(MPI_Comm comm, const std::string& dir, std::int64_t own_header, std::int64_t shared_header,
                        std::int64_t frame_bytes, int frames, int repeat) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  const std::int64_t first = frame_bytes * rank / size, share = frame_bytes * (rank + 1) / size - first;
  std::vector<unsigned char> block(static_cast<std::size_t>(share), static_cast<unsigned char>(rank));
  const std::string shared = dir + "/anabranch-bench-raw.shared";
  std::vector<double> w[2], d[2];
  std::exception_ptr error;
  for (int rep = -1; rep < repeat; ++rep)
    for (int one = 0; one < 2; ++one) {
      const std::string path = one ? shared : dir + "/anabranch-bench-raw." + std::to_string(rank);
      std::optional<ScratchFile> scratch;  // removed by the rank that created it
      if (!one || rank == 0) scratch.emplace(path);
      int fd = -1;
      if (one && rank == 0) fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      MPI_Barrier(comm);
      if (!one || rank != 0) fd = ::open(path.c_str(), one ? O_WRONLY : O_WRONLY | O_CREAT | O_TRUNC, 0644);
      const std::int64_t header = one ? shared_header : own_header;
      try {
        if (fd >= 0 && !error && (!one || rank == 0)) {
          const std::vector<unsigned char> head(static_cast<std::size_t>(header));
          pwrite_all(fd, head.data(), head.size(), 0, path);
        }
      } catch (...) {
        error = std::current_exception();
      }
      MPI_Barrier(comm);
      const double t0 = MPI_Wtime();
      for (int f = 0; f < frames; ++f) {
        try {
          if (fd < 0) throw IoError::from_errno("cannot open", path);
          if (!error) pwrite_all(fd, block.data(), block.size(), header + (one ? f * frame_bytes + first : f * share), path);
        } catch (...) {
          error = std::current_exception();
        }
        MPI_Barrier(comm);
      }
      const double t1 = MPI_Wtime();
      if (fd >= 0 && (!one || rank == 0)) ::fdatasync(fd);
      if (fd >= 0) ::close(fd);
      MPI_Barrier(comm);
      const double t2 = MPI_Wtime();
      if (rep >= 0) {
        w[one].push_back(static_cast<double>(frame_bytes * frames) / (t1 - t0) / 1e6);
        d[one].push_back(static_cast<double>(frame_bytes * frames) / (t2 - t0) / 1e6);
      }
    }
  agree(comm, error);
  return {median(w[0]), median(d[0]), median(w[1]), median(d[1])};
}

// Empties the page cache where allowed (root on Linux), so reads come from the disk.
bool drop_caches() {
  ::sync();
  int fd = ::open("/proc/sys/vm/drop_caches", O_WRONLY);
  if (fd < 0) return false;
  const bool ok = ::write(fd, "3\n", 2) == 2;
  ::close(fd);
  return ok;
}

std::uint64_t checksum(const std::string& path) {
  FileSource src(path);
  std::vector<unsigned char> buf(8u << 20);
  std::uint64_t h = 1469598103934665603ULL;
  for (std::int64_t at = 0; at < src.size();) {
    const auto n = static_cast<std::size_t>(std::min<std::int64_t>(static_cast<std::int64_t>(buf.size()), src.size() - at));
    src.read_at(at, buf.data(), n);
    for (std::size_t i = 0; i < n; ++i) h = (h ^ buf[i]) * 1099511628211ULL;
    at += static_cast<std::int64_t>(n);
  }
  return h;
}

// This rank's nodes in another decomposition: the global numbering cut into P + 1 blocks,
// rank r taking block r and rank 0 also block P (a restart on another rank count reads a
// decomposition the file was not written from).
std::vector<std::int32_t> other_decomposition(const Decomposition& d, MPI_Comm comm) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  const std::int64_t npoin = d.header.npoin;
  std::vector<std::int32_t> ids;
  auto take = [&](int part) {
    for (std::int64_t g = npoin * part / (size + 1); g < npoin * (part + 1) / (size + 1); ++g) ids.push_back(static_cast<std::int32_t>(g + 1));
  };
  take(rank);
  if (rank == 0) take(size);
  return ids;
}

// The read side (--read): the file each way a restart can read it, from a dropped page cache
// where allowed, open, read and close timed apart; next to the raw ceiling (every rank
// pread-ing its share of the same bytes, no library).
nlohmann::json read_bench(const BenchOptions& o, const Decomposition& d, MPI_Comm comm, bool print) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  const auto layout = serafin::Layout::of(d.header);
  const std::int64_t data_bytes = layout.frame_bytes * o.frames;
  const auto nloc = static_cast<std::int64_t>(d.knolg.size());
  const std::string shared = o.dir + "/anabranch-bench-read.slf", fpp = o.dir + "/anabranch-bench-read-fpp",
                    h5 = o.dir + "/anabranch-bench-read.h5";
  const ScratchFile s1(shared), s2(fpp + partel::suffix(size, rank)), s3(h5), s4(h5 + ".xmf");
  bool have_h5 = false;
  for (const auto& s : read_strategies()) have_h5 = have_h5 || (s.name == "hdf5" && s.available);
  {  // the files
    std::vector<std::vector<float>> vals(static_cast<std::size_t>(o.vars), std::vector<float>(static_cast<std::size_t>(nloc)));
    std::vector<const float*> ptrs;
    for (auto& v : vals) ptrs.push_back(v.data());
    for (const std::string& name : {std::string("aggregated"), std::string("file-per-process"), std::string("hdf5")}) {
      if (name == "hdf5" && !have_h5) continue;
      OutputDescription out;
      out.header = d.header;
      if (rank == 0 && d.global.npoin > 0) out.mesh = &d.global;
      if (!out.mesh) out.geometry = d.geometry;
      out.local_mesh = &d.local;
      WriterOptions wo;
      wo.strategy = name;
      Writer w(comm, name == "aggregated" ? shared : name == "hdf5" ? h5 : fpp, out, d.knolg.data(), nloc, wo);
      for (int f = 0; f < o.frames; ++f) {
        fill_frame(d.knolg, f, vals);
        w.write_frame(f * 1.0, ptrs.data());
      }
      w.close();
    }
    if (rank == 0) sync_path(shared);
  }
  auto cold = [&] {
    int dropped = rank == 0 && drop_caches() ? 1 : 0;
    MPI_Bcast(&dropped, 1, MPI_INT, 0, comm);
    MPI_Barrier(comm);
    return dropped == 1;
  };
  bool all_cold = true;
  // The ceiling: each rank reads its contiguous share of the frames with pread.
  std::vector<double> raw;
  {
    const std::int64_t first = layout.header_bytes + data_bytes * rank / size, end = layout.header_bytes + data_bytes * (rank + 1) / size;
    std::vector<unsigned char> buf(8u << 20);
    for (int rep = 0; rep < o.repeat; ++rep) {
      all_cold = cold() && all_cold;
      const double t0 = MPI_Wtime();
      int fd = ::open(shared.c_str(), O_RDONLY);
      for (std::int64_t at = first; fd >= 0 && at < end;) {
        const ssize_t n = ::pread(fd, buf.data(), static_cast<std::size_t>(std::min<std::int64_t>(end - at, static_cast<std::int64_t>(buf.size()))), at);
        if (n <= 0) break;
        at += n;
      }
      if (fd >= 0) ::close(fd);
      MPI_Barrier(comm);
      raw.push_back(static_cast<double>(data_bytes) / (MPI_Wtime() - t0) / 1e6);
    }
  }
  struct Case {
    std::string strategy, file, decomposition;
  };
  std::vector<Case> cases = {{"aggregated", shared, "same"}, {"independent", shared, "same"}, {"collective", shared, "same"},
                             {"aggregated", shared, "other"}, {"file-per-process", fpp, "same"}};
  if (have_h5) cases.insert(cases.end(), {{"hdf5", h5, "same"}, {"aggregated", h5, "same"}});
  const std::vector<std::int32_t> other = other_decomposition(d, comm);
  nlohmann::json results = nlohmann::json::array();
  std::vector<float> values;
  for (const auto& c : cases) {
    const std::vector<std::int32_t>& ids = c.decomposition == "same" ? d.knolg : other;
    const auto n = static_cast<std::int64_t>(ids.size());
    values.resize(static_cast<std::size_t>(n * o.vars));
    std::vector<float*> ptrs;
    for (int v = 0; v < o.vars; ++v) ptrs.push_back(values.data() + v * n);
    std::vector<double> t_open, t_read, t_close, rates;
    double phase[3] = {0, 0, 0};  // read calls, exchange, wait: this rank, mean per run
    int ok = 1;
    for (int rep = 0; rep < o.repeat; ++rep) {
      all_cold = cold() && all_cold;
      ReaderOptions ro;
      ro.strategy = c.strategy;
      ro.readers_per_node = o.writers == "auto" ? 0 : std::stoi(o.writers);
      const double t0 = MPI_Wtime();
      Reader r(comm, c.file, ids.data(), n, ro);
      MPI_Barrier(comm);
      const double t1 = MPI_Wtime();
      for (int f = 0; f < o.frames; ++f) {
        r.read_frame(f, ptrs.data());
        if (rep == 0)
          for (int v = 0; v < o.vars; ++v)
            for (std::int64_t i = 0; i < n; ++i)
              if (values[static_cast<std::size_t>(v * n + i)] != value_of(ids[static_cast<std::size_t>(i)], v, f)) ok = 0;
      }
      MPI_Barrier(comm);
      const double t2 = MPI_Wtime();
      const ReadTimes rt = r.read_times();
      phase[0] += rt.read / o.repeat;
      phase[1] += rt.exchange / o.repeat;
      phase[2] += rt.wait / o.repeat;
      r.close();
      MPI_Barrier(comm);
      const double t3 = MPI_Wtime();
      t_open.push_back(t1 - t0);
      t_read.push_back(t2 - t1);
      t_close.push_back(t3 - t2);
      rates.push_back(static_cast<double>(data_bytes) / (t2 - t1) / 1e6);
    }
    MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, comm);
    std::vector<double> all(static_cast<std::size_t>(3 * size));
    MPI_Allgather(phase, 3, MPI_DOUBLE, all.data(), 3, MPI_DOUBLE, comm);
    nlohmann::json phases;
    double most[3] = {0, 0, 0};
    for (int k = 0; k < 3; ++k) {
      std::vector<double> per_rank;
      for (int q = 0; q < size; ++q) {
        per_rank.push_back(all[static_cast<std::size_t>(3 * q + k)]);
        most[k] = std::max(most[k], per_rank.back());
      }
      phases[k == 0 ? "read" : k == 1 ? "exchange" : "wait"] = per_rank;
    }
    nlohmann::json res = {{"strategy", c.strategy},
                          {"file", c.file == h5 ? "hdf5" : c.file == fpp ? "file per rank" : "serafin"},
                          {"decomposition", c.decomposition == "same" ? "the writer's" : "P+1 blocks"},
                          {"open_seconds", t_open},
                          {"read_seconds", t_read},
                          {"close_seconds", t_close},
                          {"open_median", median(t_open)},
                          {"close_median", median(t_close)},
                          {"read_mbs_median", median(rates)},
                          {"phases_seconds_per_rank", phases},
                          {"verified", ok == 1}};
    if (print)
      std::printf("read %-16s %-13s %-12s open %6.4f s  close %6.4f s  read %8.0f MB/s (%.2f of raw)  %s\n", c.strategy.c_str(),
                  res["file"].get<std::string>().c_str(), res["decomposition"].get<std::string>().c_str(), median(t_open),
                  median(t_close), median(rates), median(rates) / median(raw), ok ? "verified" : "WRONG VALUES");
    if (print)
      std::printf("%48s phases per run, max over ranks: read %.3f s  exchange %.3f s  wait %.3f s\n", "", most[0], most[1], most[2]);
    results.push_back(res);
  }
  if (print)
    std::printf("raw pread, each rank its share of the shared file: %.0f MB/s%s\n", median(raw),
                all_cold ? " (page cache dropped before every run)" : " (page cache NOT dropped: run as root to read from the disk)");
  return {{"raw_read_mbs", median(raw)}, {"raw_read_mbs_runs", raw}, {"cache_dropped", all_cold}, {"results", results}};
}

}  // namespace

nlohmann::json bench(MPI_Comm comm, const BenchOptions& o, bool print) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  Decomposition d;
  collective(comm, [&] { d = decompose(o, rank, size); });
  std::vector<std::string> names;
  if (o.strategies == "all") {
    for (const auto& s : strategies())
      if (s.available && s.name != "null") names.push_back(s.name);
  } else {
    std::string rest = o.strategies;
    while (!rest.empty()) {
      const auto c = rest.find(',');
      names.push_back(rest.substr(0, c));
      rest = c == std::string::npos ? "" : rest.substr(c + 1);
    }
  }
  const auto layout = serafin::Layout::of(d.header);
  const std::int64_t data_bytes = layout.frame_bytes * o.frames;
  const auto nloc = static_cast<std::int64_t>(d.knolg.size());
  std::vector<std::vector<float>> vals(static_cast<std::size_t>(o.vars), std::vector<float>(static_cast<std::size_t>(nloc)));
  std::vector<const float*> ptrs;
  for (auto& v : vals) ptrs.push_back(v.data());

  // Machine description and the disk's ceiling.
  Topology topo(comm);
  const auto hosts = gather_host_names(comm);
  char lib[MPI_MAX_LIBRARY_VERSION_STRING];
  int liblen = 0;
  MPI_Get_library_version(lib, &liblen);
  double disk = 0;
  collective(comm, [&] {
    if (rank == 0) disk = raw_disk_rate(o.dir, std::max<std::int64_t>(64LL << 20, std::min<std::int64_t>(data_bytes, 1LL << 30)));
  });
  serafin::Header own_header = d.header;
  own_header.set_mesh_sizes(d.local);
  const RawRates raw = raw_file_rates(comm, o.dir, serafin::Layout::of(own_header).header_bytes, layout.header_bytes,
                                      layout.frame_bytes, o.frames, o.repeat);
  nlohmann::json results = nlohmann::json::array();
  std::uint64_t reference = 0;
  for (const auto& name : names) {
    const bool fpp = name == "file-per-process", hdf5 = name == "hdf5", null = name == "null";
    const bool tecplot = name == "tecplot";
    const bool other = hdf5 || tecplot || name == "cgns";  // a file of another format than SERAFIN
    const std::string path =
        o.dir + "/anabranch-bench-" + name + (hdf5 ? ".h5" : tecplot ? ".plt" : other ? ".cgns" : ".slf");
    const ScratchFile scratch(path), scratch_xdmf(path + ".xmf"),
        scratch_mine(fpp ? path + partel::suffix(size, rank) : path + ".unused");
    std::vector<double> t_open, t_write, t_close, t_sync;
    double phase_sum[5] = {0, 0, 0, 0, 0};  // encode, exchange, wait, write, close: this rank, measured runs
    bool verified = true;
    int files = 0;
    for (int rep = -1; rep < o.repeat; ++rep) {  // rep -1: warm-up
      OutputDescription out;
      out.header = d.header;
      if (rank == 0 && d.global.npoin > 0) out.mesh = &d.global;
      if (!out.mesh) out.geometry = d.geometry;
      out.local_mesh = &d.local;
      WriterOptions wo;
      wo.strategy = name;
      wo.writers_per_node = o.writers == "auto" ? 0 : std::stoi(o.writers);
      wo.provenance["partition_method"] = o.plan.empty() ? "hilbert" : "plan " + o.plan;
      wo.provenance["partition_parts"] = std::to_string(size);
      MPI_Barrier(comm);
      double t0 = MPI_Wtime();
      Writer w(comm, path, out, d.knolg.data(), nloc, wo);
      MPI_Barrier(comm);
      double t1 = MPI_Wtime(), compute = 0;
      for (int f = 0; f < o.frames; ++f) {
        // The solver's compute is not the library's time: until every rank has its
        // frame (ranks sharing a core finish theirs at different times).
        const double c0 = MPI_Wtime();
        fill_frame(d.knolg, f, vals);
        MPI_Barrier(comm);
        compute += MPI_Wtime() - c0;
        w.write_frame(f * 1.0, ptrs.data());
      }
      MPI_Barrier(comm);
      double t2 = MPI_Wtime();
      w.close();
      if (rep >= 0) {
        const PhaseTimes ph = w.phases();
        const double p[5] = {ph.encode, ph.exchange, ph.wait, ph.write, ph.close};
        for (int k = 0; k < 5; ++k) phase_sum[k] += p[k];
      }
      MPI_Barrier(comm);
      const double t_closed = MPI_Wtime();
      files = w.files_created();
      const std::string mine = fpp ? path + partel::suffix(size, rank) : path;
      if (fpp || rank == 0) sync_path(mine);
      MPI_Barrier(comm);
      double t3 = MPI_Wtime();
      // Verification (last run): the shared file's bytes are the same for every strategy,
      // and every rank reads back its own nodes.
      // Every collective call stays outside the try blocks: a failed check on one rank
      // must not leave the others waiting.
      int ok = 1;
      if (!fpp && !other && !null && rank == 0) {
        try {
          const std::uint64_t h = checksum(path);
          if (reference == 0) reference = h;
          ok = h == reference;
        } catch (const std::exception&) {
          ok = 0;
        }
      }
      if (!null && rep == o.repeat - 1) {
        try {
            std::vector<float> buf;
            if (other) {  // each rank its own nodes, as a restart does
              const auto in = ResultFile::open(path);
              buf.resize(static_cast<std::size_t>(in->header().npoin));
              for (int f = 0; f < o.frames && ok; ++f)
                for (int v = 0; v < o.vars && ok; ++v) {
                  in->read_values(f, v, 0, in->header().npoin, buf.data());
                  for (const auto g : d.knolg)
                    if (buf[static_cast<std::size_t>(g - 1)] != value_of(g, v, f)) ok = 0;
                }
              ok = ok && in->frame_count() == o.frames;
            }
            std::unique_ptr<serafin::Reader> rp;
            if (!other) rp = std::make_unique<serafin::Reader>(mine);
            for (int f = 0; f < o.frames && ok && !other; ++f)
              for (int v = 0; v < o.vars && ok; ++v) {
                if (fpp) {
                  buf.resize(static_cast<std::size_t>(nloc));
                  rp->read_values(f, v, buf.data());
                  for (std::int64_t i = 0; i < nloc; ++i)
                    if (buf[static_cast<std::size_t>(i)] != value_of(d.knolg[static_cast<std::size_t>(i)], v, f)) ok = 0;
                } else {
                  // Runs of consecutive global nodes, read in place.
                  for (std::int64_t i = 0; i < nloc;) {
                    std::int64_t j = i + 1;
                    while (j < nloc && d.knolg[static_cast<std::size_t>(j)] == d.knolg[static_cast<std::size_t>(j - 1)] + 1) ++j;
                    buf.resize(static_cast<std::size_t>(j - i));
                    rp->read_values(f, v, d.knolg[static_cast<std::size_t>(i)] - 1, j - i, buf.data());
                    for (std::int64_t k = i; k < j; ++k)
                      if (buf[static_cast<std::size_t>(k - i)] != value_of(d.knolg[static_cast<std::size_t>(k)], v, f)) ok = 0;
                    i = j;
                  }
                }
              }
        } catch (const std::exception&) {
          ok = 0;
        }
      }
      int all_ok = 0;
      MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, comm);
      verified = verified && all_ok;
      if (rep >= 0) {
        t_open.push_back(t1 - t0);
        t_write.push_back(t2 - t1 - compute);
        t_close.push_back(t_closed - t2);
        t_sync.push_back(t3 - t2);
      }
      MPI_Barrier(comm);
      if (fpp)
        ::unlink(mine.c_str());
      else if (rank == 0)
        ::unlink(path.c_str()), ::unlink((path + ".xmf").c_str());
    }
    auto mbs = [&](const std::vector<double>& t) {
      std::vector<double> r;
      for (double x : t) r.push_back(static_cast<double>(data_bytes) / x / 1e6);
      return r;
    };
    std::vector<double> full;
    for (std::size_t i = 0; i < t_write.size(); ++i) full.push_back(t_write[i] + t_sync[i]);
    // Per rank, seconds per run (mean of the measured runs) of each phase.
    for (double& p : phase_sum) p /= o.repeat;
    std::vector<double> all_phases(static_cast<std::size_t>(5 * size));
    MPI_Gather(phase_sum, 5, MPI_DOUBLE, all_phases.data(), 5, MPI_DOUBLE, 0, comm);
    nlohmann::json phases;
    double phase_max[5] = {0, 0, 0, 0, 0};
    static const char* phase_names[5] = {"encode", "exchange", "wait", "write", "close"};
    for (int k = 0; k < 5; ++k) {
      std::vector<double> per_rank;
      for (int q = 0; q < size; ++q) {
        per_rank.push_back(all_phases[static_cast<std::size_t>(5 * q + k)]);
        phase_max[k] = std::max(phase_max[k], per_rank.back());
      }
      phases[phase_names[k]] = per_rank;
    }
    const auto w = mbs(t_write), fd = mbs(full);
    nlohmann::json res = {{"strategy", name},
                          {"files", files},
                          {"bytes", data_bytes},
                          {"open_seconds", t_open},
                          {"write_seconds", t_write},
                          {"close_seconds", t_close},
                          {"sync_seconds", t_sync},
                          {"open_median", median(t_open)},
                          {"close_median", median(t_close)},
                          {"write_mbs_min", w.empty() ? 0 : *std::min_element(w.begin(), w.end())},
                          {"write_mbs_median", median(w)},
                          {"write_mbs_max", w.empty() ? 0 : *std::max_element(w.begin(), w.end())},
                          {"to_disk_mbs_median", median(fd)},
                          {"phases_seconds_per_rank", phases},
                          {"verified", verified}};
    results.push_back(res);
    if (print && rank == 0)
      std::printf("%-17s %5d file(s)  open %6.3f s  close %6.3f s  write %8.0f MB/s (%0.f..%0.f)  to disk %8.0f MB/s  %s\n", name.c_str(), files,
                  median(t_open), median(t_close), median(w), res["write_mbs_min"].get<double>(), res["write_mbs_max"].get<double>(), median(fd),
                  verified ? "verified" : "WRONG BYTES");
    if (print && rank == 0 && phase_max[0] + phase_max[1] + phase_max[2] + phase_max[3] + phase_max[4] > 0)
      std::printf("%17s phases per run, max over ranks: encode %.3f s  exchange %.3f s  wait %.3f s  write %.3f s  close %.3f s\n",
                  "", phase_max[0], phase_max[1], phase_max[2], phase_max[3], phase_max[4]);
  }
  nlohmann::json reads;
  if (o.read) reads = read_bench(o, d, comm, print && rank == 0);
  nlohmann::json j = {{"config",
                       {{"ranks", size},
                        {"nodes", topo.nodes},
                        {"mesh", o.mesh.empty() ? "generated channel, " + std::to_string(o.generate) + " triangles" : o.mesh},
                        {"plan", o.plan.empty() ? "Hilbert curve" : o.plan},
                        {"npoin", d.header.npoin},
                        {"vars", o.vars},
                        {"frames", o.frames},
                        {"frame_bytes", layout.frame_bytes},
                        {"repeat", o.repeat},
                        {"writers_per_node", o.writers},
                        {"dir", o.dir}}},
                      {"machine",
                       {{"hosts", hosts},
                        {"cores", std::thread::hardware_concurrency()},
                        {"mpi", trimmed(std::string(lib, static_cast<std::size_t>(liblen)))},
                        {"file_system", file_system_name(o.dir)},
                        {"mpiio_hints", Hints::from_environment().str()}}},
                      {"raw_disk_mbs", disk},
                      {"raw_own_files", {{"write_mbs", raw.own_write}, {"to_disk_mbs", raw.own_disk}}},
                      {"raw_shared_file", {{"write_mbs", raw.shared_write}, {"to_disk_mbs", raw.shared_disk}}},
                      {"results", results}};
  if (o.read) j["read"] = reads;
  if (print && rank == 0) {
    std::printf("raw pwrite, a file per rank:  write %8.0f MB/s  to disk %8.0f MB/s\n", raw.own_write, raw.own_disk);
    std::printf("raw pwrite, one shared file:  write %8.0f MB/s  to disk %8.0f MB/s (%.0f%% / %.0f%% of a file per rank)\n",
                raw.shared_write, raw.shared_disk, 100 * raw.shared_write / raw.own_write, 100 * raw.shared_disk / raw.own_disk);
    std::printf("raw disk rate (sequential write + fdatasync): %.0f MB/s; %d ranks on %d node(s)\n", disk, size, topo.nodes);
  }
  return j;
}

bool bench_verified(const nlohmann::json& report) {
  bool ok = true;
  for (const auto& r : report["results"]) ok = ok && r["verified"].get<bool>();
  if (report.contains("read"))
    for (const auto& r : report["read"]["results"]) ok = ok && r["verified"].get<bool>();
  return ok;
}

}  // namespace anabranch::pio
