#include "parallel/hints.hpp"

#include <cstdlib>
#include <stdexcept>

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
      if (eq == std::string::npos || eq == 0) throw UsageError("option '" + pair + "' is not key=value");
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

Hints parse_options(const std::string& text, const std::function<bool(const std::string&, const std::string&)>& take) {
  const Hints all = Hints::parse(text);
  Hints hints;
  for (const auto& [k, v] : all.entries())
    if (!take(k, v)) hints.set(k, v);
  return hints;
}

std::int64_t option_number(const std::string& key, const std::string& value, std::int64_t least, bool auto_ok) {
  if (auto_ok && value == "auto") return 0;
  std::int64_t x = 0;
  try {
    std::size_t used = 0;
    x = std::stoll(value, &used);
    if (used != value.size()) throw std::invalid_argument(value);
  } catch (const std::exception&) {
    throw UsageError("option " + key + "=" + value + ": not a number" + (auto_ok ? " (or auto)" : ""));
  }
  if (x < least) throw UsageError("option " + key + "=" + value + ": at least " + std::to_string(least));
  return x;
}

bool option_flag(const std::string& key, const std::string& value) {
  if (value == "1" || value == "true" || value == "yes") return true;
  if (value == "0" || value == "false" || value == "no") return false;
  throw UsageError("option " + key + "=" + value + ": expected 1 or 0");
}

}  // namespace anabranch::pio
