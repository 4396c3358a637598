// HDF5's C API, loaded when first used. The library is opened with dlopen at the first HDF5
// call of a process, not by the dynamic linker at start: Debian's parallel HDF5 brings some
// forty shared libraries (curl, TLS, Kerberos, LDAP) whose loading and relocation cost every
// command ~4 ms warm and ~0.06 s with a cold cache, although most commands never touch HDF5.
//
// Include this instead of <hdf5.h>. Each HDF5 function used is a macro naming a forwarder
// with the function's own type (decltype of the declaration), which resolves the symbol
// once; the library's global ids (H5T_NATIVE_DOUBLE_g, ...) are read through it after H5open.
// A function or id missing from the lists below is a link error, never a silent fallback.
#pragma once
#include <hdf5.h>

namespace anabranch::pio::h5api {

// The address of an HDF5 symbol, opening the library on first use; throws IoError naming
// the library when it cannot be opened or lacks the symbol.
void* symbol(const char* name);
// Opens the library now (throws IoError as symbol does).
void load();
// H5close when the library was opened (nothing otherwise): at MPI_Finalize.
void close_if_loaded();

template <class F, const char* Name>
struct Lazy;
template <class R, class... A, const char* Name>
struct Lazy<R (*)(A...), Name> {
  static R call(A... a) {
    static const auto f = reinterpret_cast<R (*)(A...)>(symbol(Name));
    return f(a...);
  }
};
template <const char* Name>
struct Global {
  static hid_t get() {
    static const auto* id = static_cast<const hid_t*>(symbol(Name));
    return *id;  // read at each use: the value is set by H5open, which the id macros call first
  }
};

// clang-format off
#define AB_H5_FUNCTIONS(X) \
  X(H5open) X(H5close) X(H5check_version) X(H5get_libversion) X(H5free_memory) \
  X(H5Aclose) X(H5Acreate2) X(H5Adelete) X(H5Aexists) X(H5Aget_space) X(H5Aget_type) X(H5Aiterate2) \
  X(H5Aopen) X(H5Aread) X(H5Awrite) \
  X(H5Dclose) X(H5Dcreate2) X(H5Dget_chunk_info_by_coord) X(H5Dget_create_plist) X(H5Dget_offset) X(H5Dget_space) X(H5Dget_type) \
  X(H5Dget_storage_size) X(H5Dopen2) X(H5Dread) \
  X(H5Dset_extent) X(H5Dwrite) \
  X(H5Eclear2) X(H5Eset_auto2) X(H5Ewalk2) \
  X(H5Fclose) X(H5Fcreate) X(H5Fflush) X(H5Fget_eoa) X(H5Fget_filesize) X(H5Fget_vfd_handle) X(H5Fopen) \
  X(H5Gclose) X(H5Gcreate2) X(H5Gget_create_plist) X(H5Gget_info) X(H5Gopen2) \
  X(H5Iget_name) X(H5Iget_type) X(H5Lcreate_external) X(H5Lexists) X(H5Literate) X(H5Oopen_by_addr) \
  X(H5Pget_chunk) X(H5Pget_filter2) X(H5Pget_layout) X(H5Pget_link_creation_order) X(H5Pget_nfilters) X(H5Pset_deflate) X(H5Pset_shuffle) \
  X(H5Pclose) X(H5Pcreate) X(H5Pset_alignment) X(H5Pset_all_coll_metadata_ops) X(H5Pset_alloc_time) \
  X(H5Pset_chunk) X(H5Pset_chunk_cache) X(H5Pset_coll_metadata_write) X(H5Pset_dxpl_mpio) X(H5Pget_mdc_config) X(H5Pset_mdc_config) \
  X(H5Pset_fapl_mpio) X(H5Pset_fill_time) X(H5Pset_filter) X(H5Pset_layout) X(H5Pset_virtual) X(H5Zfilter_avail) \
  X(H5Sclose) X(H5Scopy) X(H5Screate) X(H5Screate_simple) X(H5Sget_simple_extent_dims) \
  X(H5Sget_simple_extent_ndims) X(H5Sget_simple_extent_npoints) X(H5Sselect_elements) \
  X(H5Sselect_hyperslab) X(H5Sselect_none) \
  X(H5Tclose) X(H5Tcopy) X(H5Tget_class) X(H5Tget_order) X(H5Tget_size) X(H5Tis_variable_str) \
  X(H5Tset_size) X(H5Tset_strpad)
#define AB_H5_GLOBALS(X) \
  X(H5T_C_S1_g) X(H5T_IEEE_F32LE_g) X(H5T_IEEE_F64LE_g) X(H5T_NATIVE_DOUBLE_g) X(H5T_NATIVE_FLOAT_g) \
  X(H5T_NATIVE_INT32_g) X(H5T_NATIVE_INT64_g) X(H5T_NATIVE_UINT8_g) X(H5T_STD_I32LE_g) X(H5T_STD_I64LE_g) \
  X(H5T_STD_U8LE_g) X(H5P_CLS_DATASET_ACCESS_ID_g) X(H5P_CLS_DATASET_CREATE_ID_g) X(H5P_CLS_DATASET_XFER_ID_g) X(H5P_CLS_FILE_ACCESS_ID_g)
// clang-format on
#define AB_H5_NAME(fn) inline constexpr char fn##_name[] = #fn;
AB_H5_FUNCTIONS(AB_H5_NAME)
AB_H5_GLOBALS(AB_H5_NAME)
#undef AB_H5_NAME

}  // namespace anabranch::pio::h5api

