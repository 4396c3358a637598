#include "h5/xdmf.hpp"

#include <unistd.h>

#include <cerrno>

#include "core/error.hpp"
#include "core/outputs.hpp"

namespace anabranch::pio::xdmf {

std::string escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default: out += c;
    }
  }
  return out;
}

void write_file(const std::string& xmf, const std::function<void(std::FILE*)>& body) {
  const std::string tmp = xmf + ".tmp." + std::to_string(::getpid());
  register_temporary(tmp);  // a signal while it is written removes it
  std::FILE* out = nullptr;
  {
    const CreatingTemporary creating;
    out = std::fopen(tmp.c_str(), "w");
  }
  if (!out) {
    const int e = errno;
    release_temporary(tmp);
    errno = e;
    throw IoError::from_errno("cannot create", tmp);
  }
  bool ok = false;
  try {
    std::fprintf(out, "<?xml version=\"1.0\" ?>\n<Xdmf Version=\"3.0\">\n <Domain>\n");
    body(out);
    std::fprintf(out, " </Domain>\n</Xdmf>\n");
    ok = std::fflush(out) == 0 && !std::ferror(out);
  } catch (...) {
    std::fclose(out);
    std::remove(tmp.c_str());
    release_temporary(tmp);
    throw;
  }
  const int e = errno;
  std::fclose(out);
  if (!ok || std::rename(tmp.c_str(), xmf.c_str()) != 0) {
    const int why = ok ? errno : e;
    std::remove(tmp.c_str());
    release_temporary(tmp);
    errno = why;
    throw IoError::from_errno("cannot write", xmf);
  }
  release_temporary(tmp);
}

void slice(std::FILE* out, int indent, const std::string& dims, int real_bytes, const std::string& file, const std::string& dataset,
           std::int64_t start, std::int64_t count, std::int64_t total, int columns) {
  const std::string where = escape(file + ":" + dataset);
  const char* number = real_bytes == 8 ? "8" : "4";
  const std::string shape = columns == 1 ? std::to_string(total) : std::to_string(total) + " " + std::to_string(columns);
  if (start == 0 && count == total && dims == shape) {  // the whole dataset, as it is shaped
    std::fprintf(out, "%*s<DataItem Dimensions=\"%s\" NumberType=\"Float\" Precision=\"%s\" Format=\"HDF\">%s</DataItem>\n", indent,
                 "", dims.c_str(), number, where.c_str());
    return;
  }
  const long long s = start, c = count, t = total, w = columns;
  std::string xdmf3, xdmf2;  // the selection as each library writes it
  char buf[256];
  if (columns == 1) {
    std::snprintf(buf, sizeof buf, "%lld:1:%lld:%lld", s, c, t);
    xdmf3 = buf;
    std::snprintf(buf, sizeof buf, "<DataItem Dimensions=\"3 1\" Format=\"XML\">%lld 1 %lld</DataItem>", s, c);
    xdmf2 = buf;
  } else {  // rows [start, start + count) of a total x columns dataset
    std::snprintf(buf, sizeof buf, "%lld 0:1 1:%lld %lld:%lld %lld", s, c, w, t, w);
    xdmf3 = buf;
    std::snprintf(buf, sizeof buf, "<DataItem Dimensions=\"3 2\" Format=\"XML\">%lld 0 1 1 %lld %lld</DataItem>", s, c, w);
    xdmf2 = buf;
  }
  // XDMF 3 reads the text before the children, XDMF 2 the children.
  std::fprintf(out,
               "%*s<DataItem Type=\"HyperSlab\" Dimensions=\"%s\" NumberType=\"Float\" Precision=\"%s\" Format=\"HDF\">%s|%s%s"
               "<DataItem Dimensions=\"%s\" NumberType=\"Float\" Precision=\"%s\" Format=\"HDF\">%s</DataItem></DataItem>\n",
               indent, "", dims.c_str(), number, where.c_str(), xdmf3.c_str(), xdmf2.c_str(), shape.c_str(), number, where.c_str());
}

}  // namespace anabranch::pio::xdmf
