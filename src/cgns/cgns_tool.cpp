// anabranch-cgns: the CGNS side of `anabranch convert` and `anabranch balance`, in a process
// of its own. Debian's libcgns is built on the serial HDF5 library; anabranch links the
// parallel one, and the two cannot share a process. The command line talks to this program
// through a pipe, in a block stream:
//   "ABBLKS1\n", uint64 n, n bytes of JSON {"blocks": [[id, ni, nj, nk], ...],
//   "variables": [...], "times": [...], "grid": true|false}, then the grid (every block's
//   x, y, z) when given, then every frame: every block, every variable; float64,
//   little-endian, Fortran order.
//
//   anabranch-cgns write OUT.cgns < stream    one structured Zone per block, the grid, a
//                                             FlowSolution per frame (vertex values), the
//                                             times in BaseIterativeData
//   anabranch-cgns read IN.cgns > stream      the mirror (structured zones, vertex solutions;
//                                             a file with cell-centred ones only: its zones'
//                                             cells, at their centres, and those solutions)
//   anabranch-cgns describe IN.cgns           JSON: the zones, variables, times, the location
//   anabranch-cgns blocks IN.cgns             JSON: the zones' dimensions and the faces
//                                             their 1-to-1 connectivity shares (balance's input)
// Errors: one line "anabranch-cgns: error: ..." naming the file, exit status 1.
#include <cgnslib.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <cctype>
#include <cstring>
#include <map>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

struct Failure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

std::string g_path;

void cg(int rc, const char* what) {
  if (rc != CG_OK) throw Failure(g_path + ": " + what + ": " + cg_get_error());
}

void read_exact(void* p, std::size_t n) {
  if (n && std::fread(p, 1, n, stdin) != n) throw Failure("the block stream ends early");
}
void write_exact(const void* p, std::size_t n) {
  if (n && std::fwrite(p, 1, n, stdout) != n) throw Failure("cannot write the block stream");
}

struct Header {
  std::vector<std::array<std::int64_t, 4>> blocks;
  std::vector<std::string> variables;
  std::vector<double> times;
  bool grid = false;
};

std::string zone_name(std::int64_t id) { return "block_" + std::to_string(id); }

// The SIDS name (CGNS's standard data-name identifiers) of a solver's variable, where its name
// says which it is (rho, u, p, rhou, nut...); other names stay as they are.
std::string sids_name(const std::string& name) {
  static const std::map<std::string, std::string> known = {
      {"rho", "Density"}, {"density", "Density"}, {"ro", "Density"}, {"r", "Density"},
      {"u", "VelocityX"}, {"vx", "VelocityX"}, {"velocityx", "VelocityX"}, {"velocity u", "VelocityX"},
      {"v", "VelocityY"}, {"vy", "VelocityY"}, {"velocityy", "VelocityY"}, {"velocity v", "VelocityY"},
      {"w", "VelocityZ"}, {"vz", "VelocityZ"}, {"velocityz", "VelocityZ"}, {"velocity w", "VelocityZ"},
      {"p", "Pressure"}, {"pressure", "Pressure"}, {"pres", "Pressure"},
      {"t", "Temperature"}, {"temperature", "Temperature"}, {"temp", "Temperature"},
      {"rhou", "MomentumX"}, {"rho_u", "MomentumX"}, {"ru", "MomentumX"}, {"momentumx", "MomentumX"},
      {"rhov", "MomentumY"}, {"rho_v", "MomentumY"}, {"rv", "MomentumY"}, {"momentumy", "MomentumY"},
      {"rhow", "MomentumZ"}, {"rho_w", "MomentumZ"}, {"rw", "MomentumZ"}, {"momentumz", "MomentumZ"},
      {"rhoe", "EnergyStagnationDensity"}, {"rho_e", "EnergyStagnationDensity"}, {"re", "EnergyStagnationDensity"},
      {"e", "EnergyStagnationDensity"}, {"rhoet", "EnergyStagnationDensity"},
      {"mach", "Mach"}, {"entropy", "Entropy"}, {"enthalpy", "Enthalpy"},
      {"nut", "ViscosityEddyKinematic"}, {"nu_t", "ViscosityEddyKinematic"}, {"mut", "ViscosityEddy"}, {"mu_t", "ViscosityEddy"},
      {"vist3d", "ViscosityEddy"}, {"k", "TurbulentEnergyKinetic"}, {"tke", "TurbulentEnergyKinetic"},
      {"epsilon", "TurbulentDissipation"}, {"omega", "TurbulentDissipationRate"}, {"nutilde", "TurbulentSANuTilde"}};
  std::string lower = name;
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  const auto it = known.find(lower);
  return it == known.end() ? name : it->second;
}

