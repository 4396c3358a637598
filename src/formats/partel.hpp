// TELEMAC's partitioned layout, as written by its partel (v8) and read by the solvers and
// gretel: per part a SERAFIN subdomain file (KNOLG in the IPOBO slot), a .cli file and a
// PAR file; or the concatenated variant (CONCAT + INDEX files).
// Specification: docs/formats/telemac-partitions.md.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "grid/contour.hpp"
#include "grid/plan.hpp"
#include "formats/boundary.hpp"
#include "formats/partel_extras.hpp"
#include "formats/serafin.hpp"

namespace anabranch::partel {

constexpr int kMaxParts = 100000;

// "NNNNN-IIIII": nparts - 1 and part, zero-padded to 5 digits.
std::string suffix(int nparts, int part);
// The file name without its folder.
std::string base_name(const std::string& path);
// The PAR file base name: the first 3 letters of the mesh name, then "PAR".
std::string par_name(const std::string& geo_name);

enum class Layout { Telemac, Concat };
Layout parse_layout(const std::string& name);
const char* to_string(Layout l);

// What is written, and where: dir/<geo><suffix>, dir/<cli><suffix>, dir/<par><suffix>,
// dir/<also[i]><suffix>; or with Layout::Concat dir/<name>-CONCAT and dir/<name>-INDEX.
struct Names {
  std::string dir = ".";
  std::string geo, cli, par;
  std::vector<std::string> also;
};

// The global mesh and boundary as the writer needs them. The writer frees ikle2, x and y
// once every part's header is written, before it streams the frames.
struct GlobalMesh {
  std::vector<std::int32_t>* ikle2 = nullptr;  // 2D base elements, 1-based, `stride` ints each
  int stride = 3;
  Coordinates* x = nullptr;  // all planes
  Coordinates* y = nullptr;
  const boundary::File* cli = nullptr;     // null: no .cli and PAR files
  const Contour* contour = nullptr;        // of the .cli points
  const std::vector<std::int32_t>* numliq = nullptr;
};

struct WriteReport {
  std::int64_t files = 0;
  std::int64_t bytes = 0;
  double seconds_parts = 0;   // headers, .cli and PAR files
  double seconds_frames = 0;  // the frames of the SERAFIN files
  std::vector<std::string> paths;
};

// Writes every part of the mesh file (and of each `also` file on the same mesh) with all
// their frames, the .cli and PAR files, in the given layout, through temporary names
// renamed when everything is complete. threads > 1 builds and writes parts concurrently.
// texts: case files split per part (sections, zones, weirs), dir/<name><suffix> in both layouts.
WriteReport write_parts(const Plan& plan, const serafin::Reader& geo, const std::vector<const serafin::Reader*>& also,
                        const GlobalMesh& mesh, const Names& names, Layout layout, int threads,
                        const std::vector<PartText>& texts = {}, std::int64_t memory_budget = std::int64_t{128} << 20);

// A part's PAR file, resolved: its boundary points (in .cli order), its interface nodes
// (increasing global number: the row is the local number, then the other parts sharing
// the node, increasing) and its halo elements (the local element, then per edge the part
// and local element across it: 0 0 on a liquid boundary, -1 -1 on a wall).
struct ParBoundaryPoint {
  std::int64_t colour = 0, local = 0, iseg = 0;
  float xs = 0, ys = 0;
  std::int64_t numliq = 0;
};
struct ParText {
  std::vector<ParBoundaryPoint> boundary;
  std::vector<std::pair<std::int32_t, std::vector<std::int64_t>>> iface;  // (global node, 0-based; row)
  std::vector<std::vector<std::int64_t>> halo;
  int ndp = 3;
};
// The PAR file as partel v8 writes it (gfortran): list-directed boundary lines, the interface
// nodes in (10(I7,1X)), the halo elements in (7(I9,1X)). Throws when a node is shared by more
// parts than TELEMAC accepts.
std::string format_par(const ParText& t);

// Reads a GEO index: (begin, end) byte ranges (0-based begin, exclusive end) of each part.
std::vector<std::pair<std::int64_t, std::int64_t>> read_geo_index(const std::string& path);
// Reads a CLI index: (first line, last line + 1), 1-based, of each part.
std::vector<std::pair<std::int32_t, std::int32_t>> read_cli_index(const std::string& path);

// The parts of a partitioned SERAFIN file: per-rank files <base>NNNNN-IIIII, or the parts
// of <base>-CONCAT through <base>-INDEX.
class PartSet {
 public:
  // nparts = 0: find out (from the index, or from the first per-rank file's suffix).
  PartSet(const std::string& base, int nparts = 0);
  int size() const { return nparts_; }
  bool concatenated() const { return !ranges_.empty(); }
  // Opens part p (throws IoError naming the missing file).
  std::unique_ptr<serafin::Reader> open(int p) const;
  std::string name(int p) const;

 private:
  std::string base_;
  int nparts_ = 0;
  std::vector<std::pair<std::int64_t, std::int64_t>> ranges_;
};

// Splits `source` (a result or restart file on the global mesh) along existing parts: part
// p gets the mesh of part p of `geometry` (its IPARAM, local IKLE, KNOLG, coordinates) and
// the source's title, variables, date and every frame at the part's nodes. This is how a
// run restarts on another number of processes, and partel's second mode. frames false:
// the parts get the header and mesh only (no frame), for ranks that read their values from
// the global file itself (anabranch's reader: a TELEMAC restart from the one file).
WriteReport split_on_parts(const serafin::Reader& source, const PartSet& geometry, const std::string& dir,
                           const std::string& name, Layout layout, int threads,
                           std::int64_t memory_budget = std::int64_t{128} << 20, bool frames = true);

}  // namespace anabranch::partel
