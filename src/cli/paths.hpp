// File-name helpers shared by the commands.
#pragma once
#include <cctype>
#include <string>

namespace anabranch::cli {

// "dir/mesh.slf" + ".cli" -> "dir/mesh.cli"; a name without extension gets it appended.
inline std::string replace_extension(const std::string& path, const std::string& ext) {
  const auto slash = path.find_last_of('/');
  const auto dot = path.find_last_of('.');
  if (dot == std::string::npos || (slash != std::string::npos && dot < slash)) return path + ext;
  return path.substr(0, dot) + ext;
}

// Whether a name ends like an HDF5 file (.h5, .hdf, .hdf5, .vtkhdf; any case).
inline bool hdf5_name(const std::string& path) {
  std::string lower = path;
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (const std::string e : {".h5", ".hdf", ".hdf5", ".vtkhdf"})
    if (lower.size() >= e.size() && lower.compare(lower.size() - e.size(), e.size(), e) == 0) return true;
  return false;
}

}  // namespace anabranch::cli
