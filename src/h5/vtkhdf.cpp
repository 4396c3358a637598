#include "h5/vtkhdf.hpp"

#include <sys/stat.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <mutex>
#include <set>

#include "core/byteorder.hpp"
#include "core/crc32.hpp"
#include "core/error.hpp"
#include "core/io.hpp"
#include "core/outputs.hpp"
#include "core/provenance.hpp"
#include "formats/vtu.hpp"
#include "h5/codecs.hpp"
#include "h5/h5.hpp"
#include "h5/xdmf.hpp"
#include "parallel/mpi_util.hpp"
#include "h5/results.hpp"
#include "parallel/rounding.hpp"
#include "parallel/topology.hpp"

namespace anabranch::pio::vtkhdf {

using h5::check;
using h5::check_status;
using h5::Handle;

namespace {

constexpr const char* kRoot = "/VTKHDF";
constexpr const char* kMeta = "/anabranch";
// 2: wedges in VTK's node order (version 1 kept SERAFIN's, which VTK shows inside out).
constexpr int kFormatVersion = 2;
constexpr std::int64_t kMeshPiece = std::int64_t{1} << 16;  // rows per mesh write by rank 0 (3 MiB of int64 triangles)
constexpr std::int64_t kStepChunk = 256;

double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

const char* xdmf_topology(int ndp, int nplan) {
  switch (ndp) {
    case 2: return "Polyline";
    case 3: return "Triangle";
    case 4: return nplan > 1 ? "Tetrahedron" : "Quadrilateral";
    case 6: return "Wedge";
    case 8: return "Hexahedron";
    default: return "Mixed";
  }
}

// Dataset names for the variables: trimmed, then as h5::link_names makes them.
std::vector<std::string> point_data_names_for(const serafin::Header& h) {
  std::vector<std::string> names;
  for (const auto& v : h.variables) names.push_back(trimmed(v.name));
  return h5::link_names(names);
}

std::vector<std::uint8_t> bytes_of(const std::string& s, std::size_t width) {
  std::vector<std::uint8_t> b(width, ' ');
  std::copy_n(s.begin(), std::min(width, s.size()), b.begin());
  return b;
}

hid_t real_type(Precision p) { return p == Precision::Double ? H5T_NATIVE_DOUBLE : H5T_NATIVE_FLOAT; }

std::string base_name(const std::string& path) {
  const auto slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

}  // namespace

namespace {

// (crc, bytes) of a piece, then of the next: the pair of both, pieces in rank order (MPI
// applies a non-commutative operation to the lower ranks' operand first).
void combine_pieces(void* in, void* inout, int* len, MPI_Datatype*) {
  const auto* a = static_cast<const std::uint64_t*>(in);
  auto* b = static_cast<std::uint64_t*>(inout);
  for (int i = 0; i < *len; ++i, a += 2, b += 2) {
    b[0] = crc32_combine(static_cast<std::uint32_t>(a[0]), static_cast<std::uint32_t>(b[0]), static_cast<std::int64_t>(b[1]));
    b[1] += a[1];
  }
}

}  // namespace

// Each rank reads N/P of each input, not the whole.
void checksum_inputs(MPI_Comm comm) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  MPI_Op op;
  MPI_Op_create(&combine_pieces, 0, &op);
  MPI_Datatype pair;  // (crc, bytes): one item of the operation
  MPI_Type_contiguous(2, MPI_UINT64_T, &pair);
  MPI_Type_commit(&pair);
  for (const auto& path : provenance::inputs_to_check()) {  // the same list on every rank
    std::uint64_t piece[2] = {0, 0}, whole[2] = {0, 0};
    std::int64_t bytes = 0;
    try {
      const FileSource src(path);
      bytes = src.size();
      const std::int64_t begin = bytes / size * rank + std::min<std::int64_t>(rank, bytes % size),
                         end = bytes / size * (rank + 1) + std::min<std::int64_t>(rank + 1, bytes % size);
      std::vector<unsigned char> buf(static_cast<std::size_t>(std::min<std::int64_t>(end - begin, std::int64_t{1} << 20)));
      std::uint32_t crc = 0;
      for (std::int64_t at = begin; at < end;) {
        const auto n = static_cast<std::size_t>(std::min<std::int64_t>(static_cast<std::int64_t>(buf.size()), end - at));
        src.read_at(at, buf.data(), n);
        crc = crc32(crc, buf.data(), n);
        at += static_cast<std::int64_t>(n);
      }
      piece[0] = crc;
      piece[1] = static_cast<std::uint64_t>(end - begin);
    } catch (const std::exception&) {
      bytes = 0;  // unreadable here: recorded as unknown (0 bytes), as a lone process does
    }
    MPI_Allreduce(piece, whole, 1, pair, op, comm);  // on every rank: their lists stay the same
    provenance::set_input(path, bytes, static_cast<std::uint32_t>(whole[0]));
  }
  MPI_Type_free(&pair);
  MPI_Op_free(&op);
}

std::map<std::string, std::string> parallel_facts(MPI_Comm comm, bool with_inputs) {
  int rank = 0, size = 1;
  char host[MPI_MAX_PROCESSOR_NAME] = {0};
  if (comm == MPI_COMM_NULL) {  // one process without MPI
    ::gethostname(host, sizeof host - 1);
  } else {
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    int len = 0;
    MPI_Get_processor_name(host, &len);
    if (with_inputs) checksum_inputs(comm);
  }
  // The hosts, one name per node (from each node's first rank) to rank 0: O(nodes) there,
  // nothing per rank elsewhere.
  std::vector<char> all(sizeof host);
  int names = 1;
  if (comm == MPI_COMM_NULL) {
    std::memcpy(all.data(), host, sizeof host);
  } else {
    MPI_Comm node = split_node(comm), leaders = MPI_COMM_NULL;
    int node_rank = 0;
    MPI_Comm_rank(node, &node_rank);
    MPI_Comm_split(comm, node_rank == 0 ? 0 : MPI_UNDEFINED, rank, &leaders);
    MPI_Comm_free(&node);
    if (leaders != MPI_COMM_NULL) {  // rank 0 is its node's first rank: a leader, and their rank 0
      MPI_Comm_size(leaders, &names);
      if (rank == 0) all.resize(static_cast<std::size_t>(names) * MPI_MAX_PROCESSOR_NAME);
      MPI_Gather(host, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, all.data(), MPI_MAX_PROCESSOR_NAME, MPI_CHAR, 0, leaders);
      MPI_Comm_free(&leaders);
    }
  }
  std::string text;
  if (rank == 0) {
    std::map<std::string, std::string> f = provenance::facts(with_inputs);
    std::set<std::string> hosts;
    for (int r = 0; r < names; ++r) hosts.insert(std::string(&all[static_cast<std::size_t>(r) * MPI_MAX_PROCESSOR_NAME]));
    std::string list;
    int shown = 0;
    for (const auto& h : hosts) {
      if (shown++ == 64) {
        list += ", ...";
        break;
      }
      list += (list.empty() ? "" : ", ") + h;
    }
    f["hosts"] = list;
    f["node_count"] = std::to_string(hosts.size());
    f["ranks"] = std::to_string(size);
    char lib[MPI_MAX_LIBRARY_VERSION_STRING] = {0};
    int liblen = 0;
    MPI_Get_library_version(lib, &liblen);
    std::string l(lib, static_cast<std::size_t>(liblen));
    l = l.substr(0, l.find('\n'));
    f["mpi_library"] = trimmed(l);
    unsigned maj = 0, min = 0, rel = 0;
    H5get_libversion(&maj, &min, &rel);
    f["hdf5_library"] = std::to_string(maj) + "." + std::to_string(min) + "." + std::to_string(rel);
    for (const auto& [k, v] : f) text += k + '\0' + v + '\0';
  }
  text = broadcast(comm, std::move(text));
  std::map<std::string, std::string> out;
  for (std::size_t at = 0; at < text.size();) {
    const std::size_t k_end = text.find('\0', at);
    const std::size_t v_end = text.find('\0', k_end + 1);
    out[text.substr(at, k_end - at)] = text.substr(k_end + 1, v_end - k_end - 1);
    at = v_end + 1;
  }
  return out;
}


bool is_hdf5(const std::string& path) { return looks_like_hdf5(path); }

void load_library() { h5api::load(); }


std::string xdmf_path(const std::string& path) { return path + ".xmf"; }

std::string step_path(const std::string& path, std::int64_t step) {
  const auto slash = path.rfind('/');
  auto dot = path.rfind('.');
  if (dot == std::string::npos || (slash != std::string::npos && dot < slash)) dot = path.size();
  char buf[32];
  std::snprintf(buf, sizeof buf, "_%06lld", static_cast<long long>(step));
  return path.substr(0, dot) + buf + path.substr(dot);
}

void write_xdmf(const std::string& xmf, const serafin::Header& h, const std::vector<XdmfFrame>& frames) {
  const std::vector<std::string> names = point_data_names_for(h);
  const int rb = h.precision == Precision::Double ? 8 : 4;
  const std::string mesh_file = frames.empty() ? std::string() : frames[0].file;
  const std::string npoin = std::to_string(h.npoin);
  xdmf::write_file(xmf, [&](std::FILE* out) {
    std::fprintf(out, "  <Grid Name=\"%s\" GridType=\"Collection\" CollectionType=\"Temporal\">\n", xdmf::escape(mesh_file).c_str());
    for (std::size_t k = 0; k < frames.size(); ++k) {
      const XdmfFrame& fr = frames[k];
      std::fprintf(out, "   <Grid Name=\"frame %zu\" GridType=\"Uniform\">\n", k);
      std::fprintf(out, "    <Time Value=\"%.17g\"/>\n", fr.time);
      std::fprintf(out,
                   "    <Topology TopologyType=\"%s\" NumberOfElements=\"%lld\">\n"
                   "     <DataItem Dimensions=\"%lld\" NumberType=\"Int\" Precision=\"8\" Format=\"HDF\">%s:/VTKHDF/Connectivity</DataItem>\n"
                   "    </Topology>\n",
                   xdmf_topology(h.ndp, h.nplan()), static_cast<long long>(h.nelem), static_cast<long long>(h.nelem * h.ndp),
                   xdmf::escape(mesh_file).c_str());
      std::fprintf(out, "    <Geometry GeometryType=\"XYZ\">\n");
      xdmf::slice(out, 5, npoin + " 3", rb, mesh_file, "/VTKHDF/Points", 0, h.npoin, h.npoin, 3);
      std::fprintf(out, "    </Geometry>\n");
      for (const auto& name : names) {
        std::fprintf(out, "    <Attribute Name=\"%s\" AttributeType=\"Scalar\" Center=\"Node\">\n", xdmf::escape(name).c_str());
        xdmf::slice(out, 5, npoin, rb, fr.file, "/VTKHDF/PointData/" + name, fr.index * h.npoin, h.npoin, fr.frames_in_file * h.npoin);
        std::fprintf(out, "    </Attribute>\n");
      }
      std::fprintf(out, "   </Grid>\n");
    }
    std::fprintf(out, "  </Grid>\n");
  });
}

// ---------------------------------------------------------------------------------------

struct Output::Impl {
  MPI_Comm comm = MPI_COMM_NULL;
  MPI_Info info = MPI_INFO_NULL;  // MPI-IO hints, owned by the caller
  int rank = 0;
  std::string path;
  std::string name;  // the file as the user knows it (its final name), for messages
  serafin::Header header;
  OutputOptions options;
  std::vector<std::string> names;
  std::vector<double> times;  // rank 0: for the XDMF sidecar
  Handle file, root, points, steps_values, nsteps_holder;
  std::vector<Handle> data, data_offsets;
  std::vector<Handle> step_sets;  // PartOffsets, NumberOfParts, PointOffsets, CellOffsets, ConnectivityIdOffsets
  Handle xfer_collective, xfer_independent;
  std::int64_t chunk = 0;

