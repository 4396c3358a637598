// XDMF sidecars: what the mesh results' (vtkhdf) and the block files' (block_h5) sidecars
// share. Specification: docs/formats/hdf5.md#xdmf-sidecar.
//
// A sidecar refers to slices of one-dimensional datasets (a frame of a VTKHDF variable, a
// block of a concatenated block dataset). ParaView reads XDMF with two libraries that take
// slices differently: XDMF 2 (the XDMFReader) reads an item of Type "HyperSlab" with its two
// child items; XDMF 3 (Xdmf3ReaderS and Xdmf3ReaderT, ParaView's default for .xmf) reads a
// HyperSlab item as a reference that VTK's reader skips ("unrecognized array type"), and
// takes a slice written in the HDF item's own text ("file:/dataset|start:stride:count:size").
// A slice is written in both forms at once: Type (not ItemType, which XDMF 3 reads) carries
// XDMF 2's hyperslab, the item's text XDMF 3's selection; each library ignores the other's.
#pragma once
#include <cstdint>
#include <cstdio>
#include <functional>
#include <string>

namespace anabranch::pio::xdmf {

// s with XML's five special characters escaped, for attribute values and text.
std::string escape(const std::string& s);

// Writes an XDMF file: the header, body(out), the footer, under a temporary name (removed
// on a signal) renamed xmf when complete. An error names xmf.
void write_file(const std::string& xmf, const std::function<void(std::FILE*)>& body);

// A DataItem holding rows [start, start + count) of the dataset "file:dataset" of total rows
// of `columns` values (one-dimensional when columns is 1), shaped dims ("13541", "4 5 6",
// "4 5 6 3"); real_bytes 4 or 8. The whole dataset in its own shape is a plain HDF item.
// indent: leading spaces.
void slice(std::FILE* out, int indent, const std::string& dims, int real_bytes, const std::string& file, const std::string& dataset,
           std::int64_t start, std::int64_t count, std::int64_t total, int columns = 1);

}  // namespace anabranch::pio::xdmf
