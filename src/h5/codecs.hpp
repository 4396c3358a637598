// The lossless codecs of compressed outputs that HDF5 does not have built in, registered in
// this process's HDF5 when it is loaded (h5api.cpp): zstd, HDF5's registered filter 32015
// (a chunk is one Zstandard frame, with its checksum; cd_values[0], when given, is the level). Files written
// with it are read by any HDF5 reader that has the filter's plugin (hdf5plugin for h5py).
#pragma once
#include "core/compression.hpp"
#include "h5/h5api.hpp"

namespace anabranch::pio::h5 {

constexpr H5Z_filter_t kZstdFilter = kZstdFilterId;

// Registers the codecs through HDF5's H5Zregister (given: HDF5 is being loaded).
void register_codecs(herr_t (*zregister)(const void*));

}  // namespace anabranch::pio::h5