  void create();
  void write_inputs();  // the provenance's "inputs" (checksums), at close
  void write_mesh(const MeshPieces& mesh, int share = 0, int shares = 1);
  // Values of Points (a selection of mspace's shape) given in double.
  void write_points(hid_t mspace, hid_t fspace, hid_t xfer, const std::vector<double>& values);
  // The mesh datasets' filters: lossless with the frames' codec when they are compressed
  // (and the mesh is this file's own), else none.
  Compression mesh_filters() const {
    Compression c;
    if (options.compress.on() && options.mesh_link.empty()) c.mode = Compression::Mode::Lossless, c.codec = options.compress.codec;
    return c;
  }
  // Closes every object but the file (HDF5 closes a file only when nothing in it is open).
  void release_objects() {
    data.clear();
    data_offsets.clear();
    step_sets.clear();
    steps_values.reset();
    nsteps_holder.reset();
    points.reset();
    root.reset();
    xfer_collective.reset();
    xfer_independent.reset();
  }
  // Frame k added: every variable extended by a frame (its chunks allocated), Steps.
  void extend(std::int64_t k, double time);
  // A lossy bound: the n values of a frame's variable this rank writes rounded within it
  // (rel: the variable's range over every rank's values of the frame). Collective.
  void round(unsigned char* values, std::int64_t n) const {
    round_frame(comm, options.compress, values, n, header.precision == Precision::Double ? 8 : 4);
  }
  void elevation_to_z();  // the first frame's elevation to the points' Z, each rank a share
  // A lossy output's Z: the first frame's elevation as given to write_frame, not as rounded
  // in the file (the mesh is exact): this rank's block of it.
  std::int64_t z_first = -1;
  std::vector<double> z_block;

  // Abandoned before close() (a write failed, here or on another rank; every rank gets here
  // together): the file is removed by its owner, but HDF5 must still close it, collectively.
  // A failed H5Fclose leaves HDF5 with a half-destroyed file that it closes again at
  // MPI_Finalize, and crashes there. The close flushes metadata, which fails again on the
  // full disk that stopped the writes: so the file is emptied first, through HDF5's own MPI
  // file handle (giving its space back, even when its name is already removed; the flush
  // then writes a few sparse blocks). check_room keeps the file inside a file-size limit.
  void abandon() {
    if (!file.valid()) return;
    int finalized = 0;
    if (comm != MPI_COMM_NULL) MPI_Finalized(&finalized);
    if (finalized) return;
    release_objects();
    h5::empty_for_close(file, comm != MPI_COMM_NULL);
    if (H5Fclose(file.release()) < 0) H5Eclear2(H5E_DEFAULT);
    H5Eclear2(H5E_DEFAULT);
  }

