// File-name helpers shared by the commands.
#pragma once
#include <filesystem>
#include <string>
#include <system_error>

#include "core/error.hpp"

namespace anabranch::cli {

// "dir/mesh.slf" + ".cli" -> "dir/mesh.cli"; a name without extension gets it appended.
inline std::string replace_extension(const std::string& path, const std::string& ext) {
  const auto slash = path.find_last_of('/');
  const auto dot = path.find_last_of('.');
  if (dot == std::string::npos || (slash != std::string::npos && dot < slash)) return path + ext;
  return path.substr(0, dot) + ext;
}

// An output folder: made, with its parents, when it does not exist (as mkdir -p).
inline void make_folder(const std::string& path) {
  std::error_code ec;
  std::filesystem::create_directories(path, ec);
  if (ec) throw IoError("cannot create the output folder " + path + ": " + ec.message());
}

}  // namespace anabranch::cli
