#include "blockformats/block_raw.hpp"

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "core/io.hpp"

namespace anabranch::block_raw {

std::vector<std::int64_t> Description::block_offsets() const {
  std::vector<std::int64_t> off(blocks.size() + 1, 0);
  for (std::size_t b = 0; b < blocks.size(); ++b) off[b + 1] = off[b] + array_bytes(b) * nvar();
  return off;
}

std::string sidecar_path(const std::string& data_path) { return data_path + ".json"; }

void write_sidecar(const std::string& data_path, const Description& d) {
  nlohmann::json j;
  j["format"] = kFormat;
  j["version"] = 1;
  j["precision"] = d.real_bytes;
  j["byte_order"] = "little";
  j["records"] = d.records ? "fortran" : "none";
  j["variables"] = d.variables;
  const auto off = d.block_offsets();
  nlohmann::json blocks = nlohmann::json::array();
  for (std::size_t b = 0; b < d.blocks.size(); ++b)
    blocks.push_back({{"id", d.blocks[b].id}, {"dims", d.blocks[b].dims}, {"offset", off[b]}});
  j["blocks"] = blocks;
  j["frame_bytes"] = off.back();
  j["frames"] = d.times.size();
  j["times"] = d.times;
  j["provenance"] = d.provenance;
  const std::string path = sidecar_path(data_path), tmp = path + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream out(tmp);
    out << j.dump(1) << '\n';
    out.close();
    if (!out) {
      std::remove(tmp.c_str());
      throw IoError::from_errno("cannot write", path);
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    throw IoError::from_errno("cannot rename " + tmp + " to", path);
  }
}

Description read_sidecar(const std::string& data_path) {
  const std::string path = sidecar_path(data_path);
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(read_text_file(path));
  } catch (const nlohmann::json::parse_error& e) {
    throw FormatError(path, "JSON", static_cast<std::int64_t>(e.byte) - 1, "not valid JSON");
  }
  auto bad = [&](const std::string& what) { return FormatError(path + ": " + what); };
  if (!j.is_object() || j.value("format", "") != kFormat) throw bad(std::string("not a ") + kFormat + " description (\"format\")");
  Description d;
  try {
    d.real_bytes = j.at("precision").get<int>();
    if (d.real_bytes != 4 && d.real_bytes != 8) throw bad("\"precision\" must be 4 or 8");
    if (j.at("byte_order").get<std::string>() != "little") throw bad("only little-endian files are read (\"byte_order\")");
    const auto rec = j.at("records").get<std::string>();
    if (rec != "fortran" && rec != "none") throw bad("\"records\" must be \"fortran\" or \"none\"");
    d.records = rec == "fortran";
    d.variables = j.at("variables").get<std::vector<std::string>>();
    std::size_t k = 0;
    for (const auto& b : j.at("blocks")) {
      ++k;
      BlockShape s;
      s.id = b.at("id").get<std::int64_t>();
      const auto dims = b.at("dims").get<std::vector<std::int64_t>>();
      if (dims.size() != 3 || dims[0] < 1 || dims[1] < 1 || dims[2] < 1) throw bad("block entry " + std::to_string(k) + ": \"dims\" must be three positive integers");
      s.dims = {dims[0], dims[1], dims[2]};
      d.blocks.push_back(s);
    }
    d.times = j.at("times").get<std::vector<double>>();
    if (j.contains("provenance"))
      for (const auto& [key, v] : j["provenance"].items()) d.provenance[key] = v.is_string() ? v.get<std::string>() : v.dump();
    const auto off = d.block_offsets();
    k = 0;
    for (const auto& b : j.at("blocks")) {
      if (b.contains("offset") && b["offset"].get<std::int64_t>() != off[k])
        throw bad("block entry " + std::to_string(k + 1) + ": \"offset\" " + std::to_string(b["offset"].get<std::int64_t>()) +
                  " where the sizes before it give " + std::to_string(off[k]));
      ++k;
    }
    if (j.contains("frame_bytes") && j["frame_bytes"].get<std::int64_t>() != off.back())
      throw bad("\"frame_bytes\" " + std::to_string(j["frame_bytes"].get<std::int64_t>()) + " where the blocks give " + std::to_string(off.back()));
  } catch (const nlohmann::json::exception& e) {
    throw bad(std::string("missing or mistyped entry (") + e.what() + ")");
  }
  return d;
}

bool is_raw_blocks(const std::string& path) {
  std::ifstream in(sidecar_path(path));
  if (!in) return false;
  const std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  return text.find(std::string("\"") + kFormat + "\"") != std::string::npos;
}

}  // namespace anabranch::block_raw
