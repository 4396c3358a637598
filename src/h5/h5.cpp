#include "h5/h5.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <mutex>
#include <set>

#include "core/error.hpp"
#include "h5/codecs.hpp"
#include "parallel/mpi_util.hpp"

namespace anabranch::pio::h5 {

void Handle::reset() {
  if (id_ < 0) return;
  switch (H5Iget_type(id_)) {
    case H5I_FILE: H5Fclose(id_); break;
    case H5I_GROUP: H5Gclose(id_); break;
    case H5I_DATASET: H5Dclose(id_); break;
    case H5I_DATASPACE: H5Sclose(id_); break;
    case H5I_DATATYPE: H5Tclose(id_); break;
    case H5I_ATTR: H5Aclose(id_); break;
    case H5I_GENPROP_LST: H5Pclose(id_); break;
    default: break;
  }
  id_ = H5I_INVALID_HID;
}

void quiet() {
  static std::once_flag once;
  std::call_once(once, [] { H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr); });
}

namespace {

herr_t innermost(unsigned n, const H5E_error2_t* e, void* out) {
  if (n == 0 && e->desc) *static_cast<std::string*>(out) = e->desc;
  return 0;
}

[[noreturn]] void fail(const std::string& what, const std::string& file) {
  std::string detail;
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, innermost, &detail);
  H5Eclear2(H5E_DEFAULT);
  detail = one_line(detail);
  // HDF5 says only "file write failed" (over MPICH: "MPI_File_write_at failed: ... I/O
  // error") when the disk is full or a file-size limit is hit: said one way, with why.
  if (detail.find("write failed") != std::string::npos ||
      (detail.find("write") != std::string::npos && detail.find("I/O error") != std::string::npos))
    detail = "file write failed (" + write_failure_reason(file, -1) + ")";
  throw IoError(what + " " + file + (detail.empty() ? std::string() : ": " + detail));
}

}  // namespace

hid_t check(hid_t id, const std::string& what, const std::string& file) {
  if (id < 0) fail(what, file);
  return id;
}

void check_status(herr_t status, const std::string& what, const std::string& file) {
  if (status < 0) fail(what, file);
}

namespace {

// What a flush adds past the allocated end (object headers grown, the superblock's
// extension, a heap's new block) stays well under this.
constexpr std::int64_t kFlushMargin = std::int64_t{1} << 20;

// Errno of reserving [0, bytes) (0: the file's size, and bytes is set to it) of the file at path plus kFlushMargin free beside it; 0
// when there is room, or when the file system cannot tell (no fallocate).
int reserve_room(const std::string& path, std::int64_t& bytes) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return 0;  // gone (a signal's sweep): the close has nothing to keep
  struct stat st {};
  if (bytes == 0 && ::fstat(fd, &st) == 0) bytes = st.st_size;  // HDF5 1.10's MPI-IO driver cannot tell its end
  int err = 0;
  if (bytes > 0 && ::fallocate(fd, 0, 0, static_cast<off_t>(bytes)) != 0)
    err = errno == EOPNOTSUPP || errno == ENOSYS || errno == EINVAL ? 0 : errno;
  struct statvfs fs {};
  if (err == 0 && ::fstatvfs(fd, &fs) == 0 && fs.f_bavail * static_cast<std::int64_t>(fs.f_frsize) < kFlushMargin)
    err = ENOSPC;
  ::close(fd);
  return err;
}

}  // namespace

void reserve_for_flush(hid_t file, MPI_Comm comm, const std::string& path, const std::string& name) {
  int rank = 0;
  if (comm != MPI_COMM_NULL) MPI_Comm_rank(comm, &rank);
  hsize_t size = 0;  // the larger of the file's end and HDF5's allocated end (asked on every rank: MPI-IO's driver)
  if (H5Fget_filesize(file, &size) < 0) {
    H5Eclear2(H5E_DEFAULT);
    size = 0;
  }
  collective(comm, [&] {
    if (rank != 0) return;
    auto bytes = static_cast<std::int64_t>(size);
    if (const int err = reserve_room(path, bytes); err != 0)
      throw IoError("cannot write " + name + ": no room to finish its " + std::to_string(bytes) + " bytes (" + std::strerror(err) + ")");
  });
}

