#include "tools/merge.hpp"

#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <future>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <thread>

#include "core/byteorder.hpp"
#include "core/error.hpp"
#include "core/io.hpp"
#include "core/progress.hpp"
#include "formats/boundary.hpp"
#include "formats/partel.hpp"
#include "formats/serafin.hpp"
#include "parallel/mpi_util.hpp"
#include "h5/vtkhdf.hpp"
#include "layouts/writer.hpp"

namespace anabranch::pio {

void raise_open_file_limit() {
  rlimit rl{};
  if (::getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
    rl.rlim_cur = rl.rlim_max;
    ::setrlimit(RLIMIT_NOFILE, &rl);
  }
}

namespace {

struct Part {
  int index;
  std::unique_ptr<serafin::Reader> reader;
  std::vector<std::int32_t> gid;  // global node (0-based) of each local node, all planes
};

bool same_variables(const serafin::Header& a, const serafin::Header& b) {
  if (a.nvar() != b.nvar()) return false;
  for (int v = 0; v < a.nvar(); ++v)
    if (trimmed(a.variables[static_cast<std::size_t>(v)].name) != trimmed(b.variables[static_cast<std::size_t>(v)].name)) return false;
  return true;
}

// 3D parts of nplan planes on a 2D geometry: gretel extrudes the geometry's triangles to
// prisms. Makes `geo` the extruded mesh's header and says whether it did.
bool extrude_for(serafin::Header& geo, int nplan, const std::string& geometry, const std::string& part) {
  if (nplan <= 1 || geo.nplan() != 1) return false;
  if (geo.ndp != 3)
    throw UsageError(geometry + " has NDP " + std::to_string(geo.ndp) + ": only triangles extrude to the prisms of " + part);
  geo.nelem *= nplan - 1;
  geo.npoin *= nplan;
  geo.ndp = 6;
  geo.iparam[6] = nplan;
  geo.iparam[7] = geo.iparam[8] = 0;
  return true;
}

}  // namespace

std::vector<std::int32_t> part_nodes(const serafin::Reader& part, const std::string& name, std::int64_t npoin2,
                                     int geo_nplan) {
  const auto& h = part.header();
  if (h.nplan() != geo_nplan)
    throw UsageError(name + " has " + std::to_string(h.nplan()) + " planes, the geometry " + std::to_string(geo_nplan));
  const auto knolg = part.read_ipobo();
  const std::int64_t np2 = h.npoin / h.nplan();
  std::vector<std::int32_t> gid;
  gid.reserve(static_cast<std::size_t>(h.npoin));
  for (int j = 0; j < h.nplan(); ++j)
    for (std::int64_t i = 0; i < np2; ++i) {
      const std::int64_t g = knolg[static_cast<std::size_t>(i)] - 1;
      if (g < 0 || g >= npoin2)
        throw FormatError(name, "record IPOBO/KNOLG", part.layout().header_bytes,
                          "global node " + std::to_string(g + 1) + " is outside the geometry's 1.." + std::to_string(npoin2));
      gid.push_back(static_cast<std::int32_t>(g + j * npoin2));
    }
  return gid;
}

namespace {

// The output header, as gretel writes it (merge.hpp): part 0's header on the geometry's mesh.
serafin::Header gretel_header(const serafin::Header& part0, const serafin::Header& geo, std::int32_t nptfr, bool extrude) {
  serafin::Header out = part0;
  out.set_title(part0.title.substr(0, 72));
  out.nelem = geo.nelem;
  out.npoin = geo.npoin;
  out.ndp = geo.ndp;
  out.sizes4 = geo.sizes4;
  if (extrude) out.date.reset();
  out.iparam = {1, 0, geo.iparam[2], geo.iparam[3], 0, 0, part0.iparam[6], nptfr, geo.iparam[8], out.date ? 1 : 0};
  return out;
}

// The boundary points of the .cli (IPARAM(8) of the output), counted by rank 0 on a thread
// of its own from the start, beside the opening of the parts.
class CliPoints {
 public:
  CliPoints(MPI_Comm comm, const std::string& cli) : given_(!cli.empty()) {
    int rank = 0;
    if (comm != MPI_COMM_NULL) MPI_Comm_rank(comm, &rank);
    if (given_ && rank == 0)
      count_ = std::async(std::launch::async, [cli] { return static_cast<std::int32_t>(boundary::read(cli).lines.size()); });
  }
  bool given() const { return given_; }
  std::int32_t get() { return count_.get(); }  // rank 0; the read's error, if any, is thrown here