// The dimensional exponents (mass, length, time, temperature, angle) of a SIDS quantity;
// false for a name SIDS does not define (or a nondimensional one: Mach).
bool exponents_of(const std::string& sids, double out[5]) {
  static const std::map<std::string, std::array<double, 5>> table = {
      {"Density", {1, -3, 0, 0, 0}}, {"VelocityX", {0, 1, -1, 0, 0}}, {"VelocityY", {0, 1, -1, 0, 0}}, {"VelocityZ", {0, 1, -1, 0, 0}},
      {"Pressure", {1, -1, -2, 0, 0}}, {"Temperature", {0, 0, 0, 1, 0}}, {"MomentumX", {1, -2, -1, 0, 0}},
      {"MomentumY", {1, -2, -1, 0, 0}}, {"MomentumZ", {1, -2, -1, 0, 0}}, {"EnergyStagnationDensity", {1, -1, -2, 0, 0}},
      {"Entropy", {1, 2, -2, -1, 0}}, {"Enthalpy", {0, 2, -2, 0, 0}}, {"ViscosityEddyKinematic", {0, 2, -1, 0, 0}},
      {"ViscosityEddy", {1, -1, -1, 0, 0}}, {"TurbulentEnergyKinetic", {0, 2, -2, 0, 0}}, {"TurbulentDissipation", {0, 2, -3, 0, 0}},
      {"TurbulentDissipationRate", {0, 0, -1, 0, 0}}, {"TurbulentSANuTilde", {0, 2, -1, 0, 0}},
      {"CoordinateX", {0, 1, 0, 0, 0}}, {"CoordinateY", {0, 1, 0, 0, 0}}, {"CoordinateZ", {0, 1, 0, 0, 0}}};
  const auto it = table.find(sids);
  if (it == table.end()) return false;
  std::copy(it->second.begin(), it->second.end(), out);
  return true;
}

// At the node cg_goto went to: what the array's values are (exponents, or a nondimensional
// parameter); nothing for a name SIDS does not define.
void describe_array(const std::string& sids) {
  double e[5];
  if (sids == "Mach") {
    cg(cg_dataclass_write(CGNS_ENUMV(NondimensionalParameter)), "cg_dataclass_write");
  } else if (exponents_of(sids, e)) {
    cg(cg_exponents_write(CGNS_ENUMV(RealDouble), e), "cg_exponents_write");
  }
}

// The caller's own names, kept beside the SIDS ones so that a file read back names its
// variables as they were written.
constexpr const char* kNamesDescriptor = "anabranch_variables";