void empty_for_close(hid_t file, bool mpi) {
  void* handle = nullptr;
  if (H5Fget_vfd_handle(file, H5P_DEFAULT, &handle) < 0 || !handle) {
    H5Eclear2(H5E_DEFAULT);
    return;
  }
  if (mpi) {
    MPI_File fh = *static_cast<MPI_File*>(handle);
    MPI_Info info = MPI_INFO_NULL;
    MPI_Info_create(&info);
    MPI_Info_set(info, "romio_cb_write", "disable");
    MPI_Info_set(info, "romio_ds_write", "disable");
    MPI_File_set_info(fh, info);
    MPI_Info_free(&info);
    MPI_File_set_size(fh, 0);
  } else if (::ftruncate(*static_cast<int*>(handle), 0) != 0) {
    // the close's flush then fails as the writes did: the caller knows the file is left open
  }
}

template <>
hid_t native_type<float>() { return H5T_NATIVE_FLOAT; }
template <>
hid_t native_type<double>() { return H5T_NATIVE_DOUBLE; }
template <>
hid_t native_type<std::int32_t>() { return H5T_NATIVE_INT32; }
template <>
hid_t native_type<std::int64_t>() { return H5T_NATIVE_INT64; }
template <>
hid_t native_type<std::uint8_t>() { return H5T_NATIVE_UINT8; }

void write_attribute(hid_t obj, const std::string& name, const std::string& text, const std::string& file) {
  Handle type(check(H5Tcopy(H5T_C_S1), "H5Tcopy", file));
  check_status(H5Tset_size(type, std::max<std::size_t>(1, text.size())), "H5Tset_size", file);
  check_status(H5Tset_strpad(type, H5T_STR_NULLPAD), "H5Tset_strpad", file);
  Handle space(check(H5Screate(H5S_SCALAR), "H5Screate", file));
  if (H5Aexists(obj, name.c_str()) > 0) H5Adelete(obj, name.c_str());
  Handle attr(check(H5Acreate2(obj, name.c_str(), type, space, H5P_DEFAULT, H5P_DEFAULT), "cannot create attribute " + name + " in", file));
  const std::string padded = text.empty() ? std::string(1, '\0') : text;
  check_status(H5Awrite(attr, type, padded.data()), "cannot write attribute " + name + " in", file);
}

template <class T>
void write_attribute(hid_t obj, const std::string& name, const std::vector<T>& values, const std::string& file) {
  const hsize_t n = values.size();
  if (H5Aexists(obj, name.c_str()) > 0) {
    // Same size: rewritten in place (a counter updated every frame); otherwise replaced.
    Handle attr(check(H5Aopen(obj, name.c_str(), H5P_DEFAULT), "cannot open attribute " + name + " in", file));
    Handle space(check(H5Aget_space(attr), "H5Aget_space", file));
    if (H5Sget_simple_extent_npoints(space) == static_cast<hssize_t>(n)) {
      check_status(H5Awrite(attr, native_type<T>(), values.data()), "cannot write attribute " + name + " in", file);
      return;
    }
    attr.reset();
    H5Adelete(obj, name.c_str());
  }
  Handle space(check(n == 1 ? H5Screate(H5S_SCALAR) : H5Screate_simple(1, &n, nullptr), "H5Screate", file));
  Handle attr(check(H5Acreate2(obj, name.c_str(), native_type<T>(), space, H5P_DEFAULT, H5P_DEFAULT),
                    "cannot create attribute " + name + " in", file));
  check_status(H5Awrite(attr, native_type<T>(), values.data()), "cannot write attribute " + name + " in", file);
}

bool has_attribute(hid_t obj, const std::string& name) { return H5Aexists(obj, name.c_str()) > 0; }

std::string read_string_attribute(hid_t obj, const std::string& name, const std::string& file) {
  Handle attr(check(H5Aopen(obj, name.c_str(), H5P_DEFAULT), "no attribute " + name + " in", file));
  Handle type(check(H5Aget_type(attr), "H5Aget_type", file));
  if (H5Tget_class(type) != H5T_STRING) throw FormatError(file + ": attribute " + name + " is not a string");
  if (H5Tis_variable_str(type) > 0) {
    char* s = nullptr;
    Handle mem(check(H5Tcopy(H5T_C_S1), "H5Tcopy", file));
    H5Tset_size(mem, H5T_VARIABLE);
    check_status(H5Aread(attr, mem, &s), "cannot read attribute " + name + " in", file);
    std::string out = s ? s : "";
    H5free_memory(s);
    return out;
  }
  std::string out(H5Tget_size(type), '\0');
  check_status(H5Aread(attr, type, out.data()), "cannot read attribute " + name + " in", file);
  out.resize(std::min(out.size(), out.find('\0')));  // a C string: what follows its end may be anything
  return out;
}