  // HDF5 cannot close a file whose allocated end lies past the file-size limit (RLIMIT_FSIZE:
  // closing extends the file to that end, fails, and a failed close crashes HDF5 later). So
  // a write that would take the file past the limit is refused before HDF5 allocates
  // anything for it: `bytes` more, and 1 MiB for the metadata.
  void check_room(std::int64_t bytes, const std::string& what) const {
    if (file_size_limit() < 0) return;
    haddr_t eoa = 0;
    if (H5Fget_eoa(file, &eoa) < 0) {  // not every driver answers: the file's size then
      H5Eclear2(H5E_DEFAULT);
      struct stat st {};
      eoa = ::stat(path.c_str(), &st) == 0 ? static_cast<haddr_t>(st.st_size) : 0;
    }
    check_size_limit(name, static_cast<std::int64_t>(eoa) + bytes + (std::int64_t{1} << 20), what);
  }
};

void Output::Impl::create() {
  h5::quiet();
  const std::string& f = name;
  Handle fapl(check(H5Pcreate(H5P_FILE_ACCESS), "H5Pcreate", f));
  if (comm != MPI_COMM_NULL) {  // else one process without MPI: HDF5's POSIX driver
    check_status(H5Pset_fapl_mpio(fapl, comm, info), "H5Pset_fapl_mpio", f);
    check_status(H5Pset_all_coll_metadata_ops(fapl, true), "H5Pset_all_coll_metadata_ops", f);
    check_status(H5Pset_coll_metadata_write(fapl, true), "H5Pset_coll_metadata_write", f);
  }
  if (options.alignment > 0)
    check_status(H5Pset_alignment(fapl, static_cast<hsize_t>(std::min<std::int64_t>(options.alignment, 1 << 20)),
                                  static_cast<hsize_t>(options.alignment)),
                 "H5Pset_alignment", f);
  if (comm == MPI_COMM_NULL) {  // alone: the system's reason in one line, not HDF5's error stack
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) throw IoError::from_errno("cannot create", f);
    ::close(fd);
  }
  file = Handle(check(H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl), "cannot create", f));
  // Transfers every rank takes part in; a lone writer skips MPI-IO's collective buffering
  // (one more copy of every frame, for nothing to gather).
  int writers = 1;
  if (comm != MPI_COMM_NULL) MPI_Comm_size(comm, &writers);
  xfer_collective = Handle(check(H5Pcreate(H5P_DATASET_XFER), "H5Pcreate", f));
  xfer_independent = Handle(check(H5Pcreate(H5P_DATASET_XFER), "H5Pcreate", f));
  if (comm != MPI_COMM_NULL) {
    // (HDF5 writes filtered chunks collectively only.)
    check_status(H5Pset_dxpl_mpio(xfer_collective, writers > 1 || options.compress.on() ? H5FD_MPIO_COLLECTIVE : H5FD_MPIO_INDEPENDENT),
                 "H5Pset_dxpl_mpio", f);
    check_status(H5Pset_dxpl_mpio(xfer_independent, H5FD_MPIO_INDEPENDENT), "H5Pset_dxpl_mpio", f);
  }

  const serafin::Header& h = header;
  const std::int64_t npoin = h.npoin, nelem = h.nelem, ndp = h.ndp;
  names = point_data_names_for(h);

  // VTKHDF root.
  root = Handle(check(H5Gcreate2(file, kRoot, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), "cannot create group /VTKHDF in", f));
  h5::write_attribute<std::int64_t>(root, "Version", {2, 0}, f);
  h5::write_attribute(root, "Type", std::string("UnstructuredGrid"), f);
  auto one = [&](const char* dataset, std::int64_t v) {
    Handle d = h5::create_dataset(root, dataset, H5T_STD_I64LE, 1, 0, f);
    h5::write_range<std::int64_t>(d, 0, rank == 0 ? 1 : 0, &v, xfer_collective, f);
  };
  const std::string& link = options.mesh_link;
  auto external = [&](hid_t loc, const char* link_name, const std::string& target) {
    check_status(H5Lcreate_external(link.c_str(), target.c_str(), loc, link_name, H5P_DEFAULT, H5P_DEFAULT),
                 "cannot link " + target + " in", f);
  };
  // Compressed outputs compress the mesh too, losslessly, a chunk per piece of kMeshPiece
  // rows (mesh_filters() on: written collectively, write_mesh).
  const Compression lossless = mesh_filters();
  const std::int64_t rows = lossless.on() ? kMeshPiece : 0;
  if (link.empty()) {
    // Parallel HDF5 allocates the mesh's datasets when it creates them. Compressed, it
    // allocates each chunk as it is written, at a size unknown here: room for the whole
    // mesh is asked all the same, as HDF5 fails (or crashes) on a filtered write that fails.
    check_room(nelem * (ndp * 8 + 9) + npoin * (4 + 3 * real_size(h.precision)), "the mesh");
    one("NumberOfPoints", npoin);
    one("NumberOfCells", nelem);
    one("NumberOfConnectivityIds", nelem * ndp);
    points = h5::create_dataset_2d(root, "Points", real_type(h.precision), npoin, 3, f, rows, lossless);
    h5::create_dataset(root, "Connectivity", H5T_STD_I64LE, nelem * ndp, rows * ndp, f, false, lossless);
    h5::create_dataset(root, "Offsets", H5T_STD_I64LE, nelem + 1, rows, f, false, lossless);
    h5::create_dataset(root, "Types", H5T_STD_U8LE, nelem, rows, f, false, lossless);
  } else {
    for (const char* n : {"NumberOfPoints", "NumberOfCells", "NumberOfConnectivityIds", "Points", "Connectivity", "Offsets", "Types"})
      external(root, n, std::string(kRoot) + "/" + n);
  }

  // Point data: one extendible 1-D dataset per variable, frames one after the other, each
  // frame whole chunks allocated when it is added (the engine writes them at their
  // addresses): one chunk, or the fewest equal ones within HDF5's 4 GiB chunk.
  const std::int64_t most = options.chunk_bytes > 0 ? std::min<std::int64_t>(options.chunk_bytes, 0xffffffffLL) : 0xffffffffLL;
  chunk = std::max<std::int64_t>(npoin, 1);
  for (std::int64_t parts = 2; chunk * real_size(h.precision) > most; ++parts) {
    if (parts > 64)
      throw UsageError(f + ": a frame of " + std::to_string(npoin) + " nodes in " + to_string(h.precision) +
                       " precision cuts into no 64 equal HDF5 chunks of at most " + std::to_string(most) +
                       " bytes (write single precision, SERAFIN, or a larger chunk_bytes)");
    if (npoin % parts == 0 && npoin / parts * real_size(h.precision) <= most) chunk = npoin / parts;
  }
  const bool compress = options.compress.on();
  if (compress && options.compress_chunk > 0) chunk = std::min(chunk, options.compress_chunk);
  Handle pd(check(H5Gcreate2(root, "PointData", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), "cannot create PointData in", f));
  for (int v = 0; v < h.nvar(); ++v) {
    data.push_back(h5::create_dataset(pd, names[static_cast<std::size_t>(v)], real_type(h.precision), 0, chunk, f, !compress,
                                      options.compress));
    h5::write_attribute(data.back(), "units", trimmed(h.variables[static_cast<std::size_t>(v)].unit), f);
    if (compress) h5::write_attribute(data.back(), "compression", options.compress.str(), f);
  }
  // Steps: the transient part of VTKHDF 2.
  Handle steps(check(H5Gcreate2(root, "Steps", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), "cannot create Steps in", f));
  h5::write_attribute<std::int64_t>(steps, "NSteps", {0}, f);
  steps_values = h5::create_dataset(steps, "Values", H5T_IEEE_F64LE, 0, kStepChunk, f);
  for (const char* n : {"PartOffsets", "NumberOfParts", "PointOffsets", "CellOffsets", "ConnectivityIdOffsets"})
    step_sets.push_back(h5::create_dataset(steps, n, H5T_STD_I64LE, 0, kStepChunk, f));
  Handle pdo(check(H5Gcreate2(steps, "PointDataOffsets", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
                   "cannot create PointDataOffsets in", f));
  for (int v = 0; v < h.nvar(); ++v)
    data_offsets.push_back(h5::create_dataset(pdo, names[static_cast<std::size_t>(v)], H5T_STD_I64LE, 0, kStepChunk, f));
  nsteps_holder = std::move(steps);

  // What SERAFIN holds and VTKHDF does not: the round trip back to the same bytes.
  Handle meta(check(H5Gcreate2(file, kMeta, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), "cannot create /anabranch in", f));
  h5::write_attribute(meta, "format", std::string("anabranch-vtkhdf"), f);
  h5::write_attribute<std::int32_t>(meta, "format_version", {kFormatVersion}, f);
  h5::write_attribute<std::uint8_t>(meta, "title", bytes_of(h.title, 80), f);
  std::vector<std::uint8_t> vn, vu;
  for (const auto& v : h.variables) {
    const auto a = bytes_of(v.name, 16), b = bytes_of(v.unit, 16);
    vn.insert(vn.end(), a.begin(), a.end());
    vu.insert(vu.end(), b.begin(), b.end());
  }
  h5::write_attribute<std::int32_t>(meta, "nbv1", {h.nvar()}, f);
  if (h.nvar() > 0) {
    h5::write_attribute<std::uint8_t>(meta, "variable_names", vn, f);
    h5::write_attribute<std::uint8_t>(meta, "variable_units", vu, f);
  }
  std::string joined;
  for (const auto& n : names) joined += (joined.empty() ? "" : "\n") + n;
  h5::write_attribute(meta, "point_data", joined, f);
  h5::write_attribute<std::int32_t>(meta, "nbv2", {h.nbv2}, f);
  h5::write_attribute<std::int32_t>(meta, "iparam", std::vector<std::int32_t>(h.iparam.begin(), h.iparam.end()), f);
  if (h.date) h5::write_attribute<std::int32_t>(meta, "date", std::vector<std::int32_t>(h.date->begin(), h.date->end()), f);
  h5::write_attribute<std::int64_t>(meta, "nelem", {nelem}, f);
  h5::write_attribute<std::int64_t>(meta, "npoin", {npoin}, f);
  h5::write_attribute<std::int32_t>(meta, "ndp", {h.ndp}, f);
  h5::write_attribute<std::int32_t>(meta, "sizes4", {h.sizes4}, f);
  h5::write_attribute(meta, "precision", std::string(to_string(h.precision)), f);
  h5::write_attribute(meta, "serafin_byte_order", std::string(to_string(h.byte_order)), f);
  if (link.empty())
    h5::create_dataset(meta, "IPOBO", H5T_STD_I32LE, npoin, rows, f, false, lossless);
  else
    external(meta, "IPOBO", std::string(kMeta) + "/IPOBO");

  // The inputs' checksums are written at close: their thread reads the inputs while the
  // frames are converted, instead of before.
  Handle prov(check(H5Gcreate2(meta, "provenance", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), "cannot create provenance in", f));
  auto facts = parallel_facts(comm, false);
  for (const auto& [k, v] : options.provenance) facts[k] = v;
  for (const auto& [k, v] : facts) h5::write_attribute(prov, k, v, f);
}

void Output::Impl::write_inputs() {
  if (comm != MPI_COMM_NULL) checksum_inputs(comm);  // those given to every rank to checksum
  const std::string text = broadcast(comm, rank == 0 ? provenance::inputs() : std::string());
  const std::string where = std::string(kMeta) + "/provenance";
  Handle prov(check(H5Gopen2(file, where.c_str(), H5P_DEFAULT), "cannot open provenance in", name));
  h5::write_attribute(prov, "inputs", text, name);
}