int write_cgns(const std::string& out) {
  char magic[8];
  read_exact(magic, 8);
  if (std::memcmp(magic, "ABBLKS1\n", 8) != 0) throw Failure("not a block stream on stdin");
  std::uint64_t n = 0;
  read_exact(&n, 8);
  std::string text(n, '\0');
  read_exact(text.data(), n);
  const auto j = nlohmann::json::parse(text);
  Header h;
  for (const auto& b : j["blocks"]) h.blocks.push_back({b[0].get<std::int64_t>(), b[1].get<std::int64_t>(), b[2].get<std::int64_t>(), b[3].get<std::int64_t>()});
  h.variables = j["variables"].get<std::vector<std::string>>();
  h.times = j["times"].get<std::vector<double>>();
  h.grid = j["grid"].get<bool>();
  const std::string tmp = out + ".tmp." + std::to_string(::getpid());
  g_path = out;
  int fn = 0;
  cg(cg_open(tmp.c_str(), CG_MODE_WRITE, &fn), "cannot create");
  try {
    // Volume blocks in "Base" (cell dimension 3); blocks one point thick in k in "Base2D"
    // (cell dimension 2: CGNS wants two points or more in every direction of a zone). The
    // zones keep the file's block order in their Ordinal.
    std::vector<std::string> fields;
    std::string joined;
    bool renamed = false;
    for (const auto& name : h.variables) {
      fields.push_back(sids_name(name));
      renamed = renamed || fields.back() != name;
      joined += (joined.empty() ? "" : "\n") + name;
    }
    int bases[2] = {0, 0};
    auto base_of = [&](bool flat) {
      int& b = bases[flat ? 1 : 0];
      if (b == 0) {
        cg(cg_base_write(fn, flat ? "Base2D" : "Base", flat ? 2 : 3, 3, &b), "cg_base_write");
        // Values in the solver's own units, which the file does not know: every array below
        // inherits this class.
        cg(cg_goto(fn, b, "end"), "cg_goto");
        cg(cg_dataclass_write(CGNS_ENUMV(NormalizedByUnknownDimensional)), "cg_dataclass_write");
        if (renamed) cg(cg_descriptor_write(kNamesDescriptor, joined.c_str()), "cg_descriptor_write");
      }
      return b;
    };
    struct Placed {
      int base, zone;
    };
    std::vector<Placed> placed;
    std::vector<double> v;
    std::int64_t first = 0;
    for (std::size_t k = 0; k < h.blocks.size(); ++k) {
      const auto& b = h.blocks[k];
      if (b[1] < 2 || b[2] < 2 || (b[3] < 2 && b[3] != 1))
        throw Failure(out + ": block " + std::to_string(b[0]) + " (" + std::to_string(b[1]) + " x " + std::to_string(b[2]) + " x " + std::to_string(b[3]) +
                      "): a CGNS zone has at least 2 points in i and j");
      const bool flat = b[3] == 1;
      const int B = base_of(flat);
      cgsize_t size[9] = {};
      if (flat) {
        const cgsize_t s2[6] = {static_cast<cgsize_t>(b[1]), static_cast<cgsize_t>(b[2]), static_cast<cgsize_t>(b[1] - 1), static_cast<cgsize_t>(b[2] - 1), 0, 0};
        std::copy(s2, s2 + 6, size);
      } else {
        const cgsize_t s3[9] = {static_cast<cgsize_t>(b[1]), static_cast<cgsize_t>(b[2]), static_cast<cgsize_t>(b[3]),
                                static_cast<cgsize_t>(b[1] - 1), static_cast<cgsize_t>(b[2] - 1), static_cast<cgsize_t>(b[3] - 1), 0, 0, 0};
        std::copy(s3, s3 + 9, size);
      }
      int Z = 0;
      cg(cg_zone_write(fn, B, zone_name(b[0]).c_str(), size, CGNS_ENUMV(Structured), &Z), "cg_zone_write");
      cg(cg_goto(fn, B, "Zone_t", Z, "end"), "cg_goto");
      cg(cg_ordinal_write(static_cast<int>(k + 1)), "cg_ordinal_write");
      placed.push_back({B, Z});
      const std::int64_t points = b[1] * b[2] * b[3];
      v.resize(static_cast<std::size_t>(points));
      for (int c = 0; c < 3; ++c) {
        if (h.grid) {
          read_exact(v.data(), v.size() * 8);
        } else {  // the index space, the blocks one after another along x
          for (std::int64_t p = 0; p < points; ++p) {
            const std::int64_t ijk[3] = {p % b[1], (p / b[1]) % b[2], p / (b[1] * b[2])};
            v[static_cast<std::size_t>(p)] = static_cast<double>(ijk[c] + (c == 0 ? first : 0));
          }
        }
        int C = 0;
        static const char* names[3] = {"CoordinateX", "CoordinateY", "CoordinateZ"};
        cg(cg_coord_write(fn, B, Z, CGNS_ENUMV(RealDouble), names[c], v.data(), &C), "cg_coord_write");
        cg(cg_goto(fn, B, "Zone_t", Z, "GridCoordinates_t", 1, "DataArray_t", C, "end"), "cg_goto");
        describe_array(names[c]);
      }
      first += points;
    }
    std::vector<std::vector<char>> pointers(h.blocks.size());
    for (std::size_t f = 0; f < h.times.size(); ++f) {
      char sol[33];
      std::snprintf(sol, sizeof sol, "FlowSolution%06zu", f);
      for (std::size_t b = 0; b < h.blocks.size(); ++b) {
        int S = 0;
        cg(cg_sol_write(fn, placed[b].base, placed[b].zone, sol, CGNS_ENUMV(Vertex), &S), "cg_sol_write");
        v.resize(static_cast<std::size_t>(h.blocks[b][1] * h.blocks[b][2] * h.blocks[b][3]));
        for (const auto& name : fields) {
          read_exact(v.data(), v.size() * 8);
          int F = 0;
          cg(cg_field_write(fn, placed[b].base, placed[b].zone, S, CGNS_ENUMV(RealDouble), name.c_str(), v.data(), &F), "cg_field_write");
          cg(cg_goto(fn, placed[b].base, "Zone_t", placed[b].zone, "FlowSolution_t", S, "DataArray_t", F, "end"), "cg_goto");
          describe_array(name);
        }
        std::string padded(sol);
        padded.resize(32, ' ');
        pointers[b].insert(pointers[b].end(), padded.begin(), padded.end());
      }
    }
    if (!h.times.empty()) {
      const int steps = static_cast<int>(h.times.size());
      for (int B : bases) {
        if (B == 0) continue;
        cg(cg_simulation_type_write(fn, B, CGNS_ENUMV(TimeAccurate)), "cg_simulation_type_write");
        cg(cg_biter_write(fn, B, "BaseIterativeData", steps), "cg_biter_write");
        cg(cg_goto(fn, B, "BaseIterativeData_t", 1, "end"), "cg_goto");
        cgsize_t dim = steps;
        cg(cg_array_write("TimeValues", CGNS_ENUMV(RealDouble), 1, &dim, h.times.data()), "cg_array_write");
      }
      for (std::size_t b = 0; b < h.blocks.size(); ++b) {
        cg(cg_ziter_write(fn, placed[b].base, placed[b].zone, "ZoneIterativeData"), "cg_ziter_write");
        cg(cg_goto(fn, placed[b].base, "Zone_t", placed[b].zone, "ZoneIterativeData_t", 1, "end"), "cg_goto");
        cgsize_t dims[2] = {32, steps};
        cg(cg_array_write("FlowSolutionPointers", CGNS_ENUMV(Character), 2, dims, pointers[b].data()), "cg_array_write");
      }
    }
    cg(cg_close(fn), "cannot close");
  } catch (...) {
    cg_close(fn);
    std::remove(tmp.c_str());
    throw;
  }
  if (std::rename(tmp.c_str(), out.c_str()) != 0) {
    std::remove(tmp.c_str());
    throw Failure("cannot rename " + tmp + " to " + out + ": " + std::strerror(errno));
  }
  return 0;
}

