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

// The elements (0-based, increasing) of part `part`, streamed from the file (memory: the
// part's elements). The file must hold nelem lines of parts in 0..nparts-1; a bad line is a
// FormatError naming the file, the line and the byte offset.
std::vector<std::int64_t> elements_of(const std::string& path, int part, int nparts, std::int64_t nelem);
// Every element's part (the same checks).
std::vector<std::int32_t> read(const std::string& path, int nparts, std::int64_t nelem);

}  // namespace anabranch::epart
