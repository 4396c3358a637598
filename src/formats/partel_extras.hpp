// The case files partel v8 splits besides the mesh: control sections (T2DSEC), friction
// zones (T2DZFI) and weirs (T2DSEU, TYPE OF WEIRS = 2). Each becomes one text file per part,
// <name><suffix>, with partel's numbers and partel's bytes.
// Formats and rules: docs/formats/telemac-partitions.md.
//
// The rules need little of the mesh: the sections' walks along element edges, the parts
// holding the few nodes that sections and weirs name (and their local numbers there), and
// the zone of each node of a part. Those come through small interfaces, so that one process
// holding the whole mesh (the serial route) and ranks each holding a slice (the route under
// mpiexec, partition/partition_distributed) give the same files.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "grid/mesh.hpp"
#include "grid/plan.hpp"

namespace anabranch::partel {

// A file split into parts: text(p) is part p's file (called concurrently for different parts).
struct PartText {
  std::string name;  // base name of the per-part files
  std::function<std::string(int)> text;
};

// Where some nodes lie: for each, the parts holding it and its local number (1-based) there,
// parts increasing (partel's KNOGL, for the nodes a case file names).
class NodeParts {
 public:
  // From a whole plan, for `nodes` (0-based).
  static NodeParts of(const Plan& plan, const std::vector<std::int32_t>& nodes);
  // Adds (node, part, local) in any order; sort() when all are in.
  void add(std::int32_t node, int part, std::int32_t local) { at_[node].emplace_back(part, local); }
  void sort();
  // (part, local number) of node n, parts increasing; empty when no part holds it.
  const std::vector<std::pair<int, std::int32_t>>& parts(std::int32_t n) const;
  // Local number of node n in part p, 0 when p does not hold it.
  std::int32_t local(std::int32_t n, int p) const;

 private:
  std::unordered_map<std::int32_t, std::vector<std::pair<int, std::int32_t>>> at_;
};

// The mesh as a section's walk sees it (2D triangles, 0-based nodes).
struct SectionMesh {
  std::int64_t npoin = 0;
  // Called once, before the walks, with every section's terminal nodes (begin, end): a
  // walk's nodes all lie nearer its end than its beginning is (optional).
  std::function<void(const std::vector<std::pair<std::int32_t, std::int32_t>>&)> prepare;
  // The node nearest each point (x, y pairs), the first of equals.
  std::function<std::vector<std::int32_t>(const std::vector<double>& xy)> nearest;
  // Squared distance between two nodes.
  std::function<double(std::int32_t, std::int32_t)> d2;
  // One step of the walk: among the vertices of the elements around pt (elements in
  // increasing order, vertices in IKLE order), the first of those nearest `end` and
  // strictly nearer than dist; dist becomes its distance. pt when there is none.
  std::function<std::int32_t(std::int32_t pt, std::int32_t end, double& dist)> step;
};
// The whole mesh in this process (ikle2: 1-based, 3 per triangle; kept by reference).
SectionMesh whole_mesh(const std::int32_t* ikle2, std::int64_t nelem, const Coordinates& x, const Coordinates& y);

// Control sections: the file read and checked (one-line FormatError naming the file, the
// record and its byte offset) and every section walked from its first terminal node to the
// second along element edges, as partel walks them.
class ControlSections {
 public:
  ControlSections(const std::string& path, const SectionMesh& mesh);
  // The segments' nodes (0-based), each once, increasing.
  std::vector<std::int32_t> nodes() const;
  // The per-part files; `where` must hold nodes(). Each segment goes to the highest part
  // holding both its ends.
  PartText split(const NodeParts& where, int nparts) const;

 private:
  struct Section;
  std::string path_;
  std::shared_ptr<std::vector<Section>> secs_;
};

// Weirs (TYPE OF WEIRS = 2): the file read and checked.
class Weirs {
 public:
  Weirs(const std::string& path, std::int64_t npoin);
  // The nodes the weirs name (0-based), each once, increasing.
  std::vector<std::int32_t> nodes() const;
  // The per-part files; `where` must hold nodes().
  PartText split(const NodeParts& where, int nparts) const;

 private:
  struct State;
  std::string path_;
  std::shared_ptr<State> st_;
};

// Friction zones: a zone per node, read (streamed) and checked. slot(n) is where node n's
// zone is kept (0..slots-1), or -1 for a node not wanted here: every node in one process,
// a rank's own nodes under mpiexec.
class FrictionZones {
 public:
  FrictionZones(const std::string& path, std::int64_t npoin, const std::function<std::int64_t(std::int32_t)>& slot,
                std::int64_t slots);
  // The zones already known, one per slot (read elsewhere, by parts of the file).
  FrictionZones(std::string path, std::function<std::int64_t(std::int32_t)> slot, std::vector<std::int64_t> zone)
      : path_(std::move(path)), slot_(std::move(slot)), zone_(std::move(zone)) {}
  // A part's file from its nodes (0-based global numbers in local order), each wanted.
  std::string text(const std::int32_t* knolg, std::int64_t n) const;
  std::string name() const;

 private:
  std::string path_;
  std::function<std::int64_t(std::int32_t)> slot_;
  std::vector<std::int64_t> zone_;
};

// The serial route's splits, from the whole plan (ikle2 and x, y: the 2D mesh).
PartText control_sections(const std::string& path, const Plan& plan, const std::int32_t* ikle2, const Coordinates& x,
                          const Coordinates& y);
PartText friction_zones(const std::string& path, const Plan& plan);
PartText weirs(const std::string& path, const Plan& plan);

}  // namespace anabranch::partel