template <class T>
std::vector<T> read_attribute(hid_t obj, const std::string& name, const std::string& file) {
  Handle attr(check(H5Aopen(obj, name.c_str(), H5P_DEFAULT), "no attribute " + name + " in", file));
  Handle space(check(H5Aget_space(attr), "H5Aget_space", file));
  const hssize_t n = H5Sget_simple_extent_npoints(space);
  if (n < 0 || n > (1 << 20)) throw FormatError(file + ": attribute " + name + " has an impossible size");
  std::vector<T> out(static_cast<std::size_t>(n));
  check_status(H5Aread(attr, native_type<T>(), out.data()), "cannot read attribute " + name + " in", file);
  return out;
}

std::vector<std::string> attribute_names(hid_t obj) {
  std::vector<std::string> names;
  H5Aiterate2(
      obj, H5_INDEX_CRT_ORDER, H5_ITER_NATIVE, nullptr,
      [](hid_t, const char* name, const H5A_info_t*, void* out) -> herr_t {
        static_cast<std::vector<std::string>*>(out)->push_back(name);
        return 0;
      },
      &names);
  return names;
}

bool exists(hid_t loc, const std::string& path) {
  // Each component in turn: H5Lexists fails on a missing intermediate group.
  std::string sofar;
  std::size_t start = path[0] == '/' ? 1 : 0;
  if (start) sofar = "/";
  while (start <= path.size()) {
    const std::size_t end = std::min(path.find('/', start), path.size());
    sofar += path.substr(start, end - start);
    if (H5Lexists(loc, sofar.c_str(), H5P_DEFAULT) <= 0) return false;
    sofar += '/';
    start = end + 1;
  }
  return true;
}

std::vector<std::string> link_names(const std::vector<std::string>& names) {
  std::vector<std::string> out;
  std::set<std::string> seen;
  for (std::string n : names) {
    if (n.empty()) n = "variable";
    for (char& c : n)
      if (c == '/' || static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) > 0x7e) c = '_';
    if (n == "." || n == "..") n = "_" + n;
    std::string unique = n;
    for (int k = 2; seen.count(unique); ++k) unique = n + " (" + std::to_string(k) + ")";
    seen.insert(unique);
    out.push_back(unique);
  }
  return out;
}

std::unique_lock<std::recursive_mutex> lock() {
  static std::recursive_mutex m;
  return std::unique_lock<std::recursive_mutex>(m);
}

// HDF5's shuffle and the codec on a chunked dataset's creation properties.
void set_filters(hid_t dcpl, const Compression& compress, hid_t type, const std::string& file) {
  check_status(H5Pset_shuffle(dcpl), "H5Pset_shuffle", file);
  if (compress.codec == Compression::Codec::Zstd) {
    if (!have_zstd()) throw UsageError("compression '" + compress.str() + "': this anabranch was built without zstd (libzstd)");
    // The level, and the element's size: the shuffled streams, each a block of its own (h5/codecs.cpp).
    const unsigned values[2] = {kZstdLevel, static_cast<unsigned>(H5Tget_size(type))};
    check_status(H5Pset_filter(dcpl, kZstdFilter, H5Z_FLAG_MANDATORY, 2, values), "H5Pset_filter", file);
  } else {
    check_status(H5Pset_deflate(dcpl, kDeflateLevel), "H5Pset_deflate", file);
  }
}

Handle create_dataset(hid_t loc, const std::string& name, hid_t type, std::int64_t n, std::int64_t chunk,
                      const std::string& file, bool early, const Compression& compress) {
  const bool filtered = compress.on() && chunk > 0;
  const hsize_t dims = static_cast<hsize_t>(n);
  const hsize_t maxdims = chunk > 0 ? H5S_UNLIMITED : dims;
  Handle space(check(H5Screate_simple(1, &dims, &maxdims), "H5Screate_simple", file));
  Handle dcpl(check(H5Pcreate(H5P_DATASET_CREATE), "H5Pcreate", file));
  Handle dapl(check(H5Pcreate(H5P_DATASET_ACCESS), "H5Pcreate", file));
  // HDF5 refuses filters on a dataset whose fill values are never written.
  if (!filtered) check_status(H5Pset_fill_time(dcpl, H5D_FILL_TIME_NEVER), "H5Pset_fill_time", file);
  if (chunk > 0) {
    const hsize_t c = static_cast<hsize_t>(chunk);
    check_status(H5Pset_chunk(dcpl, 1, &c), "H5Pset_chunk", file);
    if (filtered) {
      set_filters(dcpl, compress, type, file);
    } else if (early) {
      check_status(H5Pset_alloc_time(dcpl, H5D_ALLOC_TIME_EARLY), "H5Pset_alloc_time", file);
    }
    // No chunk cache: a chunk goes to the file in the write that fills it, so a full disk
    // fails that write (a cached chunk would fail later, in a close whose status is lost).
    check_status(H5Pset_chunk_cache(dapl, 0, 0, 1.0), "H5Pset_chunk_cache", file);
  }
  return Handle(check(H5Dcreate2(loc, name.c_str(), type, space, H5P_DEFAULT, dcpl, dapl),
                      "cannot create dataset " + name + " in", file));
}

