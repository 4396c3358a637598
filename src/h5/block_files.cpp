// Block files of either format, serially. See block_files.hpp.
#include "h5/block_files.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <memory>

#include "blockformats/block_raw.hpp"
#include "blockformats/tecplot_blocks.hpp"
#include "core/byteorder.hpp"
#include "core/error.hpp"
#include "core/io.hpp"
#ifdef ANABRANCH_HAVE_HDF5
#include "blockformats/cgns.hpp"
#include "h5/block_h5.hpp"
#include "h5/cgns_files.hpp"
#include "h5/h5.hpp"
#endif

namespace anabranch::pio {

bool is_block_file(const std::string& path) {
  // Not a file (a base name of per-rank files, a missing one): not a block file; the
  // caller's own open then says what is wrong with it.
  if (!file_exists(path)) return false;
  try {
    if (block_raw::is_raw_blocks(path)) return true;
    {
      const FileSource in(path);
      if (tecplot::is_tecplot(in)) {  // a Tecplot file of ordered zones
        BlockFileInfo info;
        std::string why;
        return tecplot_blocks::describe(path, tecplot::read(in), info, why);
      }
    }
#ifdef ANABRANCH_HAVE_HDF5
    if (block_h5::is_block_h5(path)) return true;
    BlockFileInfo info;  // a CGNS file whose arrays the engine reads
    std::string why;
    return cgns_files::is_cgns_hdf5(path) && cgns_files::describe(path, info, why);
#endif
  } catch (const Error&) {
  }
  return false;
}

BlockFileInfo describe_block_file(const std::string& path) {
  if (block_raw::is_raw_blocks(path)) {
    const auto d = block_raw::read_sidecar(path);
    BlockFileInfo i;
    i.path = path;
    i.format = "raw";
    i.blocks = d.blocks;
    i.variables = d.variables;
    i.real_bytes = d.real_bytes;
    i.records = d.records;
    i.times = d.times;
    i.provenance = d.provenance;
    i.file_bytes = file_size(path);
    const std::int64_t frame_bytes = d.frame_bytes();
    if (frame_bytes > 0 && i.file_bytes < frame_bytes * i.frames())
      throw FormatError(path, "frame " + std::to_string(i.file_bytes / frame_bytes + 1), i.file_bytes,
                        "the file ends inside the frames its description lists (" + std::to_string(i.frames()) + " frames of " +
                            std::to_string(frame_bytes) + " bytes)");
    return i;
  }
  {
    const FileSource in(path);
    if (tecplot::is_tecplot(in)) {
      BlockFileInfo info;
      std::string why;
      if (!tecplot_blocks::describe(path, tecplot::read(in), info, why)) throw FormatError(path + ": not a multi-block file: " + why);
      info.file_bytes = in.size();
      return info;
    }
  }
#ifdef ANABRANCH_HAVE_HDF5
  if (block_h5::is_block_h5(path)) return block_h5::describe(path);
  if (cgns_files::is_cgns_hdf5(path)) {
    BlockFileInfo info;
    std::string why;
    if (cgns_files::describe(path, info, why)) return info;
    throw FormatError(path + ": CGNS's library reads this file, not anabranch's engine: " + why);
  }
#endif
  throw FormatError(path + ": not a block file (no HDF5 block table, no " + block_raw::sidecar_path(path) + ")");
}

std::string check_block_file(const BlockFileInfo& info) {
  const int rb = info.real_bytes;
  std::ifstream in(info.path, std::ios::binary);
  if (!in) return "cannot open " + info.path;
  std::vector<unsigned char> buf;
  // The grid's coordinates (frame -1: x, y, z as variables -1, -2, -3), then every frame.
  for (std::int64_t f = info.has_grid ? -1 : 0; f < info.frames(); ++f)
    for (std::size_t b = 0; b < info.blocks.size(); ++b)
      for (int v = f < 0 ? -1 : 0; f < 0 ? v >= -3 : v < info.nvar(); v += f < 0 ? -1 : 1) {
        const std::string where = f < 0 ? "grid, block " + std::to_string(info.blocks[b].id) + ", coordinate " + "xyz"[-v - 1]
                                        : "frame " + std::to_string(f) + ", block " + std::to_string(info.blocks[b].id) + ", variable " +
                                              info.variables[static_cast<std::size_t>(v)];
        if (!info.compression.empty()) {  // chunks: each decoded through HDF5 (their checksums, zstd's)
          std::vector<double> values;
          try {
            read_block_array(info, std::max<std::int64_t>(f, 0), b, v, values);
          } catch (const std::exception& e) {
            return info.path + ": " + where + ": " + e.what();
          }
          for (std::size_t k = 0; k < values.size(); ++k)
            if (!std::isfinite(values[k])) return info.path + ": " + where + ": value " + std::to_string(k) + " is not finite";
          continue;
        }
        const std::int64_t at = info.value_offset(std::max<std::int64_t>(f, 0), b, v), n = info.blocks[b].points();
        if (info.records) {
          for (const std::int64_t m : {at - 4, at + n * rb}) {
            std::int32_t marker = 0;
            in.seekg(m);
            in.read(reinterpret_cast<char*>(&marker), 4);
            if (!in) return info.path + ": " + where + ": the file ends at its record marker (byte " + std::to_string(m) + ")";
            if (marker != n * rb)
              return info.path + ": " + where + ": record marker " + std::to_string(marker) + " at byte " + std::to_string(m) +
                     " where the array holds " + std::to_string(n * rb) + " bytes";
          }
        }
        buf.resize(static_cast<std::size_t>(n * rb));
        in.seekg(at);
        in.read(reinterpret_cast<char*>(buf.data()), static_cast<std::streamsize>(buf.size()));
        if (!in) return info.path + ": " + where + ": the file ends inside the values (from byte " + std::to_string(at) + ")";
        for (std::int64_t k = 0; k < n; ++k) {
          const double x = rb == 8 ? reinterpret_cast<const double*>(buf.data())[k] : reinterpret_cast<const float*>(buf.data())[k];
          if (!std::isfinite(x))
            return info.path + ": " + where + ": value " + std::to_string(k) + " is not finite (byte " + std::to_string(at + k * rb) + ")";
        }
      }
  return "";
}

#ifdef ANABRANCH_HAVE_HDF5
ChunkedArrays::ChunkedArrays(const BlockFileInfo& info) : info_(info) {
  fields_ = info.format == "cgns" ? cgns::field_names(info.variables) : h5::link_names(info.variables);
  const auto lock = h5::lock();
  h5::quiet();
  file_ = h5::check(H5Fopen(info.path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), "cannot open", info.path);
}

ChunkedArrays::~ChunkedArrays() {
  const auto lock = h5::lock();
  for (const auto& d : open_) H5Dclose(d.second);
  if (file_ >= 0) H5Fclose(file_);
}

std::int64_t ChunkedArrays::open(std::int64_t frame, std::size_t block, int var, std::string& path) const {
  char step[40];
  if (info_.format == "hdf5") {
    std::snprintf(step, sizeof step, "%06lld", static_cast<long long>(frame));
    path = var < 0 ? std::string("/grid/") + "xyz"[-var - 1] : "/frames/" + std::string(step) + "/" + fields_.at(static_cast<std::size_t>(var));
  } else {
    std::snprintf(step, sizeof step, "FlowSolution%06lld", static_cast<long long>(frame));
    static const char* axes[3] = {"CoordinateX", "CoordinateY", "CoordinateZ"};
    const std::string zone = block < info_.zones.size() ? info_.zones[block] : "block_" + std::to_string(info_.blocks.at(block).id);
    path = std::string(info_.blocks.at(block).dims[2] == 1 ? "/Base2D/" : "/Base/") + zone + "/" +
           (var < 0 ? std::string("GridCoordinates/") + axes[-var - 1] : std::string(step) + "/" + fields_.at(static_cast<std::size_t>(var))) +
           "/ data";
  }
  for (const auto& d : open_)
    if (d.first == path) return d.second;
  const hid_t id = H5Dopen2(file_, path.c_str(), H5P_DEFAULT);
  if (id < 0) throw FormatError(info_.path + ": dataset \"" + path + "\" not found (a block file changed since it was written?)");
  h5::Handle dset(id);
  h5::require_filters(dset, path, info_.path);
  if (info_.format == "hdf5") {  // opened again with a cache of two chunks
    h5::Handle dcpl(h5::check(H5Dget_create_plist(dset), "H5Dget_create_plist", info_.path));
    hsize_t chunk = 0;
    if (H5Pget_layout(dcpl) == H5D_CHUNKED && H5Pget_chunk(dcpl, 1, &chunk) == 1) {
      h5::Handle dapl(h5::check(H5Pcreate(H5P_DATASET_ACCESS), "H5Pcreate", info_.path));
      h5::check_status(H5Pset_chunk_cache(dapl, 521, 2 * chunk * static_cast<hsize_t>(info_.real_bytes) + 4096, 1.0), "H5Pset_chunk_cache", info_.path);
      dset = h5::Handle(h5::check(H5Dopen2(file_, path.c_str(), dapl), "cannot open " + path + " in", info_.path));
    }
  }
  if (open_.size() >= 8) {  // a few: a frame's variables
    H5Dclose(open_.front().second);
    open_.erase(open_.begin());
  }
  open_.emplace_back(path, dset.release());
  return open_.back().second;
}

std::int64_t ChunkedArrays::stored_bytes(std::int64_t frame, int var) const {
  const auto lock = h5::lock();
  std::int64_t bytes = 0;
  std::string path;
  for (std::size_t b = 0; b < (info_.format == "hdf5" ? 1 : info_.blocks.size()); ++b)
    bytes += static_cast<std::int64_t>(H5Dget_storage_size(open(frame, b, var, path)));
  return bytes;
}

void ChunkedArrays::read(std::int64_t frame, std::size_t block, int var, const std::array<std::array<std::int64_t, 2>, 3>& box,
                         double* out) const {
  const auto& d = info_.blocks.at(block).dims;
  const auto lock = h5::lock();
  std::string path;
  const hid_t dset = open(frame, block, var, path);
  const std::int64_t ni = box[0][1] - box[0][0], nj = box[1][1] - box[1][0];
  if (info_.format == "hdf5") {  // every block's points one after another: a line of the box at a time, or its slab whole
    const std::int64_t first = info_.first_point(block);
    if (ni == d[0] && nj == d[1])
      return h5::read_range(dset, first + box[2][0] * d[0] * d[1], (box[2][1] - box[2][0]) * ni * nj, out, H5P_DEFAULT, info_.path);
    for (std::int64_t k = box[2][0]; k < box[2][1]; ++k)
      for (std::int64_t j = box[1][0]; j < box[1][1]; ++j, out += ni)
        h5::read_range(dset, first + (k * d[1] + j) * d[0] + box[0][0], ni, out, H5P_DEFAULT, info_.path);
    return;
  }
  const bool flat = d[2] == 1;
  h5::Handle space(h5::check(H5Dget_space(dset), "H5Dget_space", info_.path));
  const int rank = flat ? 2 : 3;
  hsize_t start[3], count[3];
  for (int a = 0; a < rank; ++a) {  // C order: k, j, i
    const std::size_t x = static_cast<std::size_t>(rank - 1 - a);
    start[a] = static_cast<hsize_t>(box[x][0]);
    count[a] = static_cast<hsize_t>(box[x][1] - box[x][0]);
  }
  if (H5Sget_simple_extent_ndims(space) != rank) throw FormatError(info_.path + ": " + path + " is not " + std::to_string(rank) + "-dimensional");
  h5::check_status(H5Sselect_hyperslab(space, H5S_SELECT_SET, start, nullptr, count, nullptr), "H5Sselect_hyperslab", info_.path);
  h5::Handle memory(h5::check(H5Screate_simple(rank, count, nullptr), "H5Screate_simple", info_.path));
  h5::check_status(H5Dread(dset, H5T_NATIVE_DOUBLE, memory, space, H5P_DEFAULT, out), "cannot read " + path + " in", info_.path);
}
#endif

void read_block_array(const BlockFileInfo& info, std::int64_t frame, std::size_t block, int var, std::vector<double>& out,
                      std::istream* in) {
  std::ifstream own;
  if (!in) {
    own.open(info.path, std::ios::binary);
    if (!own) throw IoError::from_errno("cannot open", info.path);
    in = &own;
  }
#ifdef ANABRANCH_HAVE_HDF5
  if (!info.compression.empty()) {
    const auto& d = info.blocks[block].dims;
    out.resize(static_cast<std::size_t>(info.blocks[block].points()));
    // The file kept open for the next array (a command reads them one after another).
    static thread_local std::unique_ptr<ChunkedArrays> file;
    if (!file || file->info().path != info.path || file->info().file_bytes != info.file_bytes)
      file = std::make_unique<ChunkedArrays>(info);
    file->read(frame, block, var, {{{0, d[0]}, {0, d[1]}, {0, d[2]}}}, out.data());
    return;
  }
#endif
  const std::int64_t n = info.blocks[block].points(), at = info.value_offset(frame, block, var);
  std::vector<unsigned char> raw(static_cast<std::size_t>(n * info.real_bytes));
  in->seekg(at);
  in->read(reinterpret_cast<char*>(raw.data()), static_cast<std::streamsize>(raw.size()));
  if (!*in)
    throw FormatError(info.path,
                      "block " + std::to_string(info.blocks[block].id) +
                          (var >= 0 ? ", frame " + std::to_string(frame) + ", variable " + info.variables[static_cast<std::size_t>(var)] : ", grid"),
                      at, "the file ends inside the values");
  out.resize(static_cast<std::size_t>(n));
  if (info.real_bytes == 8) decode_words<double>(raw.data(), out.size(), false, out.data());
  else decode_words<float>(raw.data(), out.size(), false, out.data());
}

}  // namespace anabranch::pio
