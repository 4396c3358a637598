// TELEMAC boundary-conditions files (.cli): one text line per boundary node,
// LIHBOR LIUBOR LIVBOR HBOR UBOR VBOR AUBOR LITBOR TBOR ATBOR BTBOR N K [extra columns].
// Specification: docs/formats/boundary.md.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace anabranch::boundary {

struct Line {
  int lihbor = 2, liubor = 2, livbor = 2;  // codes: 2 wall, 4 free, 5 prescribed, 6 prescribed velocity
  double hbor = 0, ubor = 0, vbor = 0, aubor = 0;
  int litbor = 2;
  double tbor = 0, atbor = 0, btbor = 0;
  std::int64_t n = 0;  // N: mesh node number, 1-based
  std::int64_t k = 0;  // K: boundary point number or colour
  std::int64_t offset = -1;  // byte offset of the line in its file (-1: made in code)
  std::int64_t lineno = 0;   // line number in its file, 1-based
  std::string text;    // the line as read (without newline); empty for a line made in code or
                       // read without its text
  // Where columns 11 to 13 end in text and column 12 (N) begins: what rewrite() keeps and
  // errors name (a few words a line: every rank of the partitioner holds every line).
  std::size_t end11 = 0, begin12 = 0, end12 = 0, end13 = 0;
};

struct File {
  std::string path;
  std::vector<Line> lines;
};

// Reads a .cli file; throws FormatError naming the file, the line and its byte offset.
// keep_text false: the values only (rewrite() then writes a line as format_telemac does),
// for a reader that holds every line on every rank.
File read(const std::string& path, bool keep_text = true);
// Parses text (the whole file) named `path` in error messages.
File parse(const std::string& text, const std::string& path, bool keep_text = true);

// The line in TELEMAC's fixed Fortran format
// (1X,I2,1X,2(I1,1X),3(F24.12,1X),1X,F24.12,3X,I1,1X,3(F24.12,1X),I9,1X,I9), with node n and
// column 13 = k. This is what TELEMAC's partel writes.
std::string format_telemac(const Line& line, std::int64_t n, std::int64_t k);

// The line as the user wrote it, with only columns 12 (N) and 13 (K) replaced; every other
// column, its spacing and its number formatting kept. Lines made in code use
// format_telemac.
std::string rewrite(const Line& line, std::int64_t n, std::int64_t k);

// Checks every node number lies in 1..npoin and no node is listed twice; throws FormatError.
void validate(const File& file, std::int64_t npoin, const std::string& mesh_name);

// Writes lines (each without newline) to path through a temporary name.
void write(const std::string& path, const std::vector<std::string>& lines);

}  // namespace anabranch::boundary
