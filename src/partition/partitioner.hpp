// Element partitioners: METIS (the way TELEMAC's partel calls it) and a Hilbert
// space-filling curve. Both take the 2D (base) mesh and return element -> part.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "grid/mesh.hpp"

namespace anabranch {

enum class PartitionMethod { Metis, Scotch, Sfc };

PartitionMethod parse_partition_method(const std::string& name);
const char* to_string(PartitionMethod m);
bool metis_available();
bool scotch_available();

struct PartitionStats {
  double seconds = 0;            // time spent in the partitioner itself
  std::int64_t peak_rss = 0;     // the process's peak resident memory when it ended (bytes)
  std::int64_t objective = 0;    // METIS's edge cut (0 for sfc)
};

// The dual graph of a mesh of triangles or quadrilaterals (elements sharing two nodes), as
// METIS_MeshToDual builds it with ncommon = 2: each element's neighbours in the order METIS
// finds them (the element's nodes in turn, the elements around each in increasing order,
// each neighbour where it is first seen), so METIS and SCOTCH partition it into the same
// parts. Built on several threads, without METIS's per-element marker arrays. eind:
// 0-based nodes, ndp per element; base 0 or 1 (Fortran numbering, METIS's numflag).
void dual_graph(const std::int32_t* eind, std::int64_t nelem, int ndp, std::int64_t npoin, int base, std::vector<std::int32_t>& xadj,
                std::vector<std::int32_t>& adjncy);

// METIS: the dual graph with ncommon = 2 (dual_graph: METIS_MeshToDual's), then METIS_PartGraphKway with
// default options: exactly what METIS_PartMeshDual does, so the partition equals partel's.
// eind holds 0-based node numbers, ndp per element; it is freed as soon as the dual graph
// exists, so METIS's partitioning runs without the mesh held twice.
std::vector<std::int32_t> partition_metis(std::vector<std::int32_t>&& eind, std::int64_t nelem, int ndp,
                                          std::int64_t npoin, int nparts, const std::vector<std::int32_t>& weights,
                                          PartitionStats* stats = nullptr);

// SCOTCH, called as partel's method 2 calls it: the 1-based dual graph of
// METIS_MeshToDual (ncommon = 2, dual_graph) built into a SCOTCH graph, SCOTCH_graphPart with the
// default strategy. eind: 0-based node numbers, freed once the dual graph exists.
std::vector<std::int32_t> partition_scotch(std::vector<std::int32_t>&& eind, std::int64_t nelem, int ndp,
                                           std::int64_t npoin, int nparts, PartitionStats* stats = nullptr);

// Hilbert curve through the element centroids, cut into nparts stretches of equal element
// count (or equal weight). ikle is 1-based, `stride` ints per element, first ndp used.
std::vector<std::int32_t> partition_sfc(const std::int32_t* ikle, std::int64_t nelem, int ndp, int stride,
                                        const Coordinates& x, const Coordinates& y, int nparts,
                                        const std::vector<std::int32_t>& weights, PartitionStats* stats = nullptr);

// Position of cell (x, y) along the Hilbert curve through a 2^order x 2^order grid.
std::uint64_t hilbert_index(std::uint32_t x, std::uint32_t y, int order);

// The curve sfc lays through a mesh's bounding box: one key per element, its centroid's
// position on the curve in the high bits and its number in the low ones, so that sorting
// the keys orders the elements along the curve. The serial and the distributed partitioner
// share it: the same keys, the same parts, whatever the number of processes.
struct SfcCurve {
  SfcCurve(double x0, double x1, double y0, double y1, std::int64_t nelem);
  std::uint64_t key(double cx, double cy, std::int64_t element) const;  // (cx, cy): the centroid
  std::uint64_t element_mask() const { return (std::uint64_t{1} << idx_bits) - 1; }
  double x0, y0, scale;
  int idx_bits = 1, order = 1;
};
// The part of the i-th element along the curve: nparts stretches of equal element count.
inline std::int32_t sfc_part(std::int64_t i, std::int64_t nelem, int nparts) {
  return static_cast<std::int32_t>((i * nparts) / nelem);
}
// With weights: the part holding the middle of the element's stretch of weight, `before`
// the weight of the elements ahead of it on the curve.
std::int32_t sfc_weighted_part(double before, std::int32_t weight, double total, int nparts);

}  // namespace anabranch