void Output::Impl::extend(std::int64_t k, double time) {
  const std::string& f = name;
  const std::int64_t npoin = header.npoin;
  check_room(npoin * real_size(header.precision) * header.nvar(), "frame " + std::to_string(k + 1));
  for (auto& d : data) {
    const hsize_t len = static_cast<hsize_t>((k + 1) * npoin);
    check_status(H5Dset_extent(d, &len), "cannot extend a variable in", f);
  }
  // Steps: one more entry everywhere, written by rank 0.
  const hsize_t steps = static_cast<hsize_t>(k + 1);
  const std::int64_t mine = rank == 0 ? 1 : 0;
  check_status(H5Dset_extent(steps_values, &steps), "cannot extend Steps/Values in", f);
  h5::write_range<double>(steps_values, k, mine, &time, xfer_collective, f);
  const std::int64_t step_row[5] = {0, 1, 0, 0, 0};
  for (std::size_t i = 0; i < step_sets.size(); ++i) {
    check_status(H5Dset_extent(step_sets[i], &steps), "cannot extend Steps in", f);
    h5::write_range<std::int64_t>(step_sets[i], k, mine, &step_row[i], xfer_collective, f);
  }
  const std::int64_t offset = k * npoin;
  for (auto& d : data_offsets) {
    check_status(H5Dset_extent(d, &steps), "cannot extend PointDataOffsets in", f);
    h5::write_range<std::int64_t>(d, k, mine, &offset, xfer_collective, f);
  }
  h5::write_attribute<std::int64_t>(nsteps_holder, "NSteps", {k + 1}, f);
  if (rank == 0) times.push_back(time);
}

void Output::Impl::elevation_to_z() {
  int size = 1;
  if (comm != MPI_COMM_NULL) MPI_Comm_size(comm, &size);
  std::int64_t first = header.npoin / size * rank + std::min<std::int64_t>(rank, header.npoin % size);
  std::int64_t count = header.npoin / size + (rank < header.npoin % size ? 1 : 0);
  std::vector<double> z(static_cast<std::size_t>(count));
  if (z_first >= 0) {
    first = z_first, count = static_cast<std::int64_t>(z_block.size());
    z = std::move(z_block);
  } else {
    h5::read_range<double>(data.at(0), first, count, z.data(), xfer_collective, name);
  }
  auto [fspace, mspace] = h5::range_spaces(points, first, count, name, 2);
  write_points(mspace, fspace, xfer_collective, z);
}

void Output::Impl::write_points(hid_t mspace, hid_t fspace, hid_t xfer, const std::vector<double>& values) {
  // HDF5 writes filtered chunks collectively only, and a transfer that converts is not
  // collective: a compressed mesh's points go in the file's own precision.
  if (mesh_filters().on() && header.precision == Precision::Single) {
    const std::vector<float> single(values.begin(), values.end());
    check_status(H5Dwrite(points, H5T_NATIVE_FLOAT, mspace, fspace, xfer, single.data()), "cannot write Points in", name);
  } else {
    check_status(H5Dwrite(points, H5T_NATIVE_DOUBLE, mspace, fspace, xfer, values.data()), "cannot write Points in", name);
  }
}

Output::Output(MPI_Comm comm, const std::string& path, const serafin::Header& header, MPI_Info info,
               const OutputOptions& options)
    : impl_(std::make_unique<Impl>()) {
  const double t0 = now();
  impl_->comm = comm;
  impl_->path = path;
  impl_->name = options.final_path.empty() ? path : options.final_path;
  impl_->header = header;
  impl_->options = options;
  impl_->info = info;
  if (comm != MPI_COMM_NULL) MPI_Comm_rank(comm, &impl_->rank);
  try {
    collective(comm, [&] {
      vtu::cell_type(header.ndp, header.nplan());  // refuses element kinds VTK cannot show
      impl_->create();
    });
  } catch (...) {
    impl_->abandon();
    throw;
  }
  open_seconds_ = now() - t0;
}

Output::~Output() {
  if (impl_) impl_->abandon();
}

// The mesh a piece at a time: IKLE rows, IPOBO entries, X and Y of a range (rank 0).
struct Output::MeshPieces {
  std::int64_t nelem, npoin;
  int ndp, nplan;
  std::function<void(std::int64_t, std::int64_t, std::int32_t*)> ikle, ipobo;
  std::function<void(bool, std::int64_t, std::int64_t, double*)> coordinates;
};

void Output::Impl::write_mesh(const MeshPieces& mesh, int share, int shares) {
  // Share `share` of `shares` of the elements and of the nodes (share -1: none), in pieces
  // with independent transfers: bounded extra memory. A compressed mesh goes in collective
  // transfers (HDF5 writes filtered chunks so only): the shares cut at whole pieces, every
  // rank as many transfers (empty ones past its share), each piece read first and agreed on
  // (a rank that cannot read its piece fails every rank, none waits in a transfer).
  const std::string& f = name;
  if (mesh.npoin != header.npoin || mesh.nelem != header.nelem || mesh.ndp != header.ndp)
    throw UsageError("the mesh does not have the header's sizes");
  const bool filtered = mesh_filters().on();
  const hid_t xfer = filtered ? xfer_collective.get() : xfer_independent.get();
  auto read = [&](const std::function<void()>& fn) {
    if (filtered)
      collective(comm, fn);
    else
      fn();
  };
  const std::int64_t npoin = mesh.npoin, nelem = mesh.nelem, ndp = mesh.ndp;
  Handle conn(check(H5Dopen2(root, "Connectivity", H5P_DEFAULT), "H5Dopen2", f));
  Handle offs(check(H5Dopen2(root, "Offsets", H5P_DEFAULT), "H5Dopen2", f));
  Handle types(check(H5Dopen2(root, "Types", H5P_DEFAULT), "H5Dopen2", f));
  Handle ipobo(check(H5Dopen2(file, "/anabranch/IPOBO", H5P_DEFAULT), "H5Dopen2", f));
  const std::uint8_t type = vtu::cell_type(mesh.ndp, mesh.nplan);
  const int* order = vtu::node_order(mesh.ndp, mesh.nplan);
  std::vector<std::int32_t> rows(static_cast<std::size_t>(std::min(kMeshPiece, std::max<std::int64_t>(nelem, npoin)) * ndp));
  std::vector<std::int64_t> buf;
  // A share's first row; compressed: whole pieces, and `pieces` transfers for every share.
  auto per = [&](std::int64_t n) {
    const std::int64_t even = (n + shares - 1) / shares;
    return filtered ? (even + kMeshPiece - 1) / kMeshPiece * kMeshPiece : even;
  };
  auto first = [&](std::int64_t n, int k) {
    if (k < 0) return n;  // no share
    if (filtered) return std::min(n, per(n) * k);
    return n / shares * k + std::min<std::int64_t>(k, n % shares);
  };
  auto pieces = [&](std::int64_t n, std::int64_t from, std::int64_t to) {
    return filtered ? per(n) / kMeshPiece : (to - from + kMeshPiece - 1) / kMeshPiece;
  };
  const std::int64_t e_begin = first(nelem, share), e_end = share < 0 ? nelem : first(nelem, share + 1);
  const std::int64_t p_begin = first(npoin, share), p_end = share < 0 ? npoin : first(npoin, share + 1);
  for (std::int64_t piece = 0, count = pieces(nelem, e_begin, e_end); piece < count; ++piece) {
    const std::int64_t e0 = std::min(e_end, e_begin + piece * kMeshPiece), ne = std::min(kMeshPiece, e_end - e0);
    read([&] {
      if (ne > 0) mesh.ikle(e0, ne, rows.data());
    });
    buf.resize(static_cast<std::size_t>(ne * ndp));
    for (std::int64_t e = 0; e < ne; ++e)
      for (std::int64_t k = 0; k < ndp; ++k)
        buf[static_cast<std::size_t>(e * ndp + k)] = rows[static_cast<std::size_t>(e * ndp + order[k])] - 1;
    h5::write_range<std::int64_t>(conn, e0 * ndp, ne * ndp, buf.data(), xfer, f);
    buf.resize(static_cast<std::size_t>(ne));
    for (std::int64_t i = 0; i < ne; ++i) buf[static_cast<std::size_t>(i)] = (e0 + i) * ndp;
    h5::write_range<std::int64_t>(offs, e0, ne, buf.data(), xfer, f);
    std::vector<std::uint8_t> t(static_cast<std::size_t>(ne), type);
    h5::write_range<std::uint8_t>(types, e0, ne, t.data(), xfer, f);
  }
  const std::int64_t last = nelem * ndp;
  if (share == 0 || filtered) h5::write_range<std::int64_t>(offs, nelem, share == 0 ? 1 : 0, &last, xfer, f);
  // IPOBO; points (x, y, 0) in the file's precision (Z of 3D meshes comes with the first frame).
  std::vector<double> x(static_cast<std::size_t>(std::min(kMeshPiece, npoin))), y(x.size()), xyz;
  for (std::int64_t piece = 0, count = pieces(npoin, p_begin, p_end); piece < count; ++piece) {
    const std::int64_t p0 = std::min(p_end, p_begin + piece * kMeshPiece), np = std::min(kMeshPiece, p_end - p0);
    read([&] {
      if (np == 0) return;
      mesh.ipobo(p0, np, rows.data());
      mesh.coordinates(false, p0, np, x.data());
      mesh.coordinates(true, p0, np, y.data());
    });
    h5::write_range<std::int32_t>(ipobo, p0, np, rows.data(), xfer, f);
    Handle fspace(check(H5Dget_space(points), "H5Dget_space", f));
    const hsize_t start[2] = {static_cast<hsize_t>(p0), 0}, cnt[2] = {static_cast<hsize_t>(np), 3};
    Handle mspace(check(H5Screate_simple(2, cnt, nullptr), "H5Screate_simple", f));
    if (np > 0) {
      check_status(H5Sselect_hyperslab(fspace, H5S_SELECT_SET, start, nullptr, cnt, nullptr), "H5Sselect_hyperslab", f);
    } else {  // an empty share's part in a collective transfer
      H5Sselect_none(fspace);
      H5Sselect_none(mspace);
    }
    xyz.assign(static_cast<std::size_t>(np * 3), 0.0);
    for (std::int64_t i = 0; i < np; ++i) {
      xyz[static_cast<std::size_t>(3 * i)] = x[static_cast<std::size_t>(i)];
      xyz[static_cast<std::size_t>(3 * i + 1)] = y[static_cast<std::size_t>(i)];
    }
    write_points(mspace, fspace, xfer, xyz);
  }
}

