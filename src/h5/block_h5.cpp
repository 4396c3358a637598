// The HDF5 block file. Specification: docs/formats/blocks-hdf5.md.
#include "h5/block_h5.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <sstream>

#include "core/error.hpp"
#include "core/io.hpp"
#include "h5/h5.hpp"
#include "h5/xdmf.hpp"
#include "parallel/mpi_util.hpp"
#include "h5/vtkhdf.hpp"

namespace anabranch::pio::block_h5 {

using h5::check;
using h5::check_status;
using h5::Handle;

namespace {

constexpr const char* kFormat = "anabranch-blocks";

hid_t file_real(int real_bytes) { return real_bytes == 8 ? H5T_IEEE_F64LE : H5T_IEEE_F32LE; }

std::string frame_name(std::int64_t f) {
  char b[32];
  std::snprintf(b, sizeof b, "%06lld", static_cast<long long>(f));
  return b;
}

std::string joined(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : "\n") + x;
  return s;
}

// A contiguous dataset of n values whose space is allocated at creation and never filled:
// its bytes are written through MPI-IO at H5Dget_offset.
std::int64_t contiguous(hid_t loc, const std::string& name, hid_t type, std::int64_t n, const std::string& f) {
  Handle dcpl(check(H5Pcreate(H5P_DATASET_CREATE), "H5Pcreate", f));
  check_status(H5Pset_layout(dcpl, H5D_CONTIGUOUS), "H5Pset_layout", f);
  check_status(H5Pset_alloc_time(dcpl, H5D_ALLOC_TIME_EARLY), "H5Pset_alloc_time", f);
  check_status(H5Pset_fill_time(dcpl, H5D_FILL_TIME_NEVER), "H5Pset_fill_time", f);
  const hsize_t dims[1] = {static_cast<hsize_t>(n)};
  Handle space(check(H5Screate_simple(1, dims, nullptr), "H5Screate_simple", f));
  Handle d(check(H5Dcreate2(loc, name.c_str(), type, space, H5P_DEFAULT, dcpl, H5P_DEFAULT), "cannot create dataset " + name + " in", f));
  const haddr_t at = H5Dget_offset(d);
  if (at == HADDR_UNDEF) throw IoError("cannot locate dataset " + name + " in " + f + " (no space allocated)");
  return static_cast<std::int64_t>(at);
}

// "xyz": the points interleaved (total x 3), a virtual dataset over "x", "y" and "z" (its
// columns), for XDMF's XYZ geometry: ParaView's XDMF 3 readers see no points in a geometry
// of three arrays (X_Y_Z). Metadata only: no value is stored twice.
void interleaved_view(hid_t grid, hid_t type, std::int64_t total, const std::string& f) {
  const hsize_t dims[2] = {static_cast<hsize_t>(total), 3}, n[1] = {static_cast<hsize_t>(total)};
  Handle view(check(H5Screate_simple(2, dims, nullptr), "H5Screate_simple", f));
  Handle source(check(H5Screate_simple(1, n, nullptr), "H5Screate_simple", f));
  Handle dcpl(check(H5Pcreate(H5P_DATASET_CREATE), "H5Pcreate", f));
  const char* columns[3] = {"x", "y", "z"};
  for (hsize_t c = 0; c < 3; ++c) {
    const hsize_t start[2] = {0, c}, count[2] = {static_cast<hsize_t>(total), 1};
    check_status(H5Sselect_hyperslab(view, H5S_SELECT_SET, start, nullptr, count, nullptr), "H5Sselect_hyperslab", f);
    check_status(H5Pset_virtual(dcpl, view, ".", (std::string("/grid/") + columns[c]).c_str(), source), "H5Pset_virtual", f);
  }
  check_status(H5Sselect_none(view), "H5Sselect_none", f);
  Handle d(check(H5Dcreate2(grid, "xyz", type, view, H5P_DEFAULT, dcpl, H5P_DEFAULT), "cannot create dataset /grid/xyz in", f));
}

// Writes a small dataset whole from rank 0 (the others select nothing), collectively.
void write_small(hid_t d, hid_t mem_type, const void* data, bool root, hid_t xfer, const std::string& f) {
  Handle fs(check(H5Dget_space(d), "H5Dget_space", f));
  Handle ms(check(H5Scopy(fs), "H5Scopy", f));
  if (!root) {
    H5Sselect_none(fs);
    H5Sselect_none(ms);
  }
  static const double dummy = 0;
  check_status(H5Dwrite(d, mem_type, ms, fs, xfer, root ? data : &dummy), "cannot write the block table of", f);
}

}  // namespace