void require_filters(hid_t dset, const std::string& name, const std::string& file) {
  Handle dcpl(H5Dget_create_plist(dset));
  const int n = dcpl.valid() ? H5Pget_nfilters(dcpl) : 0;
  for (int i = 0; i < n; ++i) {
    unsigned flags = 0, config = 0;
    std::size_t nvalues = 0;
    char label[128] = "";
    const H5Z_filter_t id = H5Pget_filter2(dcpl, static_cast<unsigned>(i), &flags, &nvalues, nullptr, sizeof label, label, &config);
    if (id < 0 || H5Zfilter_avail(id) > 0) continue;
    H5Eclear2(H5E_DEFAULT);  // the failed plugin search's stack
    std::string why = file + ": " + name + " is compressed with HDF5 filter " + std::to_string(id);
    if (label[0]) why += " (" + std::string(label).substr(0, std::string(label).find(';')) + ")";  // its name, without the URL
    throw FormatError(why + ", which this HDF5 cannot decode: give its plugin's folder in HDF5_PLUGIN_PATH");
  }
}

std::int64_t chunk_offset(hid_t dset, std::int64_t at, const std::string& file) {
  const hsize_t coord = static_cast<hsize_t>(at);
  unsigned filters = 0;
  haddr_t addr = HADDR_UNDEF;
  hsize_t bytes = 0;
  check_status(H5Dget_chunk_info_by_coord(dset, &coord, &filters, &addr, &bytes), "H5Dget_chunk_info_by_coord", file);
  if (addr == HADDR_UNDEF) throw IoError("cannot locate the chunk of element " + std::to_string(at) + " in " + file + " (no space allocated)");
  return static_cast<std::int64_t>(addr);
}

Handle create_dataset_2d(hid_t loc, const std::string& name, hid_t type, std::int64_t rows, std::int64_t cols,
                         const std::string& file, std::int64_t chunk_rows, const Compression& compress) {
  const hsize_t dims[2] = {static_cast<hsize_t>(rows), static_cast<hsize_t>(cols)};
  Handle space(check(H5Screate_simple(2, dims, nullptr), "H5Screate_simple", file));
  Handle dcpl(check(H5Pcreate(H5P_DATASET_CREATE), "H5Pcreate", file));
  if (chunk_rows > 0 && rows > 0 && cols > 0) {
    const hsize_t chunk[2] = {static_cast<hsize_t>(std::min(chunk_rows, rows)), static_cast<hsize_t>(cols)};
    check_status(H5Pset_chunk(dcpl, 2, chunk), "H5Pset_chunk", file);
    if (compress.on()) set_filters(dcpl, compress, type, file);
  }
  if (!compress.on() || chunk_rows <= 0) check_status(H5Pset_fill_time(dcpl, H5D_FILL_TIME_NEVER), "H5Pset_fill_time", file);
  return Handle(check(H5Dcreate2(loc, name.c_str(), type, space, H5P_DEFAULT, dcpl, H5P_DEFAULT),
                      "cannot create dataset " + name + " in", file));
}

std::int64_t dataset_length(hid_t dset) {
  Handle space(H5Dget_space(dset));
  if (!space.valid()) return -1;
  return static_cast<std::int64_t>(H5Sget_simple_extent_npoints(space));
}