struct Zone {
  int base, index;
  std::string name;
  std::int64_t dims[3];
  int ordinal;
};

// The structured zones of every base, in their Ordinal's order (the file's block order),
// else in the file's.
std::vector<Zone> zones_of(int fn) {
  int nb = 0;
  cg(cg_nbases(fn, &nb), "cg_nbases");
  std::vector<Zone> out;
  for (int B = 1; B <= nb; ++B) {
  int nz = 0;
  cg(cg_nzones(fn, B, &nz), "cg_nzones");
  for (int Z = 1; Z <= nz; ++Z) {
    CGNS_ENUMT(ZoneType_t) type;
    cg(cg_zone_type(fn, B, Z, &type), "cg_zone_type");
    char name[33];
    cgsize_t size[9] = {};
    cg(cg_zone_read(fn, B, Z, name, size), "cg_zone_read");
    if (type != CGNS_ENUMV(Structured)) throw Failure(g_path + ": zone " + name + " is not structured (anabranch reads structured zones)");
    int cell_dim = 0, phys_dim = 0;
    char base[33];
    cg(cg_base_read(fn, B, base, &cell_dim, &phys_dim), "cg_base_read");
    int ordinal = static_cast<int>(out.size()) + 1;
    if (cg_goto(fn, B, "Zone_t", Z, "end") == CG_OK) {
      int o = 0;
      if (cg_ordinal_read(&o) == CG_OK && o > 0) ordinal = o;
    }
    Zone z{B, Z, name, {size[0], cell_dim > 1 ? size[1] : 1, cell_dim > 2 ? size[2] : 1}, ordinal};
    out.push_back(z);
  }
  }
  std::stable_sort(out.begin(), out.end(), [](const Zone& a, const Zone& b) { return a.ordinal < b.ordinal; });
  return out;
}