struct File::Impl {
  MPI_Comm comm = MPI_COMM_NULL;
  int rank = 0;
  std::string path, name;
  std::int64_t total = 0;
  std::vector<std::string> variables, links;  // the variables; their datasets' names (h5::link_names)
  int real_bytes = 8;
  std::int64_t end = 0;  // where the datasets allocated so far end (compressed: as if they were not)
  Compression compress;
  Handle file, frames, xfer;
  // A compressed dataset of every point: chunked, filtered. A chunk a rank's share of the
  // points (at most kChunkValues): HDF5's collective filtered write compresses each chunk on
  // one rank, so that every rank has chunks to compress.
  std::int64_t chunked(hid_t loc, const std::string& v) const {
    int ranks = 1;
    MPI_Comm_size(comm, &ranks);
    const std::int64_t chunk = std::min<std::int64_t>(kChunkValues, std::max<std::int64_t>(1, (total + ranks - 1) / ranks));
    h5::create_dataset(loc, v, file_real(real_bytes), total, chunk, name, false, compress);
    return -1;
  }
  static constexpr std::int64_t kChunkValues = std::int64_t{1} << 20;
};

File::File(MPI_Comm comm, const std::string& path, const std::string& name, const std::vector<BlockShape>& blocks,
           const std::vector<std::string>& variables, int real_bytes, MPI_Info info, const std::map<std::string, std::string>& provenance,
           const Compression& compress)
    : impl_(std::make_unique<Impl>()) {
  Impl& m = *impl_;
  m.comm = comm;
  MPI_Comm_rank(comm, &m.rank);
  m.path = path;
  m.name = name;
  m.variables = variables;
  m.links = h5::link_names(variables);
  m.real_bytes = real_bytes;
  m.compress = compress;
  for (const auto& b : blocks) m.total += b.points();
  auto facts = vtkhdf::parallel_facts(comm);
  for (const auto& [k, v] : provenance) facts[k] = v;
  h5::quiet();
  const std::string& f = name;
  // HDF5 fails to close a file it could not finish under a file-size limit, then crashes at
  // exit closing it again (see check_room): the first MiB (the table, HDF5's metadata) is
  // asked for before HDF5 writes anything.
  collective(comm, [&] { check_size_limit(f, std::int64_t{1} << 20, "the block table"); });
  collective(comm, [&] {
    Handle fapl(check(H5Pcreate(H5P_FILE_ACCESS), "H5Pcreate", f));
    check_status(H5Pset_fapl_mpio(fapl, comm, info), "H5Pset_fapl_mpio", f);
    check_status(H5Pset_all_coll_metadata_ops(fapl, true), "H5Pset_all_coll_metadata_ops", f);
    check_status(H5Pset_coll_metadata_write(fapl, true), "H5Pset_coll_metadata_write", f);
    m.file = Handle(check(H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl), "cannot create", f));
  });
  collective(comm, [&] {
    m.xfer = Handle(check(H5Pcreate(H5P_DATASET_XFER), "H5Pcreate", f));
    check_status(H5Pset_dxpl_mpio(m.xfer, H5FD_MPIO_COLLECTIVE), "H5Pset_dxpl_mpio", f);
    Handle root(check(H5Gopen2(m.file, "/", H5P_DEFAULT), "cannot open / in", f));
    h5::write_attribute(root, "anabranch_format", std::string(kFormat), f);
    h5::write_attribute<std::int64_t>(root, "version", {1}, f);
    h5::write_attribute<std::int64_t>(root, "precision", {real_bytes}, f);
    h5::write_attribute(root, "variables", joined(variables), f);
    if (compress.on()) h5::write_attribute(root, "compression", compress.str(), f);
    const auto n = static_cast<std::int64_t>(blocks.size());
    Handle g(check(H5Gcreate2(m.file, "blocks", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), "cannot create /blocks in", f));
    std::vector<std::int64_t> ids, dims, offsets{0};
    for (const auto& b : blocks) {
      ids.push_back(b.id);
      dims.insert(dims.end(), b.dims.begin(), b.dims.end());
      offsets.push_back(offsets.back() + b.points());
    }
    Handle d_ids = h5::create_dataset(g, "ids", H5T_STD_I64LE, n, 0, f);
    write_small(d_ids, H5T_NATIVE_INT64, ids.data(), m.rank == 0, m.xfer, f);
    Handle d_dims = h5::create_dataset_2d(g, "dims", H5T_STD_I64LE, n, 3, f);
    write_small(d_dims, H5T_NATIVE_INT64, dims.data(), m.rank == 0, m.xfer, f);
    Handle d_off = h5::create_dataset(g, "offsets", H5T_STD_I64LE, n + 1, 0, f);
    write_small(d_off, H5T_NATIVE_INT64, offsets.data(), m.rank == 0, m.xfer, f);
    Handle meta(check(H5Gcreate2(m.file, "anabranch", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), "cannot create /anabranch in", f));
    Handle prov(check(H5Gcreate2(meta, "provenance", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), "cannot create provenance in", f));
    for (const auto& [k, v] : facts) h5::write_attribute(prov, k, v, f);
    m.frames = Handle(check(H5Gcreate2(m.file, "frames", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), "cannot create /frames in", f));
  });
}

