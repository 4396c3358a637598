// Tecplot files of ordered zones as block files. See tecplot_blocks.hpp.
#include "blockformats/tecplot_blocks.hpp"

#include <cctype>
#include <set>

namespace anabranch::tecplot_blocks {
namespace {

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// A coordinate's name: "x", "coordinatex", "x [m]"...
bool coordinate(const std::string& name, char axis) {
  const std::string n = lower(name);
  return n == std::string(1, axis) || n == std::string("coordinate") + axis || n.rfind(std::string(1, axis) + " ", 0) == 0;
}

// Block ids from zone names "block N" (anabranch's), when every zone of a frame has one and
// they differ; else 1, 2, 3...
std::vector<std::int64_t> block_ids(const std::vector<tecplot::Zone>& zones, std::size_t nb) {
  std::vector<std::int64_t> ids;
  std::set<std::int64_t> seen;
  for (std::size_t b = 0; b < nb; ++b) {
    const std::string& n = zones[b].name;
    char* end = nullptr;
    const long long id = n.rfind("block ", 0) == 0 && n.size() > 6 ? std::strtoll(n.c_str() + 6, &end, 10) : -1;
    if (id < 0 || (end && *end) || !seen.insert(id).second) {
      ids.clear();
      for (std::size_t k = 0; k < nb; ++k) ids.push_back(static_cast<std::int64_t>(k + 1));
      return ids;
    }
    ids.push_back(id);
  }
  return ids;
}

}  // namespace

bool describe(const std::string& path, const tecplot::File& file, BlockFileInfo& info, std::string& why) {
  const auto& zones = file.zones;
  const auto zone = [&](std::size_t k) { return "zone " + std::to_string(k + 1) + " ('" + zones[k].name + "')"; };
  for (std::size_t k = 0; k < zones.size(); ++k)
    if (zones[k].type != tecplot::ZoneType::Ordered) {
      why = zone(k) + " is " + tecplot::zone_type_name(zones[k].type) + ": a multi-block file's zones are ORDERED";
      return false;
    }
  const auto& vars = file.variables;
  if (vars.size() < 3 || (coordinate(vars[0], 'x') && coordinate(vars[1], 'y') && !coordinate(vars[2], 'z'))) {
    why = "the variables (" + std::to_string(vars.size()) + ") do not begin with X, Y, Z: a 2-D file (anabranch's block files hold X, Y and Z)";
    return false;
  }
  if (file.big_endian) {
    why = "its values are big-endian (anabranch reads little-endian Tecplot files)";
    return false;
  }
  // The first frame's zones: until a strand comes again, or (static zones) the time changes.
  std::size_t nb = zones.size();
  std::set<std::int32_t> strands;
  for (std::size_t k = 0; k < zones.size() && nb == zones.size(); ++k) {
    const auto& z = zones[k];
    if (z.strand >= 0 ? !strands.insert(z.strand).second : z.time != zones[0].time) nb = k;
  }
  if (zones.size() % nb != 0) {
    why = std::to_string(zones.size()) + " zones are not whole frames of the first frame's " + std::to_string(nb) + " zones";
    return false;
  }
  int real_bytes = 0;
  for (std::size_t k = 0; k < zones.size(); ++k) {
    const auto& z = zones[k];
    const auto& first = zones[k % nb];
    if (z.imax != first.imax || z.jmax != first.jmax || z.kmax != first.kmax) {
      why = zone(k) + " is " + std::to_string(z.imax) + " x " + std::to_string(z.jmax) + " x " + std::to_string(z.kmax) + " where " +
            zone(k % nb) + ", the same block in the first frame, is " + std::to_string(first.imax) + " x " + std::to_string(first.jmax) +
            " x " + std::to_string(first.kmax);
      return false;
    }
    for (std::size_t v = 0; v < vars.size(); ++v) {
      if (k >= nb && v < 3) continue;  // the grid: the first frame's
      if (z.passive[v]) {
        why = zone(k) + ": variable '" + vars[v] + "' is passive (it has no values)";
        return false;
      }
      const int bytes = z.formats[v] == tecplot::Format::Double ? 8 : z.formats[v] == tecplot::Format::Float ? 4 : 0;
      if (bytes == 0 || (real_bytes != 0 && bytes != real_bytes)) {
        why = zone(k) + ": variable '" + vars[v] + "' is " +
              (bytes == 0 ? std::string("not FLOAT or DOUBLE") : "of another precision than the others (one precision a file)");
        return false;
      }
      real_bytes = bytes;
    }
  }
  info = {};
  info.path = path;
  info.format = "tecplot";
  info.real_bytes = real_bytes;
  info.variables.assign(vars.begin() + 3, vars.end());
  info.has_grid = true;
  const auto ids = block_ids(zones, nb);
  for (std::size_t b = 0; b < nb; ++b) {
    info.blocks.push_back({ids[b], {zones[b].imax, zones[b].jmax, zones[b].kmax}});
    info.zones.push_back(zones[b].name);
  }
  // anabranch's files say when the first frame's variables were never written
  const std::size_t frames = info.variables.empty() || tecplot::frames_said(file) == 0 ? 0 : zones.size() / nb;
  for (std::size_t f = 0; f < frames; ++f) info.times.push_back(zones[f * nb].time);
  info.block_offsets.assign((3 + frames * info.variables.size()) * nb, 0);
  for (std::size_t b = 0; b < nb; ++b)
    for (std::size_t c = 0; c < 3; ++c) info.block_offsets[c * nb + b] = zones[b].values_at[c];
  for (std::size_t f = 0; f < frames; ++f)
    for (std::size_t v = 0; v < info.variables.size(); ++v)
      for (std::size_t b = 0; b < nb; ++b) info.block_offsets[(3 + f * info.variables.size() + v) * nb + b] = zones[f * nb + b].values_at[3 + v];
  info.provenance["title"] = file.title;
  info.provenance["tecplot_version"] = std::to_string(file.version);
  return true;
}

}  // namespace anabranch::tecplot_blocks