void Output::write_mesh(const Mesh* mesh) {
  Impl& m = *impl_;
  if (!m.options.mesh_link.empty()) return;  // linked to another file's mesh
  collective(m.comm, [&] {
    if (m.rank != 0) return;
    if (!mesh) throw UsageError("rank 0 must give the mesh");
    mesh->check_sizes();
  });
  collective(m.comm, [&] {
    const serafin::Header& h = m.header;
    if (m.rank != 0) {  // compressed: every rank in each collective transfer, with nothing
      if (m.mesh_filters().on()) m.write_mesh(MeshPieces{h.nelem, h.npoin, h.ndp, h.nplan(), {}, {}, {}}, -1, 1);
      return;
    }
    MeshPieces p{mesh->nelem, mesh->npoin, mesh->ndp, mesh->nplan, {}, {}, {}};
    p.ikle = [&](std::int64_t first, std::int64_t n, std::int32_t* out) {
      std::copy_n(mesh->ikle.begin() + first * mesh->ndp, n * mesh->ndp, out);
    };
    p.ipobo = [&](std::int64_t first, std::int64_t n, std::int32_t* out) { std::copy_n(mesh->ipobo.begin() + first, n, out); };
    p.coordinates = [&](bool y, std::int64_t first, std::int64_t n, double* out) {
      std::copy_n((y ? mesh->y : mesh->x).begin() + first, n, out);
    };
    m.write_mesh(p);
  });
}

void Output::write_mesh(const serafin::Reader* geometry) {
  Impl& m = *impl_;
  if (!m.options.mesh_link.empty()) return;
  int size = 1;
  if (m.comm != MPI_COMM_NULL) MPI_Comm_size(m.comm, &size);
  collective(m.comm, [&] {
    if (!geometry) throw UsageError("every writer must give the geometry");
    const serafin::Header& h = m.header;
    serafin::check_mesh_source(h, *geometry);
    MeshPieces p{h.nelem, h.npoin, h.ndp, h.nplan(), {}, {}, {}};
    p.ikle = [&](std::int64_t first, std::int64_t n, std::int32_t* out) { serafin::read_mesh_rows(h, *geometry, first, n, out); };
    p.ipobo = [&](std::int64_t first, std::int64_t n, std::int32_t* out) { serafin::read_mesh_ipobo(h, *geometry, first, n, out); };
    p.coordinates = [&](bool y, std::int64_t first, std::int64_t n, double* out) {
      serafin::read_mesh_coordinates(h, *geometry, y, first, n, out);
    };
    m.write_mesh(p, m.rank, size);  // a share each
  });
}

void Output::write_frame(double time, std::int64_t first, std::int64_t count, const void* values) {
  Impl& m = *impl_;
  collective(m.comm, [&] {
    if (count < 0 || first < 0 || first + count > m.header.npoin) throw UsageError("frame block out of range");
  });
  collective(m.comm, [&] {
    m.extend(frames_, time);
    const auto bytes = static_cast<std::size_t>(count * real_size(m.header.precision));
    std::vector<unsigned char> rounded;  // a lossy bound's values
    for (std::size_t v = 0; v < m.data.size(); ++v) {
      const unsigned char* from = static_cast<const unsigned char*>(values) + v * bytes;
      if (m.options.compress.lossy()) {
        if (v == 0 && frames_ == 0 && m.header.nplan() > 1) {  // the exact Z
          m.z_first = first;
          m.z_block.resize(static_cast<std::size_t>(count));
          for (std::int64_t i = 0; i < count; ++i)
            m.z_block[static_cast<std::size_t>(i)] = m.header.precision == Precision::Double
                                                         ? reinterpret_cast<const double*>(from)[i]
                                                         : reinterpret_cast<const float*>(from)[i];
        }
        rounded.assign(from, from + bytes);
        m.round(rounded.data(), count);
        from = rounded.data();
      }
      auto [fspace, mspace] = h5::range_spaces(m.data[v], frames_ * m.header.npoin + first, count, m.name);
      check_status(H5Dwrite(m.data[v], real_type(m.header.precision), mspace, fspace, m.xfer_collective, from),
                   "cannot write a variable in", m.name);
    }
  });
  ++frames_;
  if (settles()) settle_frame();
}

std::vector<std::int64_t> Output::add_frame(double time) {
  Impl& m = *impl_;
  std::vector<std::int64_t> at;
  collective(m.comm, [&] {
    m.extend(frames_, time);
    for (const auto& d : m.data)
      for (std::int64_t c = 0; c < frame_chunks(); ++c) at.push_back(h5::chunk_offset(d, frames_ * m.header.npoin + c * m.chunk, m.name));
  });
  ++frames_;
  return at;
}

std::int64_t Output::chunk_values() const { return impl_->chunk; }
std::int64_t Output::frame_chunks() const { return impl_->header.npoin / impl_->chunk; }

bool Output::settles() const {
  const Impl& m = *impl_;
  return m.options.flush_frames || (frames_ == 1 && m.header.nplan() > 1 && m.header.nvar() > 0 && m.options.mesh_link.empty());
}

void Output::settle_frame() {
  Impl& m = *impl_;
  collective(m.comm, [&] {
    if (m.comm != MPI_COMM_NULL) MPI_Barrier(m.comm);  // every rank's values are in the file
    if (frames_ == 1 && m.header.nplan() > 1 && m.header.nvar() > 0 && m.options.mesh_link.empty()) m.elevation_to_z();
    if (!m.options.flush_frames) return;
    h5::reserve_for_flush(m.file, m.comm, m.path, m.name);
    check_status(H5Fflush(m.file, H5F_SCOPE_GLOBAL), "cannot flush", m.name);
  });
}

void Output::close() {
  if (!impl_->file.valid()) return;
  const double t0 = now();
  Impl& m = *impl_;
  collective(m.comm, [&] {
    m.write_inputs();
    m.release_objects();
    // The room for the metadata made sure of first, then flushed: a full disk leaves the
    // file open for the destructor to abandon (a failed flush or H5Fclose would leave HDF5
    // with a file it can never close).
    h5::reserve_for_flush(m.file, m.comm, m.path, m.name);
    check_status(H5Fflush(m.file, H5F_SCOPE_GLOBAL), "cannot write", m.name);
    check_status(H5Fclose(m.file.release()), "cannot close", m.name);
  });
  close_seconds_ = now() - t0;
  collective(m.comm, [&] {
    if (m.rank != 0 || !m.options.xdmf) return;
    const std::string target = m.options.final_path.empty() ? m.path : m.options.final_path;
    std::vector<XdmfFrame> frames;
    for (std::int64_t k = 0; k < frames_; ++k) frames.push_back({base_name(target), k, frames_, m.times[static_cast<std::size_t>(k)]});
    write_xdmf(xdmf_path(target), m.header, frames);
  });
}

// ---------------------------------------------------------------------------------------

// Every read of an Input holds HDF5's lock (h5::lock).
static std::unique_lock<std::recursive_mutex> hdf5_lock() { return h5::lock(); }

struct Input::Impl {
  std::string path;
  std::int64_t bytes = 0;
  Handle file, root, xfer;
  serafin::Header header;
  std::vector<std::string> names;
  std::vector<Handle> data;
  Handle steps_values;
  std::int64_t frames = 0;
  std::string version;
  int format_version = 0;  // of /anabranch
};

