// Block files. Specification: docs/formats/blocks.md.
#include "formats/blocks.hpp"

#include <nlohmann/json.hpp>
#include <sstream>

#include "core/error.hpp"
#include "core/io.hpp"

namespace anabranch::blocks {
namespace {

File parse_json(const std::string& text, const std::string& name) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    throw FormatError(name, "JSON", static_cast<std::int64_t>(e.byte) - 1, "not valid JSON");
  }
  File f;
  if (!j.is_object() || !j.contains("blocks") || !j["blocks"].is_array())
    throw FormatError(name + ": expected an object with a \"blocks\" array");
  std::size_t k = 0;
  for (const auto& b : j["blocks"]) {
    ++k;
    const std::string where = name + ": block entry " + std::to_string(k);
    if (!b.is_object() || !b.contains("id") || !b["id"].is_number_integer()) throw FormatError(where + " has no integer \"id\"");
    Block blk;
    blk.id = b["id"].get<std::int64_t>();
    if (b.contains("cells")) {
      const auto& c = b["cells"];
      if (!c.is_array() || c.size() != 3) throw FormatError(where + ": \"cells\" must be [ni, nj, nk]");
      for (std::size_t a = 0; a < 3; ++a) {
        if (!c[a].is_number_integer() || c[a].get<std::int64_t>() < 0)
          throw FormatError(where + ": \"cells\" must hold three non-negative integers");
        blk.cells[a] = c[a].get<std::int64_t>();
      }
      blk.weight = static_cast<double>(blk.cells[0]) * static_cast<double>(blk.cells[1]) * static_cast<double>(blk.cells[2]);
      if (blk.weight == 0) blk.cells = {0, 0, 0};
    } else if (b.contains("weight")) {
      if (!b["weight"].is_number() || b["weight"].get<double>() < 0) throw FormatError(where + ": \"weight\" must be a non-negative number");
      blk.weight = b["weight"].get<double>();
    } else {
      throw FormatError(where + " has neither \"cells\" nor \"weight\"");
    }
    f.blocks.push_back(blk);
  }
  if (j.contains("faces")) {
    if (!j["faces"].is_array()) throw FormatError(name + ": \"faces\" must be an array");
    k = 0;
    for (const auto& x : j["faces"]) {
      ++k;
      const std::string where = name + ": face entry " + std::to_string(k);
      if (!x.is_object() || !x.contains("a") || !x.contains("b") || !x.contains("cells") || !x["a"].is_number_integer() ||
          !x["b"].is_number_integer() || !x["cells"].is_number())
        throw FormatError(where + " needs integer \"a\", \"b\" and a number \"cells\"");
      f.faces.push_back({x["a"].get<std::int64_t>(), x["b"].get<std::int64_t>(), x["cells"].get<double>()});
    }
  }
  return f;
}

File parse_text(const std::string& text, const std::string& name) {
  File f;
  std::istringstream in(text);
  std::string line;
  std::int64_t lineno = 0;
  while (std::getline(in, line)) {
    ++lineno;
    const auto hash = line.find('#');
    if (hash != std::string::npos) line.resize(hash);
    std::istringstream ls(line);
    std::vector<std::string> tok;
    for (std::string t; ls >> t;) tok.push_back(t);
    if (tok.empty()) continue;
    const std::string where = name + ": line " + std::to_string(lineno);
    try {
      std::size_t used = 0;
      Block b;
      b.id = std::stoll(tok[0], &used);
      if (used != tok[0].size()) throw std::invalid_argument("id");
      if (tok.size() == 4) {
        for (std::size_t a = 0; a < 3; ++a) {
          b.cells[a] = std::stoll(tok[a + 1], &used);
          if (used != tok[a + 1].size() || b.cells[a] < 0) throw std::invalid_argument("cells");
        }
        b.weight = static_cast<double>(b.cells[0]) * static_cast<double>(b.cells[1]) * static_cast<double>(b.cells[2]);
        if (b.weight == 0) b.cells = {0, 0, 0};
      } else if (tok.size() == 2) {
        b.weight = std::stod(tok[1], &used);
        if (used != tok[1].size() || b.weight < 0) throw std::invalid_argument("weight");
      } else {
        throw FormatError(where + ": expected \"id ni nj nk\" or \"id weight\", found " + std::to_string(tok.size()) + " fields");
      }
      f.blocks.push_back(b);
    } catch (const std::logic_error&) {
      throw FormatError(where + ": \"" + line + "\" is not \"id ni nj nk\" or \"id weight\" with non-negative numbers");
    }
  }
  return f;
}

}  // namespace

File parse(const std::string& text, const std::string& name) {
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first != std::string::npos && text[first] == '{') return parse_json(text, name);
  return parse_text(text, name);
}

File read(const std::string& path) {
  return parse(read_text_file(path), path);
}

}  // namespace anabranch::blocks
