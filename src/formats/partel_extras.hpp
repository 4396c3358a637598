// The case files partel v8 splits besides the mesh: control sections (T2DSEC), friction
// zones (T2DZFI) and weirs (T2DSEU, TYPE OF WEIRS = 2). Each becomes one text file per part,
// <name><suffix>, with partel's numbers and partel's bytes.
// Formats and rules: docs/formats/telemac-partitions.md.
#pragma once
#include <cstdint>
#include <functional>
#include <string>

#include "core/mesh.hpp"
#include "core/plan.hpp"

namespace anabranch::partel {

// A file split into parts: text(p) is part p's file (called concurrently for different parts).
struct PartText {
  std::string name;  // base name of the per-part files
  std::function<std::string(int)> text;
};

// Reads and checks the file now (one-line FormatError naming the file, the line and its
// byte offset); the parts are made later from the plan. ikle2: the 2D mesh, 1-based, 3 ints
// per triangle; x, y: its coordinates (only read here, not kept).
PartText control_sections(const std::string& path, const Plan& plan, const std::int32_t* ikle2, const Coordinates& x,
                          const Coordinates& y);
PartText friction_zones(const std::string& path, const Plan& plan);
PartText weirs(const std::string& path, const Plan& plan);

}  // namespace anabranch::partel
