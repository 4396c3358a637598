#include "blockformats/block_file.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>

namespace anabranch {

std::string BlockFileInfo::to_json() const {
  nlohmann::json j;
  j["path"] = path;
  j["format"] = format;
  nlohmann::json b = nlohmann::json::array();
  for (const auto& s : blocks) b.push_back({s.id, s.dims[0], s.dims[1], s.dims[2]});
  j["blocks"] = b;
  j["variables"] = variables;
  j["real_bytes"] = real_bytes;
  j["records"] = records;
  j["has_grid"] = has_grid;
  j["times"] = times;
  j["file_bytes"] = file_bytes;
  j["provenance"] = provenance;
  j["offsets"] = dataset_offsets;
  j["grid_offsets"] = grid_offsets;
  j["block_offsets"] = block_offsets;
  j["zones"] = zones;
  if (!compression.empty()) j["compression"] = compression;
  return j.dump();
}

BlockFileInfo BlockFileInfo::from_json(const std::string& text) {
  const auto j = nlohmann::json::parse(text);
  BlockFileInfo i;
  i.path = j["path"];
  i.format = j["format"];
  for (const auto& b : j["blocks"]) i.blocks.push_back({b[0].get<std::int64_t>(), {b[1].get<std::int64_t>(), b[2].get<std::int64_t>(), b[3].get<std::int64_t>()}});
  i.variables = j["variables"].get<std::vector<std::string>>();
  i.real_bytes = j["real_bytes"];
  i.records = j["records"];
  i.has_grid = j["has_grid"];
  i.times = j["times"].get<std::vector<double>>();
  i.file_bytes = j["file_bytes"];
  i.provenance = j["provenance"].get<std::map<std::string, std::string>>();
  i.dataset_offsets = j["offsets"].get<std::vector<std::int64_t>>();
  i.grid_offsets = j["grid_offsets"].get<std::vector<std::int64_t>>();
  if (j.contains("block_offsets")) i.block_offsets = j["block_offsets"].get<std::vector<std::int64_t>>();
  if (j.contains("zones")) i.zones = j["zones"].get<std::vector<std::string>>();
  if (j.contains("compression")) i.compression = j["compression"].get<std::string>();
  return i;
}

void BlockFileInfo::index() const {
  if (first_point_.size() == blocks.size() + 1) return;
  first_point_.assign(blocks.size() + 1, 0);
  raw_offset_.assign(blocks.size() + 1, 0);
  for (std::size_t b = 0; b < blocks.size(); ++b) {
    first_point_[b + 1] = first_point_[b] + blocks[b].points();
    raw_offset_[b + 1] = raw_offset_[b] + (blocks[b].points() * real_bytes + (records ? 8 : 0)) * nvar();
  }
}

std::int64_t BlockFileInfo::first_point(std::size_t b) const {
  index();
  return first_point_.at(b);
}

std::int64_t BlockFileInfo::value_offset(std::int64_t frame, std::size_t block, int var) const {
  index();
  if (!block_offsets.empty()) {
    const std::int64_t a = var < 0 ? -var - 1 : 3 + frame * nvar() + var;
    return block_offsets.at(static_cast<std::size_t>(a) * blocks.size() + block);
  }
  if (format != "raw") {  // hdf5, cgns: one dataset an array
    const std::int64_t base = var >= 0 ? dataset_offsets.at(static_cast<std::size_t>(frame * nvar() + var))
                                       : grid_offsets.at(static_cast<std::size_t>(-var - 1));
    return base + first_point_[block] * real_bytes;
  }
  const std::int64_t array = blocks[block].points() * real_bytes + (records ? 8 : 0);
  return frame * raw_offset_.back() + raw_offset_[block] + array * var + (records ? 4 : 0);
}

std::int64_t BlockFileInfo::frame_end(std::int64_t frame, bool grid) const {
  index();
  if (format == "raw") return (frame + 1) * raw_offset_.back();
  std::int64_t end = 0;
  const int n = grid ? 3 : nvar();
  if (!block_offsets.empty()) {
    for (int v = 0; v < n; ++v)
      for (std::size_t b = 0; b < blocks.size(); ++b)
        end = std::max(end, value_offset(frame, b, grid ? -(v + 1) : v) + blocks[b].points() * real_bytes);
    return end;
  }
  for (int v = 0; v < n; ++v)
    end = std::max(end, (grid ? grid_offsets.at(static_cast<std::size_t>(v)) : dataset_offsets.at(static_cast<std::size_t>(frame * nvar() + v))) +
                            first_point_.back() * real_bytes);
  return end;
}

}  // namespace anabranch