std::pair<Handle, Handle> range_spaces(hid_t dset, std::int64_t first, std::int64_t count, const std::string& file,
                                       int column) {
  Handle fspace(check(H5Dget_space(dset), "H5Dget_space", file));
  const hsize_t n = static_cast<hsize_t>(count);
  Handle mspace(check(H5Screate_simple(1, &n, nullptr), "H5Screate_simple", file));
  if (count == 0) {
    H5Sselect_none(fspace);
    H5Sselect_none(mspace);
  } else if (column < 0) {
    const hsize_t start = static_cast<hsize_t>(first);
    check_status(H5Sselect_hyperslab(fspace, H5S_SELECT_SET, &start, nullptr, &n, nullptr), "H5Sselect_hyperslab", file);
  } else {
    const hsize_t start[2] = {static_cast<hsize_t>(first), static_cast<hsize_t>(column)}, cnt[2] = {n, 1};
    check_status(H5Sselect_hyperslab(fspace, H5S_SELECT_SET, start, nullptr, cnt, nullptr), "H5Sselect_hyperslab", file);
  }
  return {std::move(fspace), std::move(mspace)};
}

namespace {

std::string object_name(hid_t obj) {
  char name[256] = {0};
  H5Iget_name(obj, name, sizeof name);
  return name;
}

}  // namespace

template <class T>
void write_range(hid_t dset, std::int64_t first, std::int64_t count, const T* data, hid_t xfer, const std::string& file) {
  auto [fspace, mspace] = range_spaces(dset, first, count, file);
  check_status(H5Dwrite(dset, native_type<T>(), mspace, fspace, xfer, data), "cannot write " + object_name(dset) + " in", file);
}

template <class T>
void read_range(hid_t dset, std::int64_t first, std::int64_t count, T* out, hid_t xfer, const std::string& file) {
  const std::int64_t n = dataset_length(dset);
  if (first < 0 || count < 0 || first + count > n)
    throw FormatError(file + ": " + object_name(dset) + " holds " + std::to_string(n) + " values, fewer than the header says (" +
                      std::to_string(first + count) + ")");
  auto [fspace, mspace] = range_spaces(dset, first, count, file);
  check_status(H5Dread(dset, native_type<T>(), mspace, fspace, xfer, out), "cannot read " + object_name(dset) + " in", file);
}

template <class T>
void read_elements(hid_t dset, const std::int64_t* index, std::int64_t n, T* out, hid_t xfer, const std::string& file) {
  Handle fspace(check(H5Dget_space(dset), "H5Dget_space", file));
  const hsize_t m = static_cast<hsize_t>(n);
  Handle mspace(check(H5Screate_simple(1, &m, nullptr), "H5Screate_simple", file));
  if (n == 0) {
    H5Sselect_none(fspace);
    H5Sselect_none(mspace);
  } else {
    // Few runs of consecutive indices: hyperslab blocks; many: a point list (linear cost).
    std::int64_t runs = 1;
    for (std::int64_t i = 1; i < n; ++i) runs += index[i] != index[i - 1] + 1;
    if (runs <= 1024) {
      H5Sselect_none(fspace);
      for (std::int64_t i = 0; i < n;) {
        std::int64_t j = i + 1;
        while (j < n && index[j] == index[j - 1] + 1) ++j;
        const hsize_t start = static_cast<hsize_t>(index[i]), cnt = static_cast<hsize_t>(j - i);
        check_status(H5Sselect_hyperslab(fspace, H5S_SELECT_OR, &start, nullptr, &cnt, nullptr), "H5Sselect_hyperslab", file);
        i = j;
      }
    } else {
      std::vector<hsize_t> coords(index, index + n);
      check_status(H5Sselect_elements(fspace, H5S_SELECT_SET, static_cast<std::size_t>(n), coords.data()),
                   "H5Sselect_elements", file);
    }
  }
  check_status(H5Dread(dset, native_type<T>(), mspace, fspace, xfer, out), "cannot read " + object_name(dset) + " in", file);
}

#define AB_H5_INSTANTIATE(T)                                                                                      \
  template void write_attribute<T>(hid_t, const std::string&, const std::vector<T>&, const std::string&);         \
  template std::vector<T> read_attribute<T>(hid_t, const std::string&, const std::string&);                       \
  template void write_range<T>(hid_t, std::int64_t, std::int64_t, const T*, hid_t, const std::string&);           \
  template void read_range<T>(hid_t, std::int64_t, std::int64_t, T*, hid_t, const std::string&);                  \
  template void read_elements<T>(hid_t, const std::int64_t*, std::int64_t, T*, hid_t, const std::string&);
AB_H5_INSTANTIATE(float)
AB_H5_INSTANTIATE(double)
AB_H5_INSTANTIATE(std::int32_t)
AB_H5_INSTANTIATE(std::int64_t)
AB_H5_INSTANTIATE(std::uint8_t)
#undef AB_H5_INSTANTIATE

}  // namespace anabranch::pio::h5