#define AB_H5_LAZY(fn) (::anabranch::pio::h5api::Lazy<decltype(&::fn), ::anabranch::pio::h5api::fn##_name>::call)
#define AB_H5_GLOBAL(id) (::anabranch::pio::h5api::Global<::anabranch::pio::h5api::id##_name>::get())

// Every use below expands to the forwarder (a macro does not expand inside itself, so
// ::H5open in AB_H5_LAZY(H5open) still names HDF5's declaration).
#define H5open AB_H5_LAZY(H5open)
#define H5close AB_H5_LAZY(H5close)
#define H5check_version AB_H5_LAZY(H5check_version)
#define H5get_libversion AB_H5_LAZY(H5get_libversion)
#define H5free_memory AB_H5_LAZY(H5free_memory)
#define H5Aclose AB_H5_LAZY(H5Aclose)
#define H5Acreate2 AB_H5_LAZY(H5Acreate2)
#define H5Adelete AB_H5_LAZY(H5Adelete)
#define H5Aexists AB_H5_LAZY(H5Aexists)
#define H5Aget_space AB_H5_LAZY(H5Aget_space)
#define H5Aget_type AB_H5_LAZY(H5Aget_type)
#define H5Aiterate2 AB_H5_LAZY(H5Aiterate2)
#define H5Aopen AB_H5_LAZY(H5Aopen)
#define H5Aread AB_H5_LAZY(H5Aread)
#define H5Awrite AB_H5_LAZY(H5Awrite)
#define H5Dclose AB_H5_LAZY(H5Dclose)
#define H5Dcreate2 AB_H5_LAZY(H5Dcreate2)
#define H5Dget_chunk_info_by_coord AB_H5_LAZY(H5Dget_chunk_info_by_coord)
#define H5Dget_offset AB_H5_LAZY(H5Dget_offset)
#define H5Dget_create_plist AB_H5_LAZY(H5Dget_create_plist)
#define H5Dget_space AB_H5_LAZY(H5Dget_space)
#define H5Dget_type AB_H5_LAZY(H5Dget_type)
#define H5Dopen2 AB_H5_LAZY(H5Dopen2)
#define H5Dread AB_H5_LAZY(H5Dread)
#define H5Dset_extent AB_H5_LAZY(H5Dset_extent)
#define H5Dwrite AB_H5_LAZY(H5Dwrite)
#define H5Eclear2 AB_H5_LAZY(H5Eclear2)
#define H5Eset_auto2 AB_H5_LAZY(H5Eset_auto2)
#define H5Ewalk2 AB_H5_LAZY(H5Ewalk2)
#define H5Fclose AB_H5_LAZY(H5Fclose)
#define H5Fcreate AB_H5_LAZY(H5Fcreate)
#define H5Fflush AB_H5_LAZY(H5Fflush)
#define H5Fget_eoa AB_H5_LAZY(H5Fget_eoa)
#define H5Fget_filesize AB_H5_LAZY(H5Fget_filesize)
#define H5Fget_vfd_handle AB_H5_LAZY(H5Fget_vfd_handle)
#define H5Fopen AB_H5_LAZY(H5Fopen)
#define H5Gclose AB_H5_LAZY(H5Gclose)
#define H5Gcreate2 AB_H5_LAZY(H5Gcreate2)
#define H5Gget_info AB_H5_LAZY(H5Gget_info)
#define H5Gget_create_plist AB_H5_LAZY(H5Gget_create_plist)
#define H5Literate AB_H5_LAZY(H5Literate)
#define H5Oopen_by_addr AB_H5_LAZY(H5Oopen_by_addr)
#define H5Pget_layout AB_H5_LAZY(H5Pget_layout)
#define H5Pget_chunk AB_H5_LAZY(H5Pget_chunk)
#define H5Pget_link_creation_order AB_H5_LAZY(H5Pget_link_creation_order)
#define H5Pget_nfilters AB_H5_LAZY(H5Pget_nfilters)
#define H5Pget_filter2 AB_H5_LAZY(H5Pget_filter2)
#define H5Pset_deflate AB_H5_LAZY(H5Pset_deflate)
#define H5Pset_filter AB_H5_LAZY(H5Pset_filter)
#define H5Zfilter_avail AB_H5_LAZY(H5Zfilter_avail)
#define H5Pset_shuffle AB_H5_LAZY(H5Pset_shuffle)
#define H5Dget_storage_size AB_H5_LAZY(H5Dget_storage_size)
#define H5Gopen2 AB_H5_LAZY(H5Gopen2)
#define H5Iget_name AB_H5_LAZY(H5Iget_name)
#define H5Iget_type AB_H5_LAZY(H5Iget_type)
#define H5Lcreate_external AB_H5_LAZY(H5Lcreate_external)
#define H5Lexists AB_H5_LAZY(H5Lexists)
#define H5Pclose AB_H5_LAZY(H5Pclose)
#define H5Pcreate AB_H5_LAZY(H5Pcreate)
#define H5Pset_alignment AB_H5_LAZY(H5Pset_alignment)
#define H5Pset_all_coll_metadata_ops AB_H5_LAZY(H5Pset_all_coll_metadata_ops)
#define H5Pset_alloc_time AB_H5_LAZY(H5Pset_alloc_time)
#define H5Pset_chunk AB_H5_LAZY(H5Pset_chunk)
#define H5Pset_chunk_cache AB_H5_LAZY(H5Pset_chunk_cache)
#define H5Pset_coll_metadata_write AB_H5_LAZY(H5Pset_coll_metadata_write)
#define H5Pset_dxpl_mpio AB_H5_LAZY(H5Pset_dxpl_mpio)
#define H5Pget_mdc_config AB_H5_LAZY(H5Pget_mdc_config)
#define H5Pset_mdc_config AB_H5_LAZY(H5Pset_mdc_config)
#define H5Pset_fapl_mpio AB_H5_LAZY(H5Pset_fapl_mpio)
#define H5Pset_fill_time AB_H5_LAZY(H5Pset_fill_time)
#define H5Pset_layout AB_H5_LAZY(H5Pset_layout)
#define H5Pset_virtual AB_H5_LAZY(H5Pset_virtual)
#define H5Sclose AB_H5_LAZY(H5Sclose)
#define H5Scopy AB_H5_LAZY(H5Scopy)
#define H5Screate AB_H5_LAZY(H5Screate)
#define H5Screate_simple AB_H5_LAZY(H5Screate_simple)
#define H5Sget_simple_extent_dims AB_H5_LAZY(H5Sget_simple_extent_dims)
#define H5Sget_simple_extent_ndims AB_H5_LAZY(H5Sget_simple_extent_ndims)
#define H5Sget_simple_extent_npoints AB_H5_LAZY(H5Sget_simple_extent_npoints)
#define H5Sselect_elements AB_H5_LAZY(H5Sselect_elements)
#define H5Sselect_hyperslab AB_H5_LAZY(H5Sselect_hyperslab)
#define H5Sselect_none AB_H5_LAZY(H5Sselect_none)
#define H5Tclose AB_H5_LAZY(H5Tclose)
#define H5Tcopy AB_H5_LAZY(H5Tcopy)
#define H5Tget_class AB_H5_LAZY(H5Tget_class)
#define H5Tget_order AB_H5_LAZY(H5Tget_order)
#define H5Tget_size AB_H5_LAZY(H5Tget_size)
#define H5Tis_variable_str AB_H5_LAZY(H5Tis_variable_str)
#define H5Tset_size AB_H5_LAZY(H5Tset_size)
#define H5Tset_strpad AB_H5_LAZY(H5Tset_strpad)