 private:
  bool given_;
  std::future<std::int32_t> count_;
};

// IPARAM(8) of the output: the .cli's boundary points (read on rank 0), else the geometry's.
std::int32_t gretel_nptfr(MPI_Comm comm, const serafin::Header& geo, CliPoints& cli, bool extrude) {
  std::int32_t nptfr = geo.iparam[7];
  if (!cli.given() || extrude) return nptfr;
  int rank = 0;
  if (comm != MPI_COMM_NULL) MPI_Comm_rank(comm, &rank);
  collective(comm, [&] {
    if (rank == 0) nptfr = cli.get();
  });
  if (comm != MPI_COMM_NULL) MPI_Bcast(&nptfr, 1, MPI_INT32_T, 0, comm);
  return nptfr;
}

// Whether `path` is already the complete result a merge would write with header `out`: the
// file the ranks wrote during the run (open_merged_writer), whose parts hold no frames.
bool written_during_run(const std::string& path, const serafin::Header& out, std::int64_t& frames) {
  if (!file_exists(path)) return false;
  struct Forget {
    const std::string& path;
    ~Forget() { forget_closed_input(path); }  // looked at, not an input: it may still be written
  } forget{path};
  try {
    const serafin::Reader r(path);
    const auto& h = r.header();
    bool same = h.title_for_output() == out.title_for_output() && h.iparam == out.iparam && h.date == out.date &&
                h.nelem == out.nelem && h.npoin == out.npoin && h.ndp == out.ndp && h.precision == out.precision &&
                h.nvar() == out.nvar() && r.integrity().message.empty() && r.frame_count() > 0;
    for (int v = 0; same && v < h.nvar(); ++v)
      same = h.variables[static_cast<std::size_t>(v)].name == out.variables[static_cast<std::size_t>(v)].name &&
             h.variables[static_cast<std::size_t>(v)].unit == out.variables[static_cast<std::size_t>(v)].unit;
    frames = r.frame_count();
    return same;
  } catch (const Error&) {
    return false;
  }
}

// Every part's frame is at part 0's time (checked as the frame is read, not in a pass of
// its own over every part's time records).
void check_time(const Part& p, std::int64_t f, double t, const std::vector<double>& times0) {
  if (t != times0[static_cast<std::size_t>(f)])
    throw UsageError(p.reader->source().name() + ": frame " + std::to_string(f + 1) + " is at t = " + std::to_string(t) +
                     ", part 0's at t = " + std::to_string(times0[static_cast<std::size_t>(f)]));
}

// The nodes a part gives the output: those it holds that no later part holds (gretel's rule:
// the last part holding a node wins). Every node is given by exactly one part, so the parts
// can be scattered in any order, by several threads at once.
struct Won {
  std::vector<std::int32_t> local, global;
};
std::vector<Won> won_nodes(const std::vector<Part>& parts, std::int64_t npoin) {
  std::vector<std::int32_t> last(static_cast<std::size_t>(npoin), -1);
  for (std::size_t k = 0; k < parts.size(); ++k)
    for (const auto g : parts[k].gid) last[static_cast<std::size_t>(g)] = static_cast<std::int32_t>(k);
  std::vector<Won> won(parts.size());
  for (std::size_t k = 0; k < parts.size(); ++k) {
    const auto& gid = parts[k].gid;
    for (std::size_t i = 0; i < gid.size(); ++i)
      if (last[static_cast<std::size_t>(gid[i])] == static_cast<std::int32_t>(k)) {
        won[k].local.push_back(static_cast<std::int32_t>(i));
        won[k].global.push_back(gid[i]);
      }
  }
  return won;
}

// Scatters a part's won values (W bytes each, as stored; swapped when `swap`) to their
// global places.
template <class W>
void scatter(const unsigned char* values, const Won& won, bool swap, unsigned char* global) {
  auto* out = reinterpret_cast<W*>(global);
  const std::size_t n = won.local.size();
  for (std::size_t j = 0; j < n; ++j) {
    W v;
    std::memcpy(&v, values + static_cast<std::size_t>(won.local[j]) * sizeof(W), sizeof(W));
    out[won.global[j]] = swap ? bswap(v) : v;
  }
}

// One process: stream frame by frame, values kept as stored (the output has part 0's
// precision and byte order; no conversion unless a part's byte order differs). Each part's
// frame is one read (a few system calls per part and frame, not per record and piece).
// Memory: one frame of the output, a part's frame per thread and the won nodes' lists (two
// integers per node). The kernel is asked to read the
// parts' frames ahead (one contiguous range per part and frame, up to about 64 MiB ahead),
// so the disk works while a frame is scattered and written. The geometry's mesh records
// are streamed into the header.
void merge_alone(const std::vector<Part>& parts, const MergeOptions& o, const serafin::Header& out, const Mesh* mesh,
                 const std::vector<double>& times, std::int64_t frames, MergeReport& report) {
  // SERAFIN records as they are assembled; HDF5 (HDF5's POSIX driver) a frame at a time.
  // The output is created, its header and mesh written, on a thread of its own while the
  // first frame is assembled.
  std::optional<serafin::Writer> w;
  std::optional<vtkhdf::LoneOutput> h5;
  auto opening = std::async(std::launch::async, [&] {
    if (o.strategy == "hdf5") {
      h5.emplace(o.output, out, std::map<std::string, std::string>{{"strategy", "serial"}}, o.compress);
      if (mesh) {
        h5->out().write_mesh(mesh);
      } else {
        const serafin::Reader geometry(o.geometry);  // streamed: the mesh is never held whole
        h5->out().write_mesh(&geometry);
      }
    } else if (mesh) {
      w.emplace(o.output, out, *mesh);
    } else {
      w.emplace(o.output, out, serafin::Reader(o.geometry));
    }
  });
  const int rs = real_size(out.precision);
  const int nvar = out.nvar();
  const std::int64_t records = frames * nvar;
  // Frames [0, requested) of every part have been asked for; keep `ahead` frames (about
  // 64 MiB of parts) requested beyond the one being merged, one contiguous range per part.
  std::int64_t requested = 0, part_frame_bytes = 0;
  for (const auto& p : parts) part_frame_bytes += p.reader->layout().frame_bytes;
  const std::int64_t ahead = std::max<std::int64_t>(1, (std::int64_t{64} << 20) / std::max<std::int64_t>(1, part_frame_bytes));
  auto prefetch_to = [&](std::int64_t end) {
    end = std::min(end, frames);
    if (end <= requested) return;
    for (const auto& p : parts) p.reader->prefetch(requested, end - requested);
    requested = end;
  };
  // A frame at a time: each part's frame in one read (markers checked), the values it wins
  // scattered into the global frame, which then goes out variable by variable. Frames of a
  // MiB or more are assembled by two threads, each reading and scattering its share of the
  // parts (each node is won by one part: no two threads write the same place).
  const std::size_t var_bytes = static_cast<std::size_t>(out.npoin * rs);
  std::vector<unsigned char> global(var_bytes * static_cast<std::size_t>(nvar));
  const std::vector<Won> won = won_nodes(parts, out.npoin);
  // For tests only, ANABRANCH_TEST_MERGE_TEAMS=forward or reverse: two teams for any frame,
  // run one after the other in that order, so that a test sees both orders the threads may
  // take (each node won by one part: the output is the same either way).
  const char* forced = std::getenv("ANABRANCH_TEST_MERGE_TEAMS");
  const int turns = forced == nullptr ? 0 : std::string(forced) == "reverse" ? -1 : 1;
  const int teams = parts.size() > 1 && (turns != 0 || (var_bytes * static_cast<std::size_t>(nvar) >= (std::size_t{1} << 20) &&
                                                        std::thread::hardware_concurrency() > 1)) ? 2 : 1;
  std::vector<std::size_t> slice{0};  // parts [slice[t], slice[t + 1]) for team t, about equal bytes
  for (int t = 1; t < teams; ++t) {
    std::size_t k = slice.back();
    for (std::int64_t bytes = 0; k < parts.size() && bytes * teams < part_frame_bytes; ++k)
      bytes += parts[k].reader->layout().frame_bytes;
    slice.push_back(k);
  }
  slice.push_back(parts.size());
  std::vector<std::vector<unsigned char>> local(static_cast<std::size_t>(teams));
  auto assemble = [&](std::int64_t f, int t) {
    std::int64_t bytes_read = 0;
    for (std::size_t k = slice[static_cast<std::size_t>(t)]; k < slice[static_cast<std::size_t>(t) + 1]; ++k) {
      const auto& p = parts[k];
      const auto& lay = p.reader->layout();
      const ByteOrder order = p.reader->header().byte_order;
      auto& buf = local[static_cast<std::size_t>(t)];
      buf.resize(static_cast<std::size_t>(lay.frame_bytes));
      p.reader->read_frame_encoded(f, buf.data());
      check_time(p, f, rs == 4 ? double(load<float>(buf.data() + 4, order)) : load<double>(buf.data() + 4, order), times);
      bytes_read += nvar * static_cast<std::int64_t>(p.gid.size()) * rs;
      for (int v = 0; v < nvar; ++v) {
        const unsigned char* values = buf.data() + (lay.values_offset(f, v) - lay.frame_offset(f));
        unsigned char* dst = global.data() + static_cast<std::size_t>(v) * var_bytes;
        if (rs == 4)
          scatter<std::uint32_t>(values, won[k], order != out.byte_order, dst);
        else
          scatter<std::uint64_t>(values, won[k], order != out.byte_order, dst);
      }
    }
    return bytes_read;
  };
  Progress progress("merge " + o.output, records);
  for (std::int64_t f = 0; f < frames; ++f) {
    prefetch_to(f + 1 + ahead);
    if (teams == 2 && turns != 0) {
      for (int t : {turns > 0 ? 0 : 1, turns > 0 ? 1 : 0}) report.bytes_read += assemble(f, t);
    } else {
      std::future<std::int64_t> other;
      if (teams == 2) other = std::async(std::launch::async, assemble, f, 1);
      report.bytes_read += assemble(f, 0);
      if (other.valid()) report.bytes_read += other.get();
    }
    if (opening.valid()) opening.get();  // the output is there (or its error is thrown here)
    const double time = times[static_cast<std::size_t>(f)];
    if (h5) {  // the frame's values in native order
      for (int v = 0; v < nvar; ++v) {
        unsigned char* at = global.data() + static_cast<std::size_t>(v) * var_bytes;
        if (rs == 4)
          to_order<4>(at, static_cast<std::size_t>(out.npoin), out.byte_order);
        else
          to_order<8>(at, static_cast<std::size_t>(out.npoin), out.byte_order);
      }
      h5->out().write_frame(time, 0, out.npoin, global.data());
    } else {
      w->begin_frame(time);
      for (int v = 0; v < nvar; ++v) w->write_variable_encoded(global.data() + static_cast<std::size_t>(v) * var_bytes);
    }
    progress.update((f + 1) * nvar);
  }
  if (opening.valid()) opening.get();  // no frame
  if (h5) {
    h5->commit();
    report.bytes = file_size(o.output);
  } else {
    report.bytes = w->bytes_written();
    w->close();
  }
}

// Several ranks: each holds the union of its parts' nodes (values in the file's precision,
// T) and writes through the shared-file writer (temporary name, renamed at close).
template <class T>
void merge_together(MPI_Comm comm, const std::vector<Part>& parts, const MergeOptions& o, const serafin::Header& out,
                    const Mesh* mesh, const std::vector<double>& times, std::int64_t frames, MergeReport& report) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  std::vector<std::int32_t> ids;
  for (const auto& p : parts) ids.insert(ids.end(), p.gid.begin(), p.gid.end());
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  std::vector<std::vector<std::int32_t>> pos(parts.size());  // place of each part node in ids
  for (std::size_t k = 0; k < parts.size(); ++k)
    for (auto g : parts[k].gid)
      pos[k].push_back(static_cast<std::int32_t>(std::lower_bound(ids.begin(), ids.end(), g) - ids.begin()));
  for (auto& g : ids) ++g;  // 1-based, as KNOLG
  OutputDescription desc;
  desc.header = out;
  desc.geometry = o.geometry;  // rank 0 reads the mesh arrays from it
  desc.mesh = mesh;            // or has them made
  WriterOptions wo;
  wo.strategy = o.strategy;
  wo.compress = o.compress;
  wo.atomic = true;
  wo.frames = frames;
  wo.owner_highest = true;  // parts are spread in order over the ranks: the last part holding a node wins, as gretel
  Writer w(comm, o.output, desc, ids.data(), static_cast<std::int64_t>(ids.size()), wo);
  const int nv = out.nvar();
  std::vector<std::vector<T>> vals(static_cast<std::size_t>(nv), std::vector<T>(ids.size()));
  std::vector<const T*> ptrs;
  for (auto& v : vals) ptrs.push_back(v.data());
  std::vector<T> local;
  Progress progress("merge " + o.output, frames);
  for (std::int64_t f = 0; f < frames; ++f) {
    collective(comm, [&] {
      for (const auto& p : parts) check_time(p, f, p.reader->read_time(f), times);
      for (int v = 0; v < nv; ++v) {
        T* dst = vals[static_cast<std::size_t>(v)].data();
        for (std::size_t k = 0; k < parts.size(); ++k) {
          local.resize(parts[k].gid.size());
          parts[k].reader->read_values(f, v, local.data());
          report.bytes_read += static_cast<std::int64_t>(local.size() * sizeof(T));
          for (std::size_t i = 0; i < local.size(); ++i) dst[pos[k][i]] = local[i];
        }
      }
    });
    w.write_frame(times[static_cast<std::size_t>(f)], ptrs.data());
    if (rank == 0) progress.update(f + 1);
  }
  w.close();
  report.bytes = w.layout().header_bytes + frames * w.layout().frame_bytes;
  MPI_Allreduce(MPI_IN_PLACE, &report.bytes_read, 1, MPI_INT64_T, MPI_SUM, comm);
}

}  // namespace

