// File-name helpers shared by the commands.
#pragma once
#include <string>

namespace anabranch::cli {

// "dir/mesh.slf" + ".cli" -> "dir/mesh.cli"; a name without extension gets it appended.
inline std::string replace_extension(const std::string& path, const std::string& ext) {
  const auto slash = path.find_last_of('/');
  const auto dot = path.find_last_of('.');
  if (dot == std::string::npos || (slash != std::string::npos && dot < slash)) return path + ext;
  return path.substr(0, dot) + ext;
}

}  // namespace anabranch::cli
