// Block files. Specification: docs/formats/blocks.md.
#include "blockformats/blocks.hpp"

#include <nlohmann/json.hpp>
#include <fstream>
#include <sstream>

#include "core/error.hpp"
#include "core/io.hpp"
#include "blockformats/plot3d.hpp"

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

Assignment parse_assignment(const std::string& text, const std::string& name) {
  const auto first = text.find_first_not_of(" \t\r\n");
  nlohmann::json j;
  if (first != std::string::npos && text[first] == '{') {
    try {
      j = nlohmann::json::parse(text);
    } catch (const nlohmann::json::parse_error& e) {
      throw FormatError(name, "JSON", static_cast<std::int64_t>(e.byte) - 1, "not valid JSON");
    }
  }
  Assignment a;
  if (!j.is_object() || !j.contains("assignment")) {  // a block file: every block whole, on process 0
    const File f = parse(text, name);
    for (const auto& b : f.blocks) {
      if (!b.has_cells()) throw FormatError(name + ": block " + std::to_string(b.id) + " has a weight but no dimensions (ni nj nk)");
      a.grid.push_back({b.id, b.cells});
      BlockPiece p;
      p.block = static_cast<std::int64_t>(a.grid.size() - 1);
      p.range = {{{0, b.cells[0]}, {0, b.cells[1]}, {0, b.cells[2]}}};
      a.pieces.push_back(p);
      a.process.push_back(0);
    }
    return a;
  }
  if (!j.contains("grid") || !j["grid"].is_array())
    throw FormatError(name + ": the balance report has no \"grid\" (its block file gave weights, not dimensions ni nj nk)");
  BlockLayout grid;
  std::size_t k = 0;
  for (const auto& b : j["grid"]) {
    ++k;
    const std::string where = name + ": grid entry " + std::to_string(k);
    if (!b.is_object() || !b.contains("id") || !b.contains("cells") || !b["cells"].is_array() || b["cells"].size() != 3)
      throw FormatError(where + " needs \"id\" and \"cells\": [ni, nj, nk]");
    BlockShape s;
    s.id = b["id"].get<std::int64_t>();
    for (std::size_t x = 0; x < 3; ++x) s.dims[x] = b["cells"][x].get<std::int64_t>();
    grid.blocks.push_back(s);
  }
  a.processes = j.value("processes", 1);
  k = 0;
  for (const auto& e : j["assignment"]) {
    ++k;
    const std::string where = name + ": assignment entry " + std::to_string(k);
    if (!e.is_object() || !e.contains("block") || !e.contains("process") || !e["process"].is_number_integer())
      throw FormatError(where + " needs \"block\" and \"process\"");
    BlockPiece p;
    std::size_t b = 0;
    try {
      b = grid.block_index(e["block"].get<std::int64_t>());
    } catch (const UsageError&) {
      throw FormatError(where + ": block " + e["block"].dump() + " is not in the grid");
    }
    p.block = static_cast<std::int64_t>(b);
    const auto& d = grid.blocks[b].dims;
    p.range = {{{0, d[0]}, {0, d[1]}, {0, d[2]}}};
    if (e.contains("range")) {
      const auto& r = e["range"];
      if (!r.is_array() || r.size() != 3) throw FormatError(where + ": \"range\" must be [[i0, i1], [j0, j1], [k0, k1]]");
      for (std::size_t x = 0; x < 3; ++x) {
        if (!r[x].is_array() || r[x].size() != 2) throw FormatError(where + ": \"range\" must be [[i0, i1], [j0, j1], [k0, k1]]");
        p.range[x] = {r[x][0].get<std::int64_t>(), r[x][1].get<std::int64_t>()};
      }
    }
    const int proc = e["process"].get<int>();
    if (proc < 0 || proc >= a.processes)
      throw FormatError(where + ": process " + std::to_string(proc) + " outside 0.." + std::to_string(a.processes - 1));
    a.pieces.push_back(p);
    a.process.push_back(proc);
  }
  a.grid = grid.blocks;
  return a;
}

Assignment read_assignment(const std::string& path) {
  if (plot3d::is_plot3d(path)) {  // every block whole, on process 0
    Assignment a;
    for (const auto& s : plot3d::read_header(path).blocks) {
      a.grid.push_back(s);
      a.pieces.push_back({static_cast<std::int64_t>(a.grid.size() - 1), {{{0, s.dims[0]}, {0, s.dims[1]}, {0, s.dims[2]}}}});
      a.process.push_back(0);
    }
    return a;
  }
  return parse_assignment(read_text_file(path), path);
}

BlockLayout layout_for_rank(const Assignment& a, int rank, const std::array<std::int64_t, 3>& halo) {
  BlockLayout l;
  l.blocks = a.grid;
  l.halo = halo;
  for (std::size_t p = 0; p < a.pieces.size(); ++p)
    if (a.process[p] == rank) l.pieces.push_back(a.pieces[p]);
  return l;
}

File read(const std::string& path) {
  // A PLOT3D grid, binary or formatted (its blocks' dimensions; PLOT3D names no shared
  // faces), told by its first bytes; otherwise JSON or the text list. A binary file that is
  // no PLOT3D grid gets the PLOT3D reader's error.
  bool binary = false;
  {
    std::ifstream in(path, std::ios::binary);
    unsigned char head[8] = {' ', ' ', ' ', ' ', ' ', ' ', ' ', ' '};
    in.read(reinterpret_cast<char*>(head), 8);
    for (const unsigned char c : head) binary = binary || (c < 32 && c != '\t' && c != '\n' && c != '\r') || c >= 127;
  }
  if (binary || plot3d::is_plot3d(path)) {
    File f;
    for (const auto& s : plot3d::read_header(path).blocks) {
      Block b;
      b.id = s.id;
      b.cells = s.dims;
      b.weight = static_cast<double>(s.points());
      f.blocks.push_back(b);
    }
    return f;
  }
  return parse(read_text_file(path), path);
}

}  // namespace anabranch::blocks
