// Comparing two results numerically (`anabranch diff`): each side is a result file
// (SERAFIN of either precision and byte order, or anabranch's HDF5) or a per-rank set
// (TELEMAC's per-rank files or a CONCAT container) seen as the global file a merge would
// make of it. Values stream one variable of one frame at a time.
#pragma once
#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "grid/mesh.hpp"
#include "formats/serafin.hpp"
#include "h5/block_files.hpp"

namespace anabranch::pio {

class Compared {
 public:
  // A file, or else (no file of that name) the base name of a per-rank set.
  static std::unique_ptr<Compared> open(const std::string& spec);
  virtual ~Compared() = default;

  virtual const std::string& name() const = 0;
  // "SERAFIN, single precision, big-endian", "HDF5, double precision", "4 per-rank SERAFIN files"
  virtual std::string kind() const = 0;
  // Global sizes (a per-rank set: NPOIN from KNOLG, NELEM the parts' sum), variables, IPARAM.
  virtual const serafin::Header& header() const = 0;
  virtual bool per_rank() const { return false; }
  virtual std::int64_t frames() const = 0;
  virtual const std::vector<double>& times() const = 0;
  // The mesh: every array for a file; coordinates only (global order) for a per-rank set.
  virtual Mesh mesh() const = 0;
  // NPOIN values of variable var (0-based) in frame, in global node order.
  virtual void read(std::int64_t frame, int var, double* out) const = 0;
  // Hint: frames [first, first + count) come next.
  virtual void prefetch(std::int64_t /*first*/, std::int64_t /*count*/) const {}
  // The SERAFIN file whose stored values these are, or null (HDF5, a per-rank set): two
  // files stored alike are compared as stored first, and decoded only where they differ.
  virtual const serafin::Reader* stored() const { return nullptr; }
};

// The key variables match by: the name trimmed, in upper case ("velocity u " -> "VELOCITY U").
std::string variable_key(const std::string& name);

struct Tolerance {
  double atol = 0, rtol = 0;
  double range = 0;  // a fraction of A's range (max - min of its values) in the frame, added to atol
};

struct CompareOptions {
  Tolerance all;                            // every variable without its own
  std::map<std::string, Tolerance> per_var;  // by variable_key
  std::vector<std::int64_t> frames;          // 0-based; empty: every frame both have
  std::vector<std::string> variables;        // variable_keys; empty: all both have
  bool values_only = false;                  // skip the header and mesh
  std::function<void(std::int64_t done, std::int64_t total)> progress;
};

// The largest difference of one variable in one frame (or over all compared frames).
struct Extreme {
  double abs = 0, rel = 0;          // max |a - b|, max |a - b| / max(|a|, |b|)
  std::int64_t node_abs = -1, node_rel = -1, frame_abs = -1, frame_rel = -1;  // 0-based; -1: none
  double a = 0, b = 0;              // the values where |a - b| is largest
  double x = 0, y = 0;              // and that node's coordinates (A's)
  std::int64_t beyond = 0;          // values with |a - b| > atol + range * (A's range) + rtol * max(|a|, |b|)
  std::int64_t nan = 0;             // values NaN on one side only (counted in beyond)
};

struct VariableDiff {
  std::string name;
  Tolerance tol;
  Extreme total;                  // over all compared frames
  std::vector<Extreme> frames;    // per compared frame, in CompareOptions' order
  std::vector<std::int64_t> frame_numbers;
};

struct CompareReport {
  std::vector<std::string> header_differences;  // each one line
  std::vector<std::string> notes;               // differences that do not count (title, date)
  std::vector<VariableDiff> variables;          // the variables both have, in A's order
  std::int64_t values = 0;                      // values compared
  bool values_compared = false;                 // false when NPOIN differs
  bool identical = false;                       // every value equal, header too
  bool equal = false;                           // within tolerances, header too (unless skipped)
};

// Compares b against a. Variables match by name (upper case, trimmed); frames by number.
// Throws anabranch errors (bad files, bad options: a tolerance for a variable neither has).
CompareReport compare(const Compared& a, const Compared& b, const CompareOptions& options);

// The largest difference of one variable of two block files (serial; both read block by
// block, one block's arrays in memory at a time).
struct BlockDiff {
  std::string variable;
  double atol = 0, rtol = 0;
  double abs = 0, rel = 0;        // max |a - b|; max |a - b| / max(|a|, |b|)
  std::int64_t frame = -1, block = -1;  // where |a - b| is largest (block id)
  std::array<std::int64_t, 3> at{0, 0, 0};  // i, j, k there
  double a = 0, b = 0;
  std::int64_t beyond = 0;        // values with |a - b| > atol + rtol * max(|a|, |b|) (NaN on one side counts)
};
struct BlockDiffReport {
  std::vector<std::string> differences;  // grid, variables, frames that differ (each one line)
  std::vector<BlockDiff> variables;      // the variables both have
  std::int64_t values = 0;
  bool identical = false, equal = false;
};
// tolerance(name) -> (atol, rtol).
BlockDiffReport compare_block_files(const BlockFileInfo& a, const BlockFileInfo& b,
                                    const std::function<std::pair<double, double>(const std::string&)>& tolerance);

}  // namespace anabranch::pio
