// Thin C++ over the HDF5 C API: owned handles, errors as exceptions naming the file and
// the object, and the few dataset and attribute operations the VTKHDF layout needs.
// HDF5's own error printing is switched off; its innermost message goes into ours.
#pragma once
#include "h5/h5api.hpp"

#include <cstdint>
#include <mutex>
#include <string>

#include "core/compression.hpp"
#include <utility>
#include <vector>

namespace anabranch::pio::h5 {

// An owned hid_t, closed with the function matching its kind.
class Handle {
 public:
  Handle() = default;
  explicit Handle(hid_t id) : id_(id) {}
  ~Handle() { reset(); }
  Handle(Handle&& o) noexcept : id_(std::exchange(o.id_, H5I_INVALID_HID)) {}
  Handle& operator=(Handle&& o) noexcept {
    if (this != &o) {
      reset();
      id_ = std::exchange(o.id_, H5I_INVALID_HID);
    }
    return *this;
  }
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  hid_t get() const { return id_; }
  operator hid_t() const { return id_; }  // NOLINT: handles pass straight to the C API
  bool valid() const { return id_ >= 0; }
  void reset();
  // Gives the id up without closing it.
  hid_t release() { return std::exchange(id_, H5I_INVALID_HID); }

 private:
  hid_t id_ = H5I_INVALID_HID;
};

// Switches HDF5's automatic error printing off (once per process).
void quiet();
// Throws IoError "<what> <file>: <HDF5's innermost message>" when id < 0 (or status < 0).
hid_t check(hid_t id, const std::string& what, const std::string& file);
void check_status(herr_t status, const std::string& what, const std::string& file);

// Makes sure the disk has room for everything HDF5 has allocated in `file` (up to its
// allocated end) before a flush or close writes the metadata it holds: HDF5 1.10 cannot
// close a file after a flush that failed (its metadata cache stays half-flushed: "slist
// already enabled"), and crashes at exit closing it again. The room is allocated
// (fallocate) through `path`, the file's name on disk, by rank 0 of comm (or alone when
// comm is MPI_COMM_NULL), with `margin` bytes free beside it for what the flush may add.
// Throws IoError naming `name` ("No space left on device") when the room is not there:
// the caller then abandons the file, which HDF5 can still close. A file system without
// fallocate is not checked. Collective over comm.
void reserve_for_flush(hid_t file, MPI_Comm comm, const std::string& path, const std::string& name);

// Empties an HDF5 file being abandoned (a write failed), so that HDF5 can still close it:
// the flush its close makes then has the room of the whole file. Its MPI-IO writes are first
// told to write only the bytes asked (no collective buffering, no data sieving: MPICH's
// ROMIO would otherwise write every byte between the scattered metadata pieces, the whole
// file again). mpi: the file is open through HDF5's MPI-IO driver (else its POSIX one).
void empty_for_close(hid_t file, bool mpi);

// HDF5 type of T in native order (float, double, int32, int64, uint8).
template <class T>
hid_t native_type();

// Attributes on an object (file, group or dataset).
void write_attribute(hid_t obj, const std::string& name, const std::string& text, const std::string& file);
template <class T>
void write_attribute(hid_t obj, const std::string& name, const std::vector<T>& values, const std::string& file);
bool has_attribute(hid_t obj, const std::string& name);
std::string read_string_attribute(hid_t obj, const std::string& name, const std::string& file);
template <class T>
std::vector<T> read_attribute(hid_t obj, const std::string& name, const std::string& file);
// Names of the attributes of obj.
std::vector<std::string> attribute_names(hid_t obj);

bool exists(hid_t loc, const std::string& path);
// The link names of datasets named after `names` (variables): each name with '/' and the
// characters HDF5's tools print badly replaced by '_' ("." and ".." prefixed by '_', an
// empty one "variable"), made unique with " (2)", " (3)", ... Names already fit for links
// are themselves.
std::vector<std::string> link_names(const std::vector<std::string>& names);
// Creates a 1-D dataset of n values of type `type`; extendible (unlimited, chunked by
// `chunk` values) when chunk > 0. Fill values are never written. early: chunks allocated
// when the extent covers them (H5Dset_extent), so their addresses are known before any write.
// compress on (chunked only): HDF5's byte shuffle and its codec (deflate, or zstd: h5/codecs.hpp)
// (HDF5 then allocates each chunk when it is written, at its size).
Handle create_dataset(hid_t loc, const std::string& name, hid_t type, std::int64_t n, std::int64_t chunk,
                      const std::string& file, bool early = false, const Compression& compress = {});
// Throws FormatError naming the file, the dataset (`name`) and the filter when a filter of
// the dataset's is neither built into HDF5, registered here (h5/codecs.hpp), nor a plugin
// HDF5 finds (HDF5_PLUGIN_PATH): the one-line reason, before any read fails on it.
void require_filters(hid_t dset, const std::string& name, const std::string& file);
// The file offset of the allocated chunk holding element `at` of a chunked 1-D dataset.
std::int64_t chunk_offset(hid_t dset, std::int64_t at, const std::string& file);
// Creates an (rows x cols) dataset; chunk_rows > 0: chunked by that many rows (fewer when
// there are fewer), filtered as create_dataset's when compress is on.
Handle create_dataset_2d(hid_t loc, const std::string& name, hid_t type, std::int64_t rows, std::int64_t cols,
                         const std::string& file, std::int64_t chunk_rows = 0, const Compression& compress = {});
std::int64_t dataset_length(hid_t dset);

// File and memory spaces selecting elements [first, first + count) of a 1-D dataset, or
// rows [first, first + count) of one column of a 2-D one (column >= 0); count 0 selects
// nothing (a rank taking part in a collective transfer with nothing).
std::pair<Handle, Handle> range_spaces(hid_t dset, std::int64_t first, std::int64_t count, const std::string& file,
                                       int column = -1);

// Reads or writes [first, first + count) of a 1-D dataset (count may be 0: the rank takes
// part in a collective transfer with nothing). xfer: the transfer property list.
template <class T>
void write_range(hid_t dset, std::int64_t first, std::int64_t count, const T* data, hid_t xfer, const std::string& file);
template <class T>
void read_range(hid_t dset, std::int64_t first, std::int64_t count, T* out, hid_t xfer, const std::string& file);
// Reads the listed elements (increasing 0-based indices) of a 1-D dataset.
template <class T>
void read_elements(hid_t dset, const std::int64_t* index, std::int64_t n, T* out, hid_t xfer, const std::string& file);

// HDF5 as Debian builds it is not thread-safe: every read of an input file through it holds
// this (diff reads two files side by side; the partition writer's threads read a SERAFIN view).
std::unique_lock<std::recursive_mutex> lock();

}  // namespace anabranch::pio::h5
