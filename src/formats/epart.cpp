#include "formats/epart.hpp"

#include <charconv>

#include "core/error.hpp"
#include "core/io.hpp"

namespace anabranch::epart {

std::string file_name(const std::string& dir, const std::string& name, int nparts) {
  return dir + "/" + name + ".epart." + std::to_string(nparts);
}

void write(const std::string& path, const std::vector<std::int32_t>& epart) {
  AtomicFileSink sink(path, 1u << 20);
  char line[16];
  for (std::int32_t p : epart) {
    auto [end, ec] = std::to_chars(line, line + sizeof line - 1, p);
    *end++ = '\n';
    sink.write(line, static_cast<std::size_t>(end - line));
  }
  sink.commit();
}

namespace {

// Reads a partition file, calling take(element, part) for each line.
template <class Take>
void scan(const std::string& path, int nparts, std::int64_t nelem, Take&& take) {
  FileSource src(path);
  std::vector<char> buf(1u << 20);
  std::int64_t element = 0, value = 0, line_start = 0;
  enum { Before, In, After } state = Before;  // where on the line: before, in or after its number
  auto bad = [&](std::int64_t at, const std::string& what) {
    return FormatError(path, "line " + std::to_string(element + 1), at, what);
  };
  auto end_line = [&](std::int64_t at) {
    if (state == Before) throw bad(line_start, "no part number");
    if (value >= nparts) throw bad(line_start, "part " + std::to_string(value) + " outside 0.." + std::to_string(nparts - 1));
    if (element >= nelem) throw bad(line_start, "more lines than the geometry's " + std::to_string(nelem) + " elements");
    take(element, static_cast<std::int32_t>(value));
    ++element;
    value = 0;
    state = Before;
    line_start = at + 1;
  };
  for (std::int64_t at = 0; at < src.size();) {
    const auto n = static_cast<std::size_t>(std::min<std::int64_t>(static_cast<std::int64_t>(buf.size()), src.size() - at));
    src.read_at(at, buf.data(), n);
    for (std::size_t i = 0; i < n; ++i) {
      const char c = buf[i];
      const std::int64_t where = at + static_cast<std::int64_t>(i);
      if (c >= '0' && c <= '9') {
        if (state == After) throw bad(where, "more than one number on the line");
        value = value * 10 + (c - '0');
        if (value > 100000000) throw bad(line_start, "part number too large");
        state = In;
      } else if (c == '\n') {
        end_line(where);
      } else if (c == ' ' || c == '\t' || c == '\r') {
        if (state == In) state = After;
      } else {
        throw bad(where, std::string("unexpected character '") + c + "'");
      }
    }
    at += static_cast<std::int64_t>(n);
  }
  if (state != Before) end_line(src.size());
  if (element != nelem)
    throw FormatError(path, "line " + std::to_string(element + 1), src.size(),
                      "the file ends after " + std::to_string(element) + " elements; the geometry has " + std::to_string(nelem));
}

}  // namespace

std::vector<std::int64_t> elements_of(const std::string& path, int part, int nparts, std::int64_t nelem) {
  std::vector<std::int64_t> mine;
  scan(path, nparts, nelem, [&](std::int64_t e, std::int32_t p) {
    if (p == part) mine.push_back(e);
  });
  return mine;
}

std::vector<std::int32_t> read(const std::string& path, int nparts, std::int64_t nelem) {
  std::vector<std::int32_t> parts;
  parts.reserve(static_cast<std::size_t>(nelem));
  scan(path, nparts, nelem, [&](std::int64_t, std::int32_t p) { parts.push_back(p); });
  return parts;
}

}  // namespace anabranch::epart