#define H5T_C_S1_g AB_H5_GLOBAL(H5T_C_S1_g)
#define H5T_IEEE_F32LE_g AB_H5_GLOBAL(H5T_IEEE_F32LE_g)
#define H5T_IEEE_F64LE_g AB_H5_GLOBAL(H5T_IEEE_F64LE_g)
#define H5T_NATIVE_DOUBLE_g AB_H5_GLOBAL(H5T_NATIVE_DOUBLE_g)
#define H5T_NATIVE_FLOAT_g AB_H5_GLOBAL(H5T_NATIVE_FLOAT_g)
#define H5T_NATIVE_INT32_g AB_H5_GLOBAL(H5T_NATIVE_INT32_g)
#define H5T_NATIVE_INT64_g AB_H5_GLOBAL(H5T_NATIVE_INT64_g)
#define H5T_NATIVE_UINT8_g AB_H5_GLOBAL(H5T_NATIVE_UINT8_g)
#define H5T_STD_I32LE_g AB_H5_GLOBAL(H5T_STD_I32LE_g)
#define H5T_STD_I64LE_g AB_H5_GLOBAL(H5T_STD_I64LE_g)
#define H5T_STD_U8LE_g AB_H5_GLOBAL(H5T_STD_U8LE_g)
#define H5P_CLS_DATASET_ACCESS_ID_g AB_H5_GLOBAL(H5P_CLS_DATASET_ACCESS_ID_g)
#define H5P_CLS_DATASET_CREATE_ID_g AB_H5_GLOBAL(H5P_CLS_DATASET_CREATE_ID_g)
#define H5P_CLS_DATASET_XFER_ID_g AB_H5_GLOBAL(H5P_CLS_DATASET_XFER_ID_g)
#define H5P_CLS_FILE_ACCESS_ID_g AB_H5_GLOBAL(H5P_CLS_FILE_ACCESS_ID_g)
