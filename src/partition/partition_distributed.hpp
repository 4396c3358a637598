// The partitioner under mpiexec: every rank reads a slice of the mesh's elements straight
// from the file, the ranks partition together (PT-Scotch's SCOTCH_dgraphPart on the
// distributed dual graph, or the Hilbert curve with a parallel sort), and the element ->
// part answer is written by all ranks into one partition file. No rank ever holds the whole
// mesh, its dual graph or every element's part.
#pragma once
#include <mpi.h>

#include <cstdint>
#include <string>
#include <vector>

#include "grid/mesh.hpp"
#include "formats/boundary.hpp"
#include "formats/partel.hpp"
#include "formats/serafin.hpp"

namespace anabranch::pio {

// The elements of a 2D (base) mesh dealt to ranks in contiguous slices: rank r holds
// [first(r), first(r + 1)).
struct Slices {
  std::int64_t n = 0;
  int size = 1;
  std::int64_t first(int rank) const { return n / size * rank + std::min<std::int64_t>(rank, n % size); }
  int owner(std::int64_t e) const {
    const std::int64_t q = n / size, rem = n % size;
    if (e < (q + 1) * rem) return static_cast<int>(e / (q + 1));
    return static_cast<int>(rem + (e - (q + 1) * rem) / q);
  }
};

// A record of n reals (X, Y, a variable of a frame) read by all ranks together: each rank
// reads its own contiguous n/P of it and sends every rank the values that rank names. Made
// once for a set of names (sorted, each once), used for every record of that length. A
// rank reads its share and holds its names' values: never the whole record, over which the
// nodes a rank wants are spread (a part's nodes are, in most meshes' numbering).
class SharedRecord {
 public:
  // Collective.
  SharedRecord(MPI_Comm comm, std::int64_t n, const std::vector<std::int32_t>& names);
  // Collective: the named values of the record at `offset` (after its marker) of r, in the
  // names' order.
  std::vector<double> read(const serafin::Reader& r, std::int64_t offset) const;
  // The same into `values`, this record's buffers kept from call to call (a record read
  // frame after frame touches no new memory).
  void read(const serafin::Reader& r, std::int64_t offset, std::vector<double>& values) const;
  // The same, kept in the file's precision (half the memory for a single-precision file).
  Coordinates coordinates(const serafin::Reader& r, std::int64_t offset) const;

 private:
  template <class T>
  void read_as(const serafin::Reader& r, std::int64_t offset, std::vector<T>& reply, std::vector<T>& values) const;

  MPI_Comm comm_;
  std::vector<std::int32_t> asked_;     // the nodes asked of this rank, grouped by the asking rank
  std::vector<int> reply_counts_;       // how many each rank asked
  std::vector<std::uint32_t> order_;    // asked_ by node
  mutable std::vector<double> reply_;   // read's values for the asking ranks
};

// Collective: all-to-all of words, out[d] for rank d; what this rank receives, in rank order.
std::vector<std::uint64_t> exchange_words(MPI_Comm comm, const std::vector<std::vector<std::uint64_t>>& out);

// A rank's slice of a mesh's 2D base elements (a 3D mesh's first layer of prisms, their
// bottom triangles).
struct MeshSlice {
  std::int64_t nelem = 0;  // global, 2D
  std::int64_t npoin = 0;  // global, 2D
  int ndp = 3;
  std::int64_t first = 0;            // the slice's first global element (0-based)
  std::int64_t elements = 0;         // how many it holds
  std::vector<std::int32_t> ikle;    // its elements, ndp 1-based global node numbers each (empty
                                     // once let go: read_ikle_rows reads them from the mesh)
  std::int64_t count() const { return elements; }
};

// Collective: each rank reads its slice of IKLE (one contiguous range of the record).
MeshSlice read_mesh_slice(MPI_Comm comm, const serafin::Reader& mesh);

// Collective: this rank's slice of a weights file (one integer per 2D element, text).
std::vector<std::int32_t> read_weights_slice(MPI_Comm comm, const std::string& path, const MeshSlice& slice);

// Collective: the part of each of this rank's elements along the Hilbert curve: the same
// parts as the serial sfc, whatever the number of ranks. weights: empty, or one per element
// of the slice. The slice's IKLE is let go (write_parts_distributed reads it from the file,
// read_mesh_slice reads it again).
std::vector<std::int32_t> partition_sfc_distributed(MPI_Comm comm, const serafin::Reader& mesh, MeshSlice& slice,
                                                    int nparts, const std::vector<std::int32_t>& weights);

bool ptscotch_available();
// Collective: PT-Scotch's partition of the distributed dual graph (elements sharing an
// edge), with a fixed seed: the same parts for a given number of ranks, run after run. The
// slice's IKLE is let go, as by the curve.
std::vector<std::int32_t> partition_ptscotch_distributed(MPI_Comm comm, const serafin::Reader& mesh, MeshSlice& slice, int nparts,
                                                         const std::vector<std::int32_t>& weights);

// Collective: writes the partition file (each element's part, one per line) from every
// rank's slice through MPI-IO, under a temporary name renamed when complete.
void write_partition_file(MPI_Comm comm, const std::string& path, const std::vector<std::int32_t>& slice_parts);

// Case files split per part as partel splits them (2D meshes), by path; empty: not given.
struct CaseFiles {
  std::string sections, zones, weirs;
  bool any() const { return !sections.empty() || !zones.empty() || !weirs.empty(); }
};

// Collective: TELEMAC's per-part files (the telemac or concat layout) written by the ranks, each the
// parts of a contiguous range: every part's SERAFIN file (geometry and frames, and of each
// `also` file), .cli and (2D) PAR file, byte for byte what the serial command writes for the
// same partition. Each rank reads from the files only its parts' elements, nodes and
// values; the interface nodes, the boundary contour and the halo are found together.
// edge_cut: the dual-graph edges whose two elements lie in different parts (every rank).
// The slice's IKLE (read from geo a chunk at a time when the slice holds it no more) and the
// parts (moved in) are let go on the way. cases: the control
// sections (walked on the slices), friction zones (each rank keeps its nodes' zones) and
// weirs, split per part as the serial command splits them.
partel::WriteReport write_parts_distributed(MPI_Comm comm, const serafin::Reader& geo,
                                            const std::vector<const serafin::Reader*>& also, MeshSlice& slice,
                                            std::vector<std::int32_t> parts, int nparts, const boundary::File* cli,
                                            const partel::Names& names, partel::Layout layout, const CaseFiles& cases = {},
                                            std::int64_t* edge_cut = nullptr);

// Quality of a distributed partition, without any rank holding it whole: elements per
// part, and the dual-graph edges (shared element edges) whose two elements lie in
// different parts.
struct DistributedQuality {
  std::int64_t min_elems = 0, max_elems = 0, empty_parts = 0, edge_cut = 0;
  double mean_elems = 0, imbalance = 0;
};
// count_cut false: elements per part only (the part writer counts the cut).
DistributedQuality distributed_quality(MPI_Comm comm, const MeshSlice& slice, const std::vector<std::int32_t>& parts,
                                       int nparts, bool count_cut = true);

}  // namespace anabranch::pio
