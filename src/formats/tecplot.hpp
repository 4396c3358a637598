// Tecplot's binary data file (.plt, "#!TDV112"; read also "#!TDV191"), serially: what its
// bytes mean, the header made, and a file's zones and the places of their values read.
// Specification: docs/formats/tecplot.md (after the Tecplot 360 Data Format Guide, Appendix
// A, "Binary Data File Format").
//
// A file is a header section (the title, the variable names, one header per zone: its name,
// type, sizes, solution time and strand) ending with a marker, then a data section of one
// entry per zone, in the header's order: a marker, each variable's format, which variables
// another zone holds (shared), min/max pairs, then the zone's values, variable after
// variable ("block" packing), and for a finite-element zone its connectivity (0-based). Every
// entry's size follows from the header and the entry's first words: a writer knows where each
// zone's values go before any is written, and a reader walks the entries' first words alone.
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/io.hpp"

namespace anabranch::tecplot {

enum class ZoneType : std::int32_t {
  Ordered = 0,
  FELineSeg = 1,
  FETriangle = 2,
  FEQuadrilateral = 3,
  FETetrahedron = 4,
  FEBrick = 5,
  FEPolygon = 6,
  FEPolyhedron = 7
};
// The nodes of an element of a classic finite-element zone (0: ordered, polygonal, polyhedral).
int nodes_per_element(ZoneType t);
const char* zone_type_name(ZoneType t);

// A value's format in the data section.
enum class Format : std::int32_t { Float = 1, Double = 2, Int32 = 3, Int16 = 4, Byte = 5, Bit = 6 };
int format_bytes(Format f);  // 0 for Bit

struct Zone {
  std::string name;
  ZoneType type = ZoneType::Ordered;
  std::int64_t imax = 1, jmax = 1, kmax = 1;  // ordered
  std::int64_t nodes = 0, elements = 0;       // finite element
  double time = 0;
  std::int32_t strand = -1;  // -1: static; 0 and above: a strand (the zones of one object over time)
  std::int32_t parent = -1;
  // The data section's entry
  std::vector<Format> formats;           // each variable's
  std::vector<std::int32_t> share;       // each variable: the zone (0-based) that holds it, -1: this one
  std::vector<std::int8_t> passive;      // each variable: 1 when it has no values (read only)
  std::int32_t share_connectivity = -1;  // the zone that holds the connectivity, -1: this one
  // Read: where the entry starts, each variable's values (its own, or its sharer's), the
  // connectivity's (-1: none)
  std::int64_t entry = 0;
  std::vector<std::int64_t> values_at;
  std::int64_t connectivity_at = -1;

  // The values of a variable (nodal), of the connectivity (elements x nodes an element).
  std::int64_t points() const;
  std::int64_t connectivity_values() const;
};

struct File {
  int version = 112;
  std::int32_t file_type = 0;  // 0 full, 1 grid, 2 solution
  std::string title;
  std::vector<std::string> variables;
  std::vector<std::pair<std::string, std::string>> aux;  // the dataset's auxiliary data: name, text
  std::vector<Zone> zones;
  bool big_endian = false;        // (read) the writer's byte order
  std::int64_t data_section = 0;  // the first zone's entry
  std::int64_t end = 0;           // the last entry's end
};

// The dataset auxiliary record in which anabranch's writers say how many frames the file
// holds (its text 20 digits: the header's size does not depend on it): 0 when the first
// frame's zones hold only the grid or mesh, their variables never written.
constexpr const char* kFramesAux = "anabranch.frames";
std::string frames_text(std::int64_t frames);
// The frames a file says it holds (kFramesAux), -1 when it does not say.
std::int64_t frames_said(const File& f);

// The header section (version 112) for f's title, variables and zones, ending with the
// end-of-header marker, little-endian. Padded to `size` bytes (0: no padding) with a dataset
// auxiliary record "padding" (readers keep or skip it; some refuse Tecplot's user records):
// `size` is header_bytes(f) or at least kPaddingBytes more, by a multiple of 4. Throws
// UsageError naming the zone for a size past Tecplot's 32-bit counts.
constexpr std::int64_t kPaddingBytes = 4 + 4 * 8 + 4 + 4;  // marker, "padding", format, ""
std::string header(const File& f, std::int64_t size = 0);
std::int64_t header_bytes(const File& f);
// A zone's header record's bytes (what header() adds a zone).
std::int64_t zone_header_bytes(const Zone& z);

// A zone's data entry: the bytes before its values (marker, formats, flags, sharing, the
// min/max pairs of the variables it holds), and the whole entry (values and connectivity).
std::int64_t entry_head_bytes(const Zone& z);
std::int64_t entry_bytes(const Zone& z);
// The entry's head with the min/max of each variable it holds, in variable order.
std::string entry_head(const Zone& z, const std::vector<std::pair<double, double>>& minmax);

// A file's header and every zone's entry (the entries' first words, not their values): the
// places of every zone's values. version 112 and 191 headers. Throws FormatError naming the
// file, the zone and the byte for what does not read as Tecplot's binary format, or past
// its end; UsageError-free: what is read but not supported (polyhedral zones, ...) is left
// for the caller to refuse (the zone's type and formats say it).
File read(const ByteSource& in);
// True when the first bytes are a binary Tecplot file's ("#!TDV").
bool is_tecplot(const ByteSource& in);

}  // namespace anabranch::tecplot
