#include "core/error.hpp"

#include <cerrno>
#include <cstring>

namespace anabranch {

FormatError::FormatError(const std::string& file, const std::string& record, std::int64_t offset,
                         const std::string& what)
    : Error(file + ": " + record + " at byte " + std::to_string(offset) + ": " + what) {}

IoError IoError::from_errno(const std::string& what, const std::string& path) {
  return IoError(what + " " + path + ": " + std::strerror(errno));
}

}  // namespace anabranch
