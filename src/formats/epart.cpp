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

Share read_share(const std::string& path, std::int64_t begin, std::int64_t end, int nparts) {
  FileSource src(path);
  Share share;
  end = std::min(end, src.size());
  if (begin >= end) {
    share.first_byte = end;
    return share;
  }
  std::vector<char> buf(1u << 16);
  std::int64_t at = begin;  // the first line starting at or after begin
  if (begin > 0) {
    char c = 0;
    src.read_at(begin - 1, &c, 1);
    while (c != '\n' && at < src.size()) src.read_at(at++, &c, 1);  // rare: a line's few bytes
  }
  share.first_byte = at;
  if (at >= end) return share;  // no line starts in the share
  std::int64_t value = 0, line_start = at;
  enum { Before, In, After } state = Before;
  auto bad = [&](std::int64_t where, const std::string& what) {
    if (share.bad_line < 0) {
      share.bad_line = static_cast<std::int64_t>(share.parts.size());
      share.bad_at = where;
      share.bad_what = what;
    }
  };
  auto end_line = [&](std::int64_t where) {
    if (state == Before)
      bad(line_start, "no part number");
    else if (value >= nparts)
      bad(line_start, "part " + std::to_string(value) + " outside 0.." + std::to_string(nparts - 1));
    share.parts.push_back(static_cast<std::int32_t>(std::min<std::int64_t>(value, nparts - 1)));
    value = 0;
    state = Before;
    line_start = where + 1;
  };
  // Lines starting before `end`, each read to its newline (or the file's end).
  bool done = false;
  while (!done && at < src.size()) {
    const auto n = static_cast<std::size_t>(std::min<std::int64_t>(static_cast<std::int64_t>(buf.size()), src.size() - at));
    src.read_at(at, buf.data(), n);
    for (std::size_t i = 0; i < n && !done; ++i) {
      const char c = buf[i];
      const std::int64_t where = at + static_cast<std::int64_t>(i);
      if (c >= '0' && c <= '9') {
        if (state == After) bad(where, "more than one number on the line");
        if (value <= 100000000) value = value * 10 + (c - '0');
        if (value > 100000000) bad(line_start, "part number too large");
        state = In;
      } else if (c == '\n') {
        end_line(where);
        done = line_start >= end;
      } else if (c == ' ' || c == '\t' || c == '\r') {
        if (state == In) state = After;
      } else {
        bad(where, std::string("unexpected character '") + c + "'");
        state = After;
      }
    }
    at += static_cast<std::int64_t>(n);
  }
  if (!done && state != Before) end_line(src.size());  // the file's last line, without its newline
  return share;
}

std::int64_t line_offset(const std::string& path, std::int64_t from, std::int64_t k) {
  FileSource src(path);
  std::vector<char> buf(1u << 16);
  for (std::int64_t at = from; k > 0 && at < src.size();) {
    const auto n = static_cast<std::size_t>(std::min<std::int64_t>(static_cast<std::int64_t>(buf.size()), src.size() - at));
    src.read_at(at, buf.data(), n);
    for (std::size_t i = 0; i < n; ++i)
      if (buf[i] == '\n' && --k == 0) return at + static_cast<std::int64_t>(i) + 1;
    at += static_cast<std::int64_t>(n);
  }
  return k == 0 ? from : src.size();
}

std::vector<std::int32_t> read(const std::string& path, int nparts, std::int64_t nelem) {
  std::vector<std::int32_t> parts;
  parts.reserve(static_cast<std::size_t>(nelem));
  scan(path, nparts, nelem, [&](std::int64_t, std::int32_t p) { parts.push_back(p); });
  return parts;
}

}  // namespace anabranch::epart