MergeReport merge_parts(MPI_Comm comm, const MergeOptions& o) {
  const auto t0 = std::chrono::steady_clock::now();
  int rank = 0, size = 1;
  if (comm != MPI_COMM_NULL) {
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
  }
  raise_open_file_limit();
  CliPoints cli_points(comm, o.cli);
  MergeReport report;

  // The parts this rank reads, opened once each; the geometry's header.
  std::unique_ptr<partel::PartSet> set;
  std::vector<Part> parts;
  serafin::Header geo;
  std::int64_t npoin2 = 0;
  bool extrude = false;
  collective(comm, [&] {
    if (o.geometry.empty()) throw UsageError("merge needs the global geometry file (--geo)");
    set = std::make_unique<partel::PartSet>(o.base, o.nparts);
    geo = serafin::Reader(o.geometry).header();
    npoin2 = geo.npoin / geo.nplan();
    const int n = set->size();
    extrude = extrude_for(geo, set->open(0)->header().nplan(), o.geometry, set->name(0));
    for (int p = rank * n / size; p < (rank + 1) * n / size; ++p) {
      Part part{p, set->open(p), {}};
      part.gid = part_nodes(*part.reader, set->name(p), npoin2, geo.nplan());
      parts.push_back(std::move(part));
    }
  });
  report.parts = set->size();
  // The parts must tile the geometry: their elements add up to NELEM (2D base) and their
  // nodes cover every node.
  {
    std::int64_t total = 0;
    for (const auto& p : parts) total += p.reader->header().nelem;
    allreduce(comm, &total, 1, MPI_INT64_T, MPI_SUM);
    std::vector<std::uint8_t> all(static_cast<std::size_t>((npoin2 + 7) / 8), 0);
    for (const auto& p : parts)
      for (std::size_t i = 0; i < p.gid.size(); ++i) {
        const std::int64_t g = p.gid[i] % npoin2;
        all[static_cast<std::size_t>(g / 8)] |= static_cast<std::uint8_t>(1u << (g % 8));
      }
    allreduce(comm, all.data(), static_cast<int>(all.size()), MPI_UINT8_T, MPI_BOR);
    collective(comm, [&] {
      if (total != geo.nelem)
        throw UsageError("the " + std::to_string(set->size()) + " parts of " + o.base + " hold " + std::to_string(total) +
                         " elements, " + o.geometry + " has " + std::to_string(geo.nelem) + ": they are not parts of this geometry");
      for (std::int64_t g = 0; g < npoin2; ++g)
        if (!(all[static_cast<std::size_t>(g / 8)] & (1u << (g % 8))))
          throw UsageError("node " + std::to_string(g + 1) + " of " + o.geometry + " is in no part of " + o.base +
                           ": they are not parts of this geometry");
    });
  }

  // Part 0 gives the header (every rank reads it); every part must agree with it.
  serafin::Header h0;
  std::vector<double> times0;
  collective(comm, [&] {
    auto first = set->open(0);
    h0 = first->header();
    times0 = first->read_times();
  });
  std::int64_t frames = 0;
  {
    std::int64_t mine = std::numeric_limits<std::int64_t>::max(), mine_max = 0;
    int short_part = -1;
    collective(comm, [&] {
      for (const auto& p : parts) {
        const auto& h = p.reader->header();
        if (!same_variables(h, h0) || h.precision != h0.precision)
          throw UsageError(set->name(p.index) + " does not have part 0's variables or precision");
        if (!p.reader->integrity().message.empty() && !o.allow_partial)
          throw FormatError(p.reader->integrity().message + " (--allow-partial merges the frames every part has)");
        if (p.reader->frame_count() < mine) {
          mine = p.reader->frame_count();
          short_part = p.index;
        }
        mine_max = std::max(mine_max, p.reader->frame_count());
      }
    });
    std::int64_t fewest = mine, most = mine_max;
    allreduce(comm, &fewest, 1, MPI_INT64_T, MPI_MIN);
    allreduce(comm, &most, 1, MPI_INT64_T, MPI_MAX);
    collective(comm, [&] {
      if (fewest != most && !o.allow_partial && mine == fewest)
        throw UsageError(set->name(short_part) + " has " + std::to_string(fewest) + " frames, other parts up to " +
                         std::to_string(most) + " (--allow-partial merges the " + std::to_string(fewest) + " they all have)");
    });
    if (fewest != most)
      report.warning = "merged the " + std::to_string(fewest) + " frames every part has (some parts have up to " +
                       std::to_string(most) + ")";
    frames = fewest;
  }
  report.frames = frames;

  const serafin::Header out = gretel_header(h0, geo, gretel_nptfr(comm, geo, cli_points, extrude), extrude);
  report.npoin = geo.npoin;
  if (frames == 0) {
    std::int64_t kept = 0;
    collective(comm, [&] {
      if (rank == 0 && !written_during_run(o.output, out, kept)) kept = 0;
    });
    if (comm != MPI_COMM_NULL) MPI_Bcast(&kept, 1, MPI_INT64_T, 0, comm);
    if (kept > 0) {
      report.kept = true;
      report.frames = kept;
      report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      return report;
    }
  }
  // The extruded mesh is made by the rank that writes the header.
  Mesh mesh;
  collective(comm, [&] {
    if (extrude && rank == 0) mesh = anabranch::extrude(serafin::Reader(o.geometry).read_mesh(), out.nplan());
  });
  const Mesh* made = extrude && rank == 0 ? &mesh : nullptr;

  if (size == 1 && ((o.strategy != "hdf5" && o.strategy != "tecplot") || comm == MPI_COMM_NULL))
    merge_alone(parts, o, out, made, times0, frames, report);
  else if (out.precision == Precision::Single)
    merge_together<float>(comm, parts, o, out, made, times0, frames, report);
  else
    merge_together<double>(comm, parts, o, out, made, times0, frames, report);
  report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return report;
}