File::~File() = default;

// HDF5 cannot close a file whose allocated end lies past the file-size limit (closing
// extends the file to it and fails; the file stays open inside HDF5, which then crashes
// closing it again in MPI_Finalize): space past the limit is refused before HDF5 allocates
// it, from the end of the last dataset (1 MiB kept for the metadata). HDF5 1.10's
// H5Fget_eoa fails under the MPI-IO driver.
void File::check_room(std::int64_t bytes, const std::string& what) {
  Impl& m = *impl_;
  collective(m.comm, [&] { check_size_limit(m.name, m.end + bytes + (std::int64_t{1} << 20), what); });
}

std::vector<std::int64_t> File::add_frame(std::int64_t frame, double time) {
  Impl& m = *impl_;
  std::vector<std::int64_t> out;
  check_room(static_cast<std::int64_t>(m.variables.size()) * m.total * m.real_bytes, "frame " + std::to_string(frame));
  collective(m.comm, [&] {
    Handle g(check(H5Gcreate2(m.frames, frame_name(frame).c_str(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), "cannot create a frame in", m.name));
    h5::write_attribute<double>(g, "time", {time}, m.name);
    for (const auto& v : m.links)
      if (m.compress.on()) m.chunked(g, v);
      else out.push_back(contiguous(g, v, file_real(m.real_bytes), m.total, m.name));
  });
  for (auto at : out) m.end = std::max(m.end, at + m.total * m.real_bytes);
  if (m.compress.on()) m.end += static_cast<std::int64_t>(m.variables.size()) * m.total * m.real_bytes;
  return out;
}

void File::abandon() {
  Impl& m = *impl_;
  if (!m.file.valid()) return;
  m.frames.reset();
  m.xfer.reset();
  h5::empty_for_close(m.file, true);
  if (H5Fclose(m.file.release()) < 0) H5Eclear2(H5E_DEFAULT);
  H5Eclear2(H5E_DEFAULT);
}

std::vector<std::int64_t> File::add_grid() {
  Impl& m = *impl_;
  std::vector<std::int64_t> out;
  check_room(3 * m.total * m.real_bytes, "the grid");
  collective(m.comm, [&] {
    Handle g(check(H5Gcreate2(m.file, "grid", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), "cannot create /grid in", m.name));
    for (const char* c : {"x", "y", "z"})
      if (m.compress.on()) m.chunked(g, c);
      else out.push_back(contiguous(g, c, file_real(m.real_bytes), m.total, m.name));
    interleaved_view(g, file_real(m.real_bytes), m.total, m.name);
  });
  for (auto at : out) m.end = std::max(m.end, at + m.total * m.real_bytes);
  if (m.compress.on()) m.end += 3 * m.total * m.real_bytes;
  return out;
}

void File::write(std::int64_t frame, int var, const std::vector<std::array<std::int64_t, 2>>& runs, const void* values) {
  Impl& m = *impl_;
  collective(m.comm, [&] {
    const std::string path = var < 0 ? std::string("/grid/") + "xyz"[-var - 1] : "/frames/" + frame_name(frame) + "/" + m.links.at(static_cast<std::size_t>(var));
    Handle d(check(H5Dopen2(m.file, path.c_str(), H5P_DEFAULT), "cannot open " + path + " in", m.name));
    Handle fs(check(H5Dget_space(d), "H5Dget_space", m.name));
    hsize_t count = 0;
    H5Sselect_none(fs);
    for (const auto& r : runs) {
      const hsize_t start = static_cast<hsize_t>(r[0]), n = static_cast<hsize_t>(r[1]);
      check_status(H5Sselect_hyperslab(fs, H5S_SELECT_OR, &start, nullptr, &n, nullptr), "H5Sselect_hyperslab", m.name);
      count += n;
    }
    const hsize_t room = std::max<hsize_t>(count, 1);
    Handle ms(check(H5Screate_simple(1, &room, nullptr), "H5Screate_simple", m.name));
    if (count == 0) H5Sselect_none(ms);
    static const double nothing = 0;
    check_status(H5Dwrite(d, file_real(m.real_bytes), ms, fs, m.xfer, count ? values : &nothing), "cannot write " + path + " of", m.name);
  });
}

void File::close() {
  Impl& m = *impl_;
  collective(m.comm, [&] {
    m.frames.reset();
    m.xfer.reset();
    h5::reserve_for_flush(m.file, m.comm, m.path, m.name);  // a full disk leaves the file to abandon
    check_status(H5Fclose(m.file.release()), "cannot close", m.name);
  });
}

bool is_block_h5(const std::string& path) {
  if (!vtkhdf::is_hdf5(path)) return false;
  h5::quiet();
  const hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  if (f < 0) return false;
  Handle file(f);
  return h5::has_attribute(file, "anabranch_format") && h5::read_string_attribute(file, "anabranch_format", path) == kFormat;
}

BlockFileInfo describe(const std::string& path) {
  h5::quiet();
  Handle file(check(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), "cannot open", path));
  BlockFileInfo i;
  i.path = path;
  i.format = "hdf5";
  i.file_bytes = file_size(path);
  if (!h5::has_attribute(file, "anabranch_format") || h5::read_string_attribute(file, "anabranch_format", path) != kFormat)
    throw FormatError(path + ": not an anabranch block file (no anabranch_format attribute \"" + kFormat + "\")");
  i.real_bytes = static_cast<int>(h5::read_attribute<std::int64_t>(file, "precision", path).at(0));
  {
    std::istringstream in(h5::read_string_attribute(file, "variables", path));
    for (std::string v; std::getline(in, v);) i.variables.push_back(v);
  }
  if (h5::has_attribute(file, "compression")) i.compression = h5::read_string_attribute(file, "compression", path);
  Handle ids_d(check(H5Dopen2(file, "/blocks/ids", H5P_DEFAULT), "cannot open /blocks/ids in", path));
  const std::int64_t n = h5::dataset_length(ids_d);
  std::vector<std::int64_t> ids(static_cast<std::size_t>(n)), dims(static_cast<std::size_t>(3 * n));
  if (n > 0) {
    check_status(H5Dread(ids_d, H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, ids.data()), "cannot read /blocks/ids of", path);
    Handle dims_d(check(H5Dopen2(file, "/blocks/dims", H5P_DEFAULT), "cannot open /blocks/dims in", path));
    check_status(H5Dread(dims_d, H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, dims.data()), "cannot read /blocks/dims of", path);
  }
  std::int64_t total = 0;
  for (std::int64_t b = 0; b < n; ++b) {
    BlockShape s;
    s.id = ids[static_cast<std::size_t>(b)];
    for (std::size_t a = 0; a < 3; ++a) s.dims[a] = dims[static_cast<std::size_t>(3 * b) + a];
    if (s.dims[0] < 1 || s.dims[1] < 1 || s.dims[2] < 1) throw FormatError(path + ": /blocks/dims row " + std::to_string(b + 1) + " is not three positive sizes");
    total += s.points();
    i.blocks.push_back(s);
  }
  auto locate = [&](hid_t loc, const std::string& name, const std::string& where) {
    Handle d(check(H5Dopen2(loc, name.c_str(), H5P_DEFAULT), "cannot open " + where + " in", path));
    if (h5::dataset_length(d) != total)
      throw FormatError(path + ": " + where + " holds " + std::to_string(h5::dataset_length(d)) + " values where the blocks have " + std::to_string(total));
    Handle type(check(H5Dget_type(d), "H5Dget_type", path));
    if (H5Tget_class(type) != H5T_FLOAT || static_cast<int>(H5Tget_size(type)) != i.real_bytes || H5Tget_order(type) != H5T_ORDER_LE)
      throw FormatError(path + ": " + where + " is not little-endian " + (i.real_bytes == 8 ? "float64" : "float32") + " as the file's precision says");
    if (!i.compression.empty()) {  // chunked: read through HDF5
      h5::require_filters(d, where, path);
      return std::int64_t{-1};
    }
    const haddr_t at = H5Dget_offset(d);
    if (at == HADDR_UNDEF)
      throw FormatError(path + ": " + where + " is not a contiguous dataset with its space allocated (chunked datasets are read in a file that says it is compressed)");
    return static_cast<std::int64_t>(at);
  };
  auto keep = [&](std::vector<std::int64_t>& to, std::int64_t at) {
    if (at >= 0) to.push_back(at);
  };
  if (h5::exists(file, "/grid")) {
    for (const char* c : {"x", "y", "z"}) keep(i.grid_offsets, locate(file, std::string("/grid/") + c, std::string("/grid/") + c));
    i.has_grid = true;
  }
  Handle frames(check(H5Gopen2(file, "/frames", H5P_DEFAULT), "cannot open /frames in", path));
  H5G_info_t gi{};
  check_status(H5Gget_info(frames, &gi), "cannot list /frames in", path);
  for (hsize_t k = 0; k < gi.nlinks; ++k) {
    const std::string name = frame_name(static_cast<std::int64_t>(k));
    if (!h5::exists(frames, name)) throw FormatError(path + ": /frames holds " + std::to_string(gi.nlinks) + " groups but no " + name);
    Handle g(check(H5Gopen2(frames, name.c_str(), H5P_DEFAULT), "cannot open /frames/" + name + " in", path));
    i.times.push_back(h5::read_attribute<double>(g, "time", path).at(0));
    for (const auto& v : h5::link_names(i.variables)) keep(i.dataset_offsets, locate(g, v, "/frames/" + name + "/" + v));
  }
  if (h5::exists(file, "/anabranch/provenance")) {
    Handle prov(check(H5Gopen2(file, "/anabranch/provenance", H5P_DEFAULT), "cannot open provenance in", path));
    for (const auto& a : h5::attribute_names(prov)) i.provenance[a] = h5::read_string_attribute(prov, a, path);
  }
  return i;
}

