// The element -> part file: METIS's .epart text format (mpmetis writes "<mesh>.epart.<N>"):
// one line per element, in element order, holding its 0-based part number. `anabranch
// partition --layout partition-file` writes it; solvers that partition at start-up read
// their own elements from it and the global geometry (ab_part_open_global), with no
// per-rank files.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace anabranch::epart {

// "<dir>/<name>.epart.<nparts>".
std::string file_name(const std::string& dir, const std::string& name, int nparts);

// Writes epart under a temporary name renamed when complete.
void write(const std::string& path, const std::vector<std::int32_t>& epart);

// One reader's share of the file: the lines that start in bytes [begin, end) (the last may
// end beyond), parsed. The first bad line is kept, not thrown: its number in the file is
// known only once the lines before the share are counted (by the other readers).
struct Share {
  std::int64_t first_byte = 0;       // where the share's first line starts
  std::vector<std::int32_t> parts;   // one per line
  std::int64_t bad_line = -1;        // the first bad line, counted from the share's first; -1: none
  std::int64_t bad_at = 0;           // its byte offset
  std::string bad_what;
};
Share read_share(const std::string& path, std::int64_t begin, std::int64_t end, int nparts);
// The byte offset of the k-th line (0-based) after the line starting at `from`.
std::int64_t line_offset(const std::string& path, std::int64_t from, std::int64_t k);
// Every element's part (the same checks).
std::vector<std::int32_t> read(const std::string& path, int nparts, std::int64_t nelem);

}  // namespace anabranch::epart
