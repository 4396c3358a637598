// anabranch-cgns: CGNS files read by CGNS's own library, for `anabranch convert`, `info` and
// `balance`, in a process of its own: what anabranch's engine does not read in place (ADF
// files, cell-centred solutions, rind planes, chunked or compressed arrays: h5/cgns_files.hpp;
// the engine writes CGNS itself, layouts/block_io.cpp). Debian's libcgns is built on the
// serial HDF5 library; anabranch links the parallel one, and the two cannot share a process.
// The command line talks to this program through a pipe, in a block stream:
//   "ABBLKS1\n", uint64 n, n bytes of JSON {"blocks": [[id, ni, nj, nk], ...],
//   "variables": [...], "times": [...], "grid": true|false}, then the grid (every block's
//   x, y, z) when given, then every frame: every block, every variable; float64,
//   little-endian, Fortran order.
//
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
#include <cstring>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
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

void write_exact(const void* p, std::size_t n) {
  if (n && std::fwrite(p, 1, n, stdout) != n) throw Failure("cannot write the block stream");
}


// The caller's own names, kept beside the SIDS ones so that a file read back names its
// variables as they were written.
constexpr const char* kNamesDescriptor = "anabranch_variables";

struct Zone {
  int base, index;
  std::string name;
  std::int64_t dims[3];
  int ordinal;
  std::string base_name;
  int phys_dim;
};

// A zone's coordinates: those beyond its base's physical dimension read as zeros; one within
// it missing is refused, naming the node (the zones' sizes alone need none: `balance`).
void check_coordinates(int fn, const Zone& z) {
  const std::string where = z.base_name + "/" + z.name;
  int nc = 0;
  cg(cg_ncoords(fn, z.base, z.index, &nc), "cg_ncoords");
  if (nc == 0) throw Failure(g_path + ": " + where + " has no GridCoordinates");
  std::set<std::string> names;
  for (int c = 1; c <= nc; ++c) {
    CGNS_ENUMT(DataType_t) t;
    char cn[33];
    cg(cg_coord_info(fn, z.base, z.index, c, &t, cn), "cg_coord_info");
    names.insert(cn);
  }
  for (int a = 0; a < std::min(z.phys_dim, 3); ++a) {
    const std::string want = std::string("Coordinate") + "XYZ"[a];
    if (!names.count(want)) throw Failure(g_path + ": " + where + "/GridCoordinates has no " + want);
  }
}

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
    Zone z{B, Z, name, {size[0], cell_dim > 1 ? size[1] : 1, cell_dim > 2 ? size[2] : 1}, ordinal, base, phys_dim};
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
  for (const auto& z : zones) check_coordinates(fn, z);
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
  if (mode != "read" && mode != "blocks" && mode != "describe") {
    std::fprintf(stderr, "usage: anabranch-cgns read IN.cgns > stream | blocks IN.cgns | describe IN.cgns\n");
    return 2;
  }
  try {
    return read_cgns(argv[2], mode);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "anabranch-cgns: error: %s\n", e.what());
    return 1;
  }
}
