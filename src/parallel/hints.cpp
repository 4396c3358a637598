#include "parallel/hints.hpp"

#include <cstdlib>

#include "core/error.hpp"

namespace anabranch::pio {

Hints Hints::parse(const std::string& text) {
  Hints h;
  std::size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && (text[i] == ',' || text[i] == ' ')) ++i;
    std::size_t j = i;
    while (j < text.size() && text[j] != ',' && text[j] != ' ') ++j;
    if (j > i) {
      std::string pair = text.substr(i, j - i);
      auto eq = pair.find('=');
      if (eq == std::string::npos || eq == 0) throw UsageError("MPI-IO hint '" + pair + "' is not key=value");
      h.entries_[pair.substr(0, eq)] = pair.substr(eq + 1);
    }
    i = j;
  }
  return h;
}

Hints Hints::from_environment() {
  const char* env = std::getenv("ANABRANCH_MPIIO_HINTS");
  return env ? parse(env) : Hints{};
}

void Hints::merge(const Hints& other) {
  for (const auto& [k, v] : other.entries_) entries_[k] = v;
}

MPI_Info Hints::to_info() const {
  if (entries_.empty()) return MPI_INFO_NULL;
  MPI_Info info;
  MPI_Info_create(&info);
  for (const auto& [k, v] : entries_) MPI_Info_set(info, k.c_str(), v.c_str());
  return info;
}

std::string Hints::str() const {
  std::string s;
  for (const auto& [k, v] : entries_) s += (s.empty() ? "" : ",") + k + "=" + v;
  return s;
}

}  // namespace anabranch::pio