Input::Input(const std::string& path, MPI_Comm comm) : impl_(std::make_unique<Impl>()) {
  const auto lock = hdf5_lock();
  h5::quiet();
  Impl& m = *impl_;
  m.path = path;
  const std::string& f = path;
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) throw IoError::from_errno("cannot open", path);
  m.bytes = static_cast<std::int64_t>(st.st_size);
  if (!is_hdf5(path)) throw FormatError(path, "HDF5 signature", 0, "not an HDF5 file");
  Handle fapl(check(H5Pcreate(H5P_FILE_ACCESS), "H5Pcreate", f));
  if (comm != MPI_COMM_NULL) {
    check_status(H5Pset_fapl_mpio(fapl, comm, MPI_INFO_NULL), "H5Pset_fapl_mpio", f);
    check_status(H5Pset_all_coll_metadata_ops(fapl, true), "H5Pset_all_coll_metadata_ops", f);
  }
  m.file = Handle(check(H5Fopen(f.c_str(), H5F_ACC_RDONLY, fapl), "cannot open", f));
  m.xfer = Handle(check(H5Pcreate(H5P_DATASET_XFER), "H5Pcreate", f));
  if (!h5::exists(m.file, kRoot)) throw FormatError(f + ": no /VTKHDF group: not a VTKHDF file");
  if (!h5::exists(m.file, kMeta))
    throw FormatError(f + ": no /anabranch group: a VTKHDF file not written by anabranch (reading those is not supported)");
  m.root = Handle(check(H5Gopen2(m.file, kRoot, H5P_DEFAULT), "cannot open /VTKHDF in", f));
  {
    const auto v = h5::read_attribute<std::int64_t>(m.root, "Version", f);
    for (std::size_t i = 0; i < v.size(); ++i) m.version += (i ? "." : "") + std::to_string(v[i]);
  }
  Handle meta(check(H5Gopen2(m.file, kMeta, H5P_DEFAULT), "cannot open /anabranch in", f));
  const auto fv = h5::read_attribute<std::int32_t>(meta, "format_version", f);
  if (fv.empty() || fv[0] > kFormatVersion)
    throw FormatError(f + ": /anabranch format_version " + (fv.empty() ? std::string("?") : std::to_string(fv[0])) +
                      " is newer than this anabranch reads (" + std::to_string(kFormatVersion) + ")");
  m.format_version = fv[0];
  serafin::Header& h = m.header;
  const auto title = h5::read_attribute<std::uint8_t>(meta, "title", f);
  h.title.assign(title.begin(), title.end());
  const int nvar = h5::read_attribute<std::int32_t>(meta, "nbv1", f).at(0);
  if (nvar < 0 || nvar > 100000) throw FormatError(f + ": /anabranch nbv1 " + std::to_string(nvar) + " is impossible");
  if (nvar > 0) {
    const auto vn = h5::read_attribute<std::uint8_t>(meta, "variable_names", f);
    const auto vu = h5::read_attribute<std::uint8_t>(meta, "variable_units", f);
    if (vn.size() != static_cast<std::size_t>(nvar) * 16 || vu.size() != vn.size())
      throw FormatError(f + ": /anabranch variable_names or variable_units do not hold nbv1 x 16 bytes");
    for (int v = 0; v < nvar; ++v)
      h.variables.push_back({std::string(vn.begin() + v * 16, vn.begin() + v * 16 + 16),
                             std::string(vu.begin() + v * 16, vu.begin() + v * 16 + 16)});
  }
  h.nbv2 = h5::read_attribute<std::int32_t>(meta, "nbv2", f).at(0);
  const auto ip = h5::read_attribute<std::int32_t>(meta, "iparam", f);
  if (ip.size() != 10) throw FormatError(f + ": /anabranch iparam does not hold 10 integers");
  std::copy(ip.begin(), ip.end(), h.iparam.begin());
  if (h5::has_attribute(meta, "date")) {
    const auto d = h5::read_attribute<std::int32_t>(meta, "date", f);
    if (d.size() != 6) throw FormatError(f + ": /anabranch date does not hold 6 integers");
    h.date.emplace();
    std::copy(d.begin(), d.end(), h.date->begin());
  }
  h.nelem = h5::read_attribute<std::int64_t>(meta, "nelem", f).at(0);
  h.npoin = h5::read_attribute<std::int64_t>(meta, "npoin", f).at(0);
  h.ndp = h5::read_attribute<std::int32_t>(meta, "ndp", f).at(0);
  h.sizes4 = h5::read_attribute<std::int32_t>(meta, "sizes4", f).at(0);
  h.precision = h5::read_string_attribute(meta, "precision", f) == "double" ? Precision::Double : Precision::Single;
  h.byte_order = h5::read_string_attribute(meta, "serafin_byte_order", f) == "little" ? ByteOrder::Little : ByteOrder::Big;
  if (h.npoin < 0 || h.nelem < 0 || h.ndp < 0) throw FormatError(f + ": /anabranch holds negative sizes");
  const std::string joined = h5::read_string_attribute(meta, "point_data", f);
  for (std::size_t at = 0; nvar > 0 && at <= joined.size();) {
    const std::size_t end = std::min(joined.find('\n', at), joined.size());
    m.names.push_back(joined.substr(at, end - at));
    at = end + 1;
  }
  if (static_cast<int>(m.names.size()) != nvar) throw FormatError(f + ": /anabranch point_data does not name nbv1 datasets");
  // Every dataset must hold the NSteps frames the file announces: one cut short is damage,
  // never a shorter result.
  Handle steps(check(H5Gopen2(m.root, "Steps", H5P_DEFAULT), "no /VTKHDF/Steps in", f));
  const std::int64_t frames = h5::read_attribute<std::int64_t>(steps, "NSteps", f).at(0);
  if (frames < 0) throw FormatError(f + ": /VTKHDF/Steps NSteps is negative (" + std::to_string(frames) + ")");
  auto require = [&](hid_t d, const std::string& name, std::int64_t needed, const std::string& what) {
    const std::int64_t have = h5::dataset_length(d);
    if (have < needed)
      throw FormatError(f + ": " + name + " holds " + std::to_string(have) + " values where " + what + " need " +
                        std::to_string(needed) + " (a damaged or truncated file)");
  };
  m.steps_values = Handle(check(H5Dopen2(steps, "Values", H5P_DEFAULT), "no /VTKHDF/Steps/Values in", f));
  require(m.steps_values, "/VTKHDF/Steps/Values", frames, std::to_string(frames) + " steps");
  for (const auto& n : m.names) {
    const std::string name = "/VTKHDF/PointData/" + n;
    m.data.push_back(Handle(check(H5Dopen2(m.root, ("PointData/" + n).c_str(), H5P_DEFAULT), "no " + name + " in", f)));
    h5::require_filters(m.data.back(), name, f);
    require(m.data.back(), name, frames * h.npoin, std::to_string(frames) + " steps of " + std::to_string(h.npoin) + " nodes");
  }
  m.frames = frames;
}

Input::~Input() = default;

const std::string& Input::name() const { return impl_->path; }
std::int64_t Input::file_bytes() const { return impl_->bytes; }
const serafin::Header& Input::header() const { return impl_->header; }
std::int64_t Input::frame_count() const { return impl_->frames; }
std::string Input::vtkhdf_version() const { return impl_->version; }
std::vector<std::string> Input::point_data_names() const { return impl_->names; }

std::vector<double> Input::times() const {
  const auto lock = hdf5_lock();
  std::vector<double> t(static_cast<std::size_t>(impl_->frames));
  h5::read_range<double>(impl_->steps_values, 0, impl_->frames, t.data(), impl_->xfer, impl_->path);
  return t;
}

double Input::read_time(std::int64_t frame) const {
  const auto lock = hdf5_lock();
  if (frame < 0 || frame >= impl_->frames) throw UsageError("frame " + std::to_string(frame) + " out of range in " + impl_->path);
  double t = 0;
  h5::read_range<double>(impl_->steps_values, frame, 1, &t, impl_->xfer, impl_->path);
  return t;
}

std::map<std::string, std::string> Input::provenance() const {
  const auto lock = hdf5_lock();
  std::map<std::string, std::string> out;
  if (!h5::exists(impl_->file, "/anabranch/provenance")) return out;
  Handle g(check(H5Gopen2(impl_->file, "/anabranch/provenance", H5P_DEFAULT), "cannot open provenance in", impl_->path));
  for (const auto& n : h5::attribute_names(g)) out[n] = h5::read_string_attribute(g, n, impl_->path);
  return out;
}