std::int64_t id_of(const Zone& z) {
  // "block_<id>" zones keep their id; others are numbered by position.
  if (z.name.rfind("block_", 0) == 0) {
    try {
      return std::stoll(z.name.substr(6));
    } catch (const std::exception&) {
    }
  }
  return z.index;
}

int read_cgns(const std::string& in, const std::string& mode) {
  g_path = in;
  int fn = 0, nb = 0;
  cg(cg_open(in.c_str(), CG_MODE_READ, &fn), "cannot open");
  cg(cg_nbases(fn, &nb), "cg_nbases");
  if (nb < 1) throw Failure(in + ": no CGNS base");
  const auto zones = zones_of(fn);
  const int B = zones.empty() ? 1 : zones[0].base;
  std::map<std::string, std::int64_t> ids;
  for (const auto& z : zones) ids[z.name] = id_of(z);
  if (mode == "blocks") {
    nlohmann::json j;
    nlohmann::json blocks = nlohmann::json::array(), faces = nlohmann::json::array();
    for (const auto& z : zones) blocks.push_back({{"id", id_of(z)}, {"cells", {z.dims[0], z.dims[1], z.dims[2]}}});
    for (const auto& z : zones) {
      int n = 0;
      cg(cg_n1to1(fn, z.base, z.index, &n), "cg_n1to1");
      for (int i = 1; i <= n; ++i) {
        char cname[33], donor[33];
        cgsize_t range[6], donor_range[6];
        int transform[3];
        cg(cg_1to1_read(fn, z.base, z.index, i, cname, donor, range, donor_range, transform), "cg_1to1_read");
        if (!ids.count(donor)) continue;
        const std::int64_t a = id_of(z), b = ids[donor];
        if (a >= b) continue;  // each face once (the donor lists it too)
        double cells = 1;  // the face's points, less one per spanned direction
        for (int d = 0; d < 3; ++d) {
          const std::int64_t span = std::abs(static_cast<std::int64_t>(range[d + 3] - range[d]));
          if (span > 0) cells *= static_cast<double>(span);
        }
        faces.push_back({{"a", a}, {"b", b}, {"cells", cells}});
      }
    }
    j["blocks"] = blocks;
    j["faces"] = faces;
    std::printf("%s\n", j.dump().c_str());
    cg_close(fn);
    return 0;
  }
  // Frames: the first zone's vertex solutions, in order; times from BaseIterativeData. A file
  // with no vertex solution gives its cell-centred ones (CFL3D writes those, with rind
  // cells): the blocks are then the zones' cells, their coordinates the cells' centres.
  int nsols = 0;
  std::vector<std::string> sols[2], variables;  // [0] vertex, [1] cell-centred
  if (!zones.empty()) {
    cg(cg_nsols(fn, B, zones[0].index, &nsols), "cg_nsols");
    for (int S = 1; S <= nsols; ++S) {
      char name[33];
      CGNS_ENUMT(GridLocation_t) loc;
      cg(cg_sol_info(fn, B, zones[0].index, S, name, &loc), "cg_sol_info");
      if (loc == CGNS_ENUMV(Vertex))
        sols[0].push_back(name);
      else if (loc == CGNS_ENUMV(CellCenter))
        sols[1].push_back(name);
    }
  }
  const bool cells = sols[0].empty() && !sols[1].empty();
  const auto& chosen = sols[cells ? 1 : 0];
  const std::size_t skipped = static_cast<std::size_t>(nsols) - chosen.size();
  if (!chosen.empty()) {
    int S = 0, nf = 0;
    for (int s = 1; s <= nsols && !S; ++s) {
      char name[33];
      CGNS_ENUMT(GridLocation_t) loc;
      cg(cg_sol_info(fn, B, zones[0].index, s, name, &loc), "cg_sol_info");
      if (chosen[0] == name) S = s;
    }
    cg(cg_nfields(fn, B, zones[0].index, S, &nf), "cg_nfields");
    for (int F = 1; F <= nf; ++F) {
      CGNS_ENUMT(DataType_t) type;
      char fname[33];
      cg(cg_field_info(fn, B, zones[0].index, S, F, &type, fname), "cg_field_info");
      variables.push_back(fname);
    }
  }
  // the size of a zone's frame arrays: its points, or its cells (one less where it spans)
  const auto frame_dims = [&](const Zone& z) {
    std::array<std::int64_t, 3> d{z.dims[0], z.dims[1], z.dims[2]};
    if (cells)
      for (auto& n : d) n = n > 1 ? n - 1 : 1;
    return d;
  };
  // The writer's own names, where it kept them beside the SIDS ones.
  std::vector<std::string> names = variables;
  if (cg_goto(fn, B, "end") == CG_OK) {
    int nd = 0;
    cg_ndescriptors(&nd);
    for (int D = 1; D <= nd; ++D) {
      char dname[33];
      char* text = nullptr;
      if (cg_descriptor_read(D, dname, &text) != CG_OK) continue;
      if (std::string(dname) == kNamesDescriptor) {
        std::vector<std::string> kept;
        std::string all(text), one;
        for (std::size_t at = 0; at <= all.size(); ++at)
          if (at == all.size() || all[at] == '\n') {
            kept.push_back(one);
            one.clear();
          } else {
            one += all[at];
          }
        if (kept.size() == variables.size()) names = kept;
      }
      cg_free(text);
    }
  }
  std::vector<double> times(chosen.size());
  for (std::size_t f = 0; f < times.size(); ++f) times[f] = static_cast<double>(f);
  char biter[33];
  int steps = 0;
  if (cg_biter_read(fn, B, biter, &steps) == CG_OK && steps == static_cast<int>(chosen.size()) &&
      cg_goto(fn, B, "BaseIterativeData_t", 1, "end") == CG_OK) {
    int na = 0;
    cg_narrays(&na);
    for (int A = 1; A <= na; ++A) {
      char aname[33];
      CGNS_ENUMT(DataType_t) type;
      int dd = 0;
      cgsize_t dv[12];
      if (cg_array_info(A, aname, &type, &dd, dv) == CG_OK && std::string(aname) == "TimeValues" && dd == 1 && dv[0] == steps)
        cg(cg_array_read_as(A, CGNS_ENUMV(RealDouble), times.data()), "cg_array_read_as");
    }
  }
  nlohmann::json j;
  nlohmann::json blocks = nlohmann::json::array();
  for (const auto& z : zones) {
    const auto d = frame_dims(z);
    blocks.push_back({id_of(z), d[0], d[1], d[2]});
  }
  j["blocks"] = blocks;
  j["variables"] = names;
  j["times"] = times;
  j["grid"] = true;
  if (mode == "describe") {  // what the file holds, without its values
    nlohmann::json zones_j = nlohmann::json::array();
    for (const auto& z : zones) {
      const auto d = frame_dims(z);
      zones_j.push_back({{"id", id_of(z)}, {"zone", z.name}, {"dims", {d[0], d[1], d[2]}}, {"points", {z.dims[0], z.dims[1], z.dims[2]}}});
    }
    j["blocks"] = zones_j;
    j["bases"] = nb;
    j["location"] = cells ? "CellCenter" : "Vertex";
    j["skipped_solutions"] = skipped;
    std::printf("%s\n", j.dump().c_str());
    cg_close(fn);
    return 0;
  }
  const std::string text = j.dump();
  write_exact("ABBLKS1\n", 8);
  const std::uint64_t n = text.size();
  write_exact(&n, 8);
  write_exact(text.data(), text.size());
  std::vector<double> v, c;
  for (const auto& z : zones) {
    cgsize_t rmin[3] = {1, 1, 1}, rmax[3] = {static_cast<cgsize_t>(z.dims[0]), static_cast<cgsize_t>(z.dims[1]), static_cast<cgsize_t>(z.dims[2])};
    v.resize(static_cast<std::size_t>(z.dims[0] * z.dims[1] * z.dims[2]));
    for (const char* name : {"CoordinateX", "CoordinateY", "CoordinateZ"}) {
      if (cg_coord_read(fn, z.base, z.index, name, CGNS_ENUMV(RealDouble), rmin, rmax, v.data()) != CG_OK) std::fill(v.begin(), v.end(), 0.0);
      if (!cells) {
        write_exact(v.data(), v.size() * 8);
        continue;
      }
      // a cell's centre: the mean of its corners (2, 4 or 8, as the zone spans 1 to 3 directions)
      const auto d = frame_dims(z);
      const std::int64_t step[3] = {z.dims[0] > 1, z.dims[1] > 1, z.dims[2] > 1};
      const double corners = static_cast<double>(1 << (step[0] + step[1] + step[2]));
      c.assign(static_cast<std::size_t>(d[0] * d[1] * d[2]), 0.0);
      for (std::int64_t k = 0, at = 0; k < d[2]; ++k)
        for (std::int64_t jj = 0; jj < d[1]; ++jj)
          for (std::int64_t i = 0; i < d[0]; ++i, ++at) {
            double sum = 0;
            for (std::int64_t dk = 0; dk <= step[2]; ++dk)
              for (std::int64_t dj = 0; dj <= step[1]; ++dj)
                for (std::int64_t di = 0; di <= step[0]; ++di)
                  sum += v[static_cast<std::size_t>(((k + dk) * z.dims[1] + jj + dj) * z.dims[0] + i + di)];
            c[static_cast<std::size_t>(at)] = sum / corners;
          }
      write_exact(c.data(), c.size() * 8);
    }
  }
  for (std::size_t f = 0; f < chosen.size(); ++f)
    for (const auto& z : zones) {
      int ns = 0, S = 0;
      cg(cg_nsols(fn, z.base, z.index, &ns), "cg_nsols");
      for (int s = 1; s <= ns; ++s) {
        char name[33];
        CGNS_ENUMT(GridLocation_t) loc;
        cg(cg_sol_info(fn, z.base, z.index, s, name, &loc), "cg_sol_info");
        if (chosen[f] == name) S = s;
      }
      if (S == 0) throw Failure(in + ": zone " + z.name + " has no solution " + chosen[f]);
      // the core points or cells (CGNS counts a solution's rind planes outside 1..n)
      const auto d = frame_dims(z);
      cgsize_t rmin[3] = {1, 1, 1}, rmax[3] = {static_cast<cgsize_t>(d[0]), static_cast<cgsize_t>(d[1]), static_cast<cgsize_t>(d[2])};
      v.resize(static_cast<std::size_t>(d[0] * d[1] * d[2]));
      for (const auto& name : variables) {
        cg(cg_field_read(fn, z.base, z.index, S, name.c_str(), CGNS_ENUMV(RealDouble), rmin, rmax, v.data()), ("cg_field_read " + name).c_str());
        write_exact(v.data(), v.size() * 8);
      }
    }
  std::fflush(stdout);
  cg_close(fn);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc == 3 ? argv[1] : "";
  if (mode != "write" && mode != "read" && mode != "blocks" && mode != "describe") {
    std::fprintf(stderr, "usage: anabranch-cgns write OUT.cgns < stream | read IN.cgns > stream | blocks IN.cgns | describe IN.cgns\n");
    return 2;
  }
  try {
    if (mode == "write") return write_cgns(argv[2]);
    return read_cgns(argv[2], mode);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "anabranch-cgns: error: %s\n", e.what());
    return 1;
  }
}