MergedWriter open_merged_writer(MPI_Comm comm, const std::string& part, const std::string& geometry, const std::string& cli,
                                const std::string& output, WriterOptions options) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  // Rank 0's part gives the header (as part 0 does to gretel): its name goes to every rank.
  const std::string first = broadcast(comm, part);
  CliPoints cli_points(comm, cli);
  serafin::Header geo, h0;
  std::vector<std::int32_t> gid;
  bool extrude = false;
  collective(comm, [&] {
    if (geometry.empty()) throw UsageError("the merged result needs the global geometry file");
    geo = serafin::Reader(geometry).header();
    h0 = serafin::Reader(first).header();
    const std::int64_t npoin2 = geo.npoin / geo.nplan();
    extrude = extrude_for(geo, h0.nplan(), geometry, first);
    const serafin::Reader mine(part);
    if (!same_variables(mine.header(), h0) || mine.header().precision != h0.precision)
      throw UsageError(part + " does not have the variables or precision of " + first);
    gid = part_nodes(mine, part, npoin2, geo.nplan());
  });
  const serafin::Header out = gretel_header(h0, geo, gretel_nptfr(comm, geo, cli_points, extrude), extrude);
  OutputDescription desc;
  desc.header = out;
  MergedWriter m;
  // 3D parts on a 2D geometry (TELEMAC-3D): the ranks extrude their shares of the header's
  // mesh records from the geometry's as they copy them (serafin::copy_mesh_records).
  desc.geometry = geometry;
  for (auto& g : gid) ++g;  // 1-based, as KNOLG
  m.nlocal = static_cast<std::int64_t>(gid.size());
  options.owner_highest = true;  // gretel's rule: the last part holding a node gives its value
  m.writer = std::make_unique<Writer>(comm, output, desc, gid.data(), m.nlocal, options);
  return m;
}

}  // namespace anabranch::pio