void write_xdmf(const std::string& final_path, const BlockFileInfo& info) {
  const std::string h5 = final_path.substr(final_path.find_last_of('/') + 1);
  std::int64_t total = 0;
  for (const auto& b : info.blocks) total += b.points();
  const std::vector<std::string> links = h5::link_names(info.variables);
  xdmf::write_file(final_path + ".xmf", [&](std::FILE* out) {
    std::fprintf(out, "  <Grid Name=\"frames\" GridType=\"Collection\" CollectionType=\"Temporal\">\n");
    const std::int64_t frames = std::max<std::int64_t>(info.frames(), 1);
    for (std::int64_t f = 0; f < frames; ++f) {
      std::fprintf(out, "  <Grid Name=\"frame %lld\" GridType=\"Collection\" CollectionType=\"Spatial\">\n", static_cast<long long>(f));
      if (info.frames() > 0) std::fprintf(out, "   <Time Value=\"%.17g\"/>\n", info.times[static_cast<std::size_t>(f)]);
      std::int64_t first = 0;
      for (const auto& b : info.blocks) {
        // A block's slice of a concatenated dataset, shaped as the block (k, j, i).
        const std::string dims = std::to_string(b.dims[2]) + " " + std::to_string(b.dims[1]) + " " + std::to_string(b.dims[0]);
        std::fprintf(out, "   <Grid Name=\"block %lld\" GridType=\"Uniform\">\n", static_cast<long long>(b.id));
        if (info.has_grid) {  // the interleaved view (/grid/xyz): XDMF 3 readers see no points in X_Y_Z
          std::fprintf(out, "    <Topology TopologyType=\"3DSMesh\" Dimensions=\"%s\"/>\n    <Geometry GeometryType=\"XYZ\">\n", dims.c_str());
          xdmf::slice(out, 5, dims + " 3", info.real_bytes, h5, "/grid/xyz", first, b.points(), total, 3);
          std::fprintf(out, "    </Geometry>\n");
        } else {  // no coordinates: the index space, block after block along i
          std::fprintf(out,
                       "    <Topology TopologyType=\"3DCoRectMesh\" Dimensions=\"%s\"/>\n"
                       "    <Geometry GeometryType=\"ORIGIN_DXDYDZ\">\n"
                       "     <DataItem Dimensions=\"3\" Format=\"XML\">0 0 %lld</DataItem>\n"
                       "     <DataItem Dimensions=\"3\" Format=\"XML\">1 1 1</DataItem>\n    </Geometry>\n",
                       dims.c_str(), static_cast<long long>(first));
        }
        if (info.frames() > 0)
          for (std::size_t v = 0; v < info.variables.size(); ++v) {
            std::fprintf(out, "    <Attribute Name=\"%s\" AttributeType=\"Scalar\" Center=\"Node\">\n", xdmf::escape(info.variables[v]).c_str());
            xdmf::slice(out, 5, dims, info.real_bytes, h5, "/frames/" + frame_name(f) + "/" + links[v], first, b.points(), total);
            std::fprintf(out, "    </Attribute>\n");
          }
        std::fprintf(out, "   </Grid>\n");
        first += b.points();
      }
      std::fprintf(out, "  </Grid>\n");
    }
    std::fprintf(out, "  </Grid>\n");
  });
}

}  // namespace anabranch::pio::block_h5
