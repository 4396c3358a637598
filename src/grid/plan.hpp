// The partition plan: the mapping between one global numbering and P local numberings.
//
// Stored in CSR form, it costs O(elements + nodes + interface), never O(P x nodes):
//   - element -> part;
//   - per part: its elements (global, increasing) and its nodes in local order (KNOLG:
//     numbered by first appearance while scanning the part's elements in that order,
//     vertex after vertex, as TELEMAC's partel does);
//   - interface nodes (in more than one part) with the parts that share them;
//   - node ownership: every node has exactly one owner, the lowest-numbered part that
//     contains it, so a global frame is written exactly once.
// For 3D prism meshes the plan is that of the 2D base mesh; every layer of prisms follows
// the partition of its base triangle (TELEMAC's column-wise partitioning).
#pragma once
#include <cstdint>
#include <vector>

namespace anabranch {

struct Plan {
  int nparts = 0;
  std::int64_t nelem = 0;  // elements of the (2D base) mesh
  std::int64_t npoin = 0;  // nodes of the (2D base) mesh
  int ndp = 0;             // nodes per (2D base) element

  std::vector<std::int32_t> epart;         // element -> part (0-based)
  std::vector<std::int64_t> elem_offset;   // nparts + 1
  std::vector<std::int32_t> elems;         // global element numbers (0-based), increasing per part
  std::vector<std::int64_t> node_offset;   // nparts + 1
  std::vector<std::int32_t> knolg;         // global node numbers (0-based) in local order
  std::vector<std::int32_t> owner;         // node -> owning part
  std::vector<std::int32_t> iface_nodes;   // interface nodes (0-based), increasing
  std::vector<std::int64_t> iface_offset;  // iface_nodes.size() + 1
  std::vector<std::int32_t> iface_parts;   // parts sharing each interface node, increasing

  std::int64_t part_nelem(int p) const { return elem_offset[p + 1] - elem_offset[p]; }
  std::int64_t part_npoin(int p) const { return node_offset[p + 1] - node_offset[p]; }
  const std::int32_t* part_elems(int p) const { return elems.data() + elem_offset[p]; }
  const std::int32_t* part_knolg(int p) const { return knolg.data() + node_offset[p]; }
  // Index of node in iface_nodes, or -1 when the node is in one part only.
  std::int64_t iface_index(std::int32_t node) const;
  // Local element number (0-based) of global element e in its part.
  std::int64_t local_element(std::int32_t e) const;
  // Bytes held by the plan's arrays.
  std::int64_t memory_bytes() const;
};

// Builds the plan from an element partition. ikle: 1-based node numbers, `stride` ints per
// element of which the first ndp are used (stride > ndp for prisms read as their base).
Plan build_plan(const std::int32_t* ikle, std::int64_t nelem, int ndp, int stride, std::int64_t npoin,
                std::vector<std::int32_t> epart, int nparts);

// Quality of a partition, as reported by `partition`.
struct PlanQuality {
  std::int64_t min_elems = 0, max_elems = 0;
  double mean_elems = 0, imbalance = 0;   // imbalance = max / mean
  std::int64_t edge_cut = 0;               // element faces (edges) between parts
  std::int64_t interface_nodes = 0;        // nodes shared by parts
  std::int64_t max_part_interface = 0;     // largest NPTIR of a part
  std::int64_t empty_parts = 0;
};
PlanQuality plan_quality(const Plan& plan, const std::int32_t* ikle, int stride);

}  // namespace anabranch