std::map<std::string, std::string> Input::compression() const {
  const auto lock = hdf5_lock();
  std::map<std::string, std::string> out;
  const Impl& m = *impl_;
  for (std::size_t v = 0; v < m.data.size(); ++v) {
    Handle dcpl(H5Dget_create_plist(m.data[v]));
    const int n = dcpl.valid() ? H5Pget_nfilters(dcpl) : 0;
    if (n <= 0) continue;
    std::string text;
    for (int i = 0; i < n; ++i) {
      unsigned flags = 0, config = 0;
      std::size_t nvalues = 0;
      char name[64] = {0};
      const H5Z_filter_t id = H5Pget_filter2(dcpl, static_cast<unsigned>(i), &flags, &nvalues, nullptr, sizeof name, name, &config);
      text += (i ? "+" : "") + std::string(id == H5Z_FILTER_DEFLATE   ? "deflate"
                                           : id == H5Z_FILTER_SHUFFLE ? "shuffle"
                                           : id == h5::kZstdFilter    ? "zstd"
                                                                      : "filter " + std::to_string(id));
    }
    if (h5::has_attribute(m.data[v], "compression")) text += ", " + h5::read_string_attribute(m.data[v], "compression", m.path);
    const double stored = static_cast<double>(H5Dget_storage_size(m.data[v]));
    const double values = static_cast<double>(h5::dataset_length(m.data[v])) * (m.header.precision == Precision::Double ? 8 : 4);
    char ratio[96];
    std::snprintf(ratio, sizeof ratio, ", %.2fx (%.0f of %.0f bytes)", stored > 0 ? values / stored : 0.0, stored, values);
    out[m.names[v]] = text + ratio;
  }
  return out;
}

void Input::read_ikle(std::int64_t first, std::int64_t count, std::int32_t* out) const {
  const auto lock = hdf5_lock();
  const Impl& m = *impl_;
  const std::string& f = m.path;
  const serafin::Header& h = m.header;
  if (first < 0 || count < 0 || first + count > h.nelem) throw UsageError("elements out of range in " + f);
  Handle conn(check(H5Dopen2(m.root, "Connectivity", H5P_DEFAULT), "no /VTKHDF/Connectivity in", f));
  h5::require_filters(conn, "/VTKHDF/Connectivity", f);
  const std::int64_t ndp = h.ndp;
  std::vector<std::int64_t> c(static_cast<std::size_t>(count * ndp));
  h5::read_range<std::int64_t>(conn, first * ndp, count * ndp, c.data(), m.xfer, f);
  const int* order = m.format_version >= 2 ? vtu::node_order(h.ndp, h.nplan()) : vtu::node_order(0, 1);
  for (std::size_t i = 0; i < c.size(); ++i) {
    if (c[i] < 0 || c[i] >= h.npoin)
      throw FormatError(f, "/VTKHDF/Connectivity", first * ndp + static_cast<std::int64_t>(i), "node " + std::to_string(c[i]) + " out of range");
    const std::size_t e = i / static_cast<std::size_t>(ndp);
    out[e * static_cast<std::size_t>(ndp) + static_cast<std::size_t>(order[i % static_cast<std::size_t>(ndp)])] = static_cast<std::int32_t>(c[i] + 1);
  }
}

void Input::read_ipobo(std::int64_t first, std::int64_t count, std::int32_t* out) const {
  const auto lock = hdf5_lock();
  const Impl& m = *impl_;
  if (first < 0 || count < 0 || first + count > m.header.npoin) throw UsageError("nodes out of range in " + m.path);
  Handle ipobo(check(H5Dopen2(m.file, "/anabranch/IPOBO", H5P_DEFAULT), "no /anabranch/IPOBO in", m.path));
  h5::read_range<std::int32_t>(ipobo, first, count, out, m.xfer, m.path);
}

void Input::read_coordinates(int column, std::int64_t first, std::int64_t count, double* out) const {
  const auto lock = hdf5_lock();
  const Impl& m = *impl_;
  const std::string& f = m.path;
  if (first < 0 || count < 0 || first + count > m.header.npoin) throw UsageError("nodes out of range in " + f);
  Handle pts(check(H5Dopen2(m.root, "Points", H5P_DEFAULT), "no /VTKHDF/Points in", f));
  h5::require_filters(pts, "/VTKHDF/Points", f);
  {
    Handle space(check(H5Dget_space(pts), "H5Dget_space", f));
    hsize_t dims[2] = {0, 0};
    if (H5Sget_simple_extent_ndims(space) != 2 || H5Sget_simple_extent_dims(space, dims, nullptr) != 2 ||
        dims[0] != static_cast<hsize_t>(m.header.npoin) || dims[1] != 3)
      throw FormatError(f + ": /VTKHDF/Points is not NPOIN x 3");
  }
  auto [fspace, mspace] = h5::range_spaces(pts, first, count, f, column);
  check_status(H5Dread(pts, H5T_NATIVE_DOUBLE, mspace, fspace, m.xfer, out), "cannot read Points in", f);
}

Mesh Input::read_mesh() const {
  const auto lock = hdf5_lock();
  const serafin::Header& h = impl_->header;
  Mesh mesh;
  mesh.nelem = h.nelem;
  mesh.npoin = h.npoin;
  mesh.ndp = h.ndp;
  mesh.nplan = h.nplan();
  mesh.ikle.resize(static_cast<std::size_t>(h.nelem * h.ndp));
  read_ikle(0, h.nelem, mesh.ikle.data());
  mesh.ipobo.resize(static_cast<std::size_t>(h.npoin));
  read_ipobo(0, h.npoin, mesh.ipobo.data());
  mesh.x.resize(static_cast<std::size_t>(h.npoin));
  mesh.y.resize(static_cast<std::size_t>(h.npoin));
  read_coordinates(0, 0, h.npoin, mesh.x.data());
  read_coordinates(1, 0, h.npoin, mesh.y.data());
  return mesh;
}

template <class T>
void Input::read_values(std::int64_t frame, int var, std::int64_t first, std::int64_t count, T* out) const {
  const auto lock = hdf5_lock();
  const Impl& m = *impl_;
  if (frame < 0 || frame >= m.frames || var < 0 || var >= m.header.nvar())
    throw UsageError("frame " + std::to_string(frame) + " variable " + std::to_string(var) + " out of range in " + m.path);
  if (first < 0 || count < 0 || first + count > m.header.npoin) throw UsageError("nodes out of range in " + m.path);
  h5::read_range<T>(m.data[static_cast<std::size_t>(var)], frame * m.header.npoin + first, count, out, m.xfer, m.path);
}

template <class T>
void Input::read_nodes(std::int64_t frame, int var, const std::int64_t* nodes, std::int64_t n, T* out) const {
  const auto lock = hdf5_lock();
  const Impl& m = *impl_;
  if (frame < 0 || frame >= m.frames || var < 0 || var >= m.header.nvar())
    throw UsageError("frame " + std::to_string(frame) + " variable " + std::to_string(var) + " out of range in " + m.path);
  std::vector<std::int64_t> index(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) {
    if (nodes[i] < 0 || nodes[i] >= m.header.npoin || (i > 0 && nodes[i] <= nodes[i - 1]))
      throw UsageError("node list not increasing within 0..NPOIN-1 (at " + std::to_string(i) + ") reading " + m.path);
    index[static_cast<std::size_t>(i)] = frame * m.header.npoin + nodes[i];
  }
  h5::read_elements<T>(m.data[static_cast<std::size_t>(var)], index.data(), n, out, m.xfer, m.path);
}

std::int64_t Input::chunk_values() const {
  const auto lock = hdf5_lock();
  const Impl& m = *impl_;
  std::int64_t chunk = 0;
  for (const auto& d : m.data) {
    Handle dcpl(H5Dget_create_plist(d));
    hsize_t dim = 0;
    if (!dcpl.valid() || H5Pget_layout(dcpl) != H5D_CHUNKED || H5Pget_nfilters(dcpl) != 0 || H5Pget_chunk(dcpl, 1, &dim) != 1) return 0;
    if (dim == 0 || m.header.npoin % static_cast<std::int64_t>(dim) != 0 || (chunk != 0 && chunk != static_cast<std::int64_t>(dim))) return 0;
    chunk = static_cast<std::int64_t>(dim);
  }
  return chunk;
}

std::vector<std::int64_t> Input::in_place(std::int64_t frame, int var) const {
  const std::int64_t chunk = chunk_values();
  const auto lock = hdf5_lock();
  const Impl& m = *impl_;
  if (chunk == 0 || frame < 0 || frame >= m.frames || var < 0 || var >= m.header.nvar()) return {};
  const std::int64_t rs = m.header.precision == Precision::Double ? 8 : 4;
  std::vector<std::int64_t> out;
  for (std::int64_t at = frame * m.header.npoin; at < (frame + 1) * m.header.npoin; at += chunk) {
    const hsize_t coord = static_cast<hsize_t>(at);
    unsigned filters = 0;
    haddr_t addr = HADDR_UNDEF;
    hsize_t bytes = 0;
    if (H5Dget_chunk_info_by_coord(m.data[static_cast<std::size_t>(var)], &coord, &filters, &addr, &bytes) < 0 || addr == HADDR_UNDEF ||
        filters != 0 || static_cast<std::int64_t>(bytes) != chunk * rs) {
      H5Eclear2(H5E_DEFAULT);
      return {};
    }
    out.push_back(static_cast<std::int64_t>(addr));
  }
  return out;
}

template void Input::read_values<float>(std::int64_t, int, std::int64_t, std::int64_t, float*) const;
template void Input::read_values<double>(std::int64_t, int, std::int64_t, std::int64_t, double*) const;
template void Input::read_nodes<float>(std::int64_t, int, const std::int64_t*, std::int64_t, float*) const;
template void Input::read_nodes<double>(std::int64_t, int, const std::int64_t*, std::int64_t, double*) const;

LoneOutput::LoneOutput(const std::string& path, const serafin::Header& header, const std::map<std::string, std::string>& provenance,
                       const Compression& compress)
    : path_(path), temp_(path + ".tmp." + std::to_string(::getpid())), sidecar_(xdmf_path(path)) {
  refuse_open_input(path);
  register_temporary(temp_);
  OutputOptions options;
  options.final_path = path;
  options.provenance = provenance;
  options.compress = compress;
  const CreatingTemporary creating;
  try {
    out_ = std::make_unique<Output>(MPI_COMM_NULL, temp_, header, MPI_INFO_NULL, options);
  } catch (...) {
    ::unlink(temp_.c_str());
    release_temporary(temp_);
    throw;
  }
}

LoneOutput::~LoneOutput() {
  if (committed_) return;
  out_.reset();
  ::unlink(temp_.c_str());
  if (closing_) ::unlink(sidecar_.c_str());
  release_temporary(temp_);
  release_temporary(sidecar_);
}

void LoneOutput::commit() {
  // The sidecar is written by close() under its final name: a signal removes it until the
  // file it describes has its own.
  register_temporary(sidecar_);
  closing_ = true;
  out_->close();
  out_.reset();
  const CreatingTemporary whole;  // a signal's sweep waits until the file and its sidecar are both kept
  if (std::rename(temp_.c_str(), path_.c_str()) != 0) throw IoError::from_errno("cannot rename " + temp_ + " to", path_);
  committed_ = true;
  release_temporary(temp_);
  release_temporary(sidecar_);
}

namespace {

// The SERAFIN bytes of an anabranch HDF5 file: the records before the mesh made once from
// the header; a mesh or frame record's length markers and values made on demand, for the
// whole elements or nodes the bytes asked for cover.
class SerafinView final : public ByteSource {
 public:
  explicit SerafinView(const std::string& path) : held_(path), in_(path), name_(path) {
    const serafin::Header& h = in_.header();
    MemorySink sink;
    serafin::write_header_records(sink, h);
    prefix_ = std::move(sink.bytes);
    layout_ = serafin::Layout::of(h);
    rs_ = layout_.real_bytes;
    const std::int64_t ikle = static_cast<std::int64_t>(prefix_.size());
    records_ = {{ikle, h.nelem * h.ndp * 4, kIkle},
                {ikle + 8 + h.nelem * h.ndp * 4, h.npoin * 4, kIpobo},
                {ikle + 16 + h.nelem * h.ndp * 4 + h.npoin * 4, h.npoin * rs_, kX},
                {ikle + 24 + h.nelem * h.ndp * 4 + h.npoin * 4 + h.npoin * rs_, h.npoin * rs_, kY}};
    size_ = layout_.frame_offset(in_.frame_count());
  }
  std::int64_t size() const override { return size_; }
  const std::string& name() const override { return name_; }

  void read_at(std::int64_t offset, void* dst, std::size_t n) const override {
    if (offset < 0 || offset + static_cast<std::int64_t>(n) > size_)
      throw IoError("cannot read " + std::to_string(n) + " bytes at byte " + std::to_string(offset) + " of the SERAFIN view of " + name_ +
                    " (" + std::to_string(size_) + " bytes)");
    const auto lock = hdf5_lock();
    auto* out = static_cast<unsigned char*>(dst);
    while (n > 0) {
      std::size_t done = 0;
      if (offset < static_cast<std::int64_t>(prefix_.size())) {
        done = std::min(n, prefix_.size() - static_cast<std::size_t>(offset));
        std::memcpy(out, prefix_.data() + offset, done);
      } else {
        const Record r = record_at(offset);
        const std::int64_t rel = offset - r.at;
        if (rel < 4 || rel >= 4 + r.bytes) {  // a length marker
          unsigned char marker[4];
          store<std::int32_t>(marker, static_cast<std::int32_t>(r.bytes), in_.header().byte_order);
          const std::int64_t m = rel < 4 ? rel : rel - 4 - r.bytes;
          done = std::min<std::size_t>(n, static_cast<std::size_t>(4 - m));
          std::memcpy(out, marker + m, done);
        } else {
          done = std::min<std::size_t>(n, static_cast<std::size_t>(4 + r.bytes - rel));
          values(r, rel - 4, out, done);
        }
      }
      out += done;
      offset += static_cast<std::int64_t>(done);
      n -= done;
    }
  }

 private:
  enum Kind { kIkle, kIpobo, kX, kY, kTime, kValues };
  struct Record {
    std::int64_t at = 0, bytes = 0;  // where its leading marker is; its values' bytes
    Kind kind = kIkle;
    std::int64_t frame = 0;
    int var = 0;
  };
  Record record_at(std::int64_t offset) const {
    if (offset < layout_.header_bytes) {
      for (int i = 3; i >= 0; --i)
        if (offset >= records_[static_cast<std::size_t>(i)].at) return records_[static_cast<std::size_t>(i)];
    }
    const std::int64_t frame = (offset - layout_.header_bytes) / layout_.frame_bytes;
    const std::int64_t at = layout_.frame_offset(frame), rel = offset - at;
    if (rel < 8 + rs_) return {at, rs_, kTime, frame, 0};
    const std::int64_t each = 8 + layout_.npoin * rs_;
    const int var = static_cast<int>((rel - 8 - rs_) / each);
    return {at + 8 + rs_ + var * each, layout_.npoin * rs_, kValues, frame, var};
  }
  // n bytes from byte `from` of record r's values.
  void values(const Record& r, std::int64_t from, unsigned char* out, std::size_t n) const {
    const serafin::Header& h = in_.header();
    const int size = r.kind == kIkle || r.kind == kIpobo ? 4 : rs_;
    const std::int64_t first = from / size, last = (from + static_cast<std::int64_t>(n) - 1) / size;
    const std::int64_t count = last - first + 1;
    scratch_.resize(static_cast<std::size_t>(count * size));
    if (r.kind == kIkle || r.kind == kIpobo) {
      std::vector<std::int32_t> v;
      if (r.kind == kIkle) {  // whole elements
        const std::int64_t e0 = first / h.ndp, e1 = last / h.ndp;
        v.resize(static_cast<std::size_t>((e1 - e0 + 1) * h.ndp));
        in_.read_ikle(e0, e1 - e0 + 1, v.data());
        v.erase(v.begin(), v.begin() + (first - e0 * h.ndp));
        v.resize(static_cast<std::size_t>(count));
      } else {
        v.resize(static_cast<std::size_t>(count));
        in_.read_ipobo(first, count, v.data());
      }
      for (std::int64_t i = 0; i < count; ++i) store<std::int32_t>(scratch_.data() + 4 * i, v[static_cast<std::size_t>(i)], h.byte_order);
    } else {
      std::vector<double> v(static_cast<std::size_t>(count));
      if (r.kind == kX || r.kind == kY)
        in_.read_coordinates(r.kind == kX ? 0 : 1, first, count, v.data());
      else if (r.kind == kTime)
        v[0] = in_.read_time(r.frame);
      else
        in_.read_values<double>(r.frame, r.var, first, count, v.data());
      serafin::encode_reals(v.data(), count, h.precision, h.byte_order, scratch_.data());
    }
    std::memcpy(out, scratch_.data() + (from - first * size), n);
  }

  FileSource held_;  // holds the file as an input
  Input in_;
  std::string name_;
  std::vector<unsigned char> prefix_;
  serafin::Layout layout_;
  int rs_ = 4;
  std::vector<Record> records_;  // IKLE, IPOBO, X, Y
  std::int64_t size_ = 0;
  mutable std::vector<unsigned char> scratch_;
};

}  // namespace

std::shared_ptr<const ByteSource> serafin_view(const std::string& path) { return std::make_shared<SerafinView>(path); }

std::shared_ptr<const ByteSource> serafin_source(const std::string& path) {
  if (is_hdf5(path)) return serafin_view(path);
  return std::make_shared<FileSource>(path);
}

}  // namespace anabranch::pio::vtkhdf
