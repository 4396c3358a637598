#include "grid/generate.hpp"

#include <algorithm>
#include <cmath>

#include "core/error.hpp"

namespace anabranch {
namespace {

constexpr double kPi = 3.14159265358979323846;

// SplitMix64: a fixed, portable hash, so meshes do not depend on the standard library.
std::uint64_t mix(std::uint64_t z) {
  z += 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// Uniform in [-1, 1) from the seed and two indices.
double unit(std::uint64_t seed, std::uint64_t a, std::uint64_t b, std::uint64_t salt) {
  std::uint64_t h = mix(seed ^ mix(a * 0x100000001b3ULL + salt) ^ mix(b + 0x632be59bd9b4e019ULL));
  return static_cast<double>(h >> 11) / 4503599627370496.0 - 1.0;  // 2^52
}

double bottom_at(double x, double y) {
  return -8.0 - 4.0 * std::cos(y / 900.0) * std::cos(y / 900.0) + 1.5 * std::sin(x / 800.0) * std::cos(y / 500.0) -
         2.0e-4 * x;
}

double surface_at(double x, double y, double t) {
  return 0.5 * std::sin(2.0 * kPi * (x / 3000.0 - t / 600.0)) * std::exp(-y * y / 4.0e7) + 0.1 * std::cos(y / 700.0);
}

}  // namespace

ChannelMesh make_channel(const ChannelOptions& o) {
  if (o.elements < 2) throw UsageError("generate: at least 2 elements are needed");
  if (o.planes < 1) throw UsageError("generate: planes must be at least 1");
  const double aspect = o.length / o.width;
  int ny = std::max(1, static_cast<int>(std::lround(std::sqrt(static_cast<double>(o.elements) / (2.0 * aspect)))));
  // Two rows would leave the inlet and the outlet one liquid point each, between two walls,
  // which TELEMAC (and partition) refuse: three rows instead.
  if (ny == 2) ny = 3;
  int nx = std::max(1, static_cast<int>(std::lround(static_cast<double>(o.elements) / (2.0 * ny))));
  const std::int64_t n2 = static_cast<std::int64_t>(nx + 1) * (ny + 1);
  const std::int64_t e2 = 2LL * nx * ny;
  const int planes = o.planes;
  if (n2 * planes > 2000000000LL || e2 * std::max(1, planes - 1) * (planes > 1 ? 6 : 3) > 4000000000LL)
    throw UsageError("generate: mesh too large for 32-bit node numbers");

  ChannelMesh cm;
  cm.nx = nx;
  cm.ny = ny;
  Mesh& m = cm.mesh;
  m.nplan = planes;
  m.npoin = n2 * planes;
  m.ndp = planes > 1 ? 6 : 3;
  m.nelem = planes > 1 ? e2 * (planes - 1) : e2;
  m.x.resize(static_cast<std::size_t>(m.npoin));
  m.y.resize(static_cast<std::size_t>(m.npoin));
  m.ipobo.assign(static_cast<std::size_t>(m.npoin), 0);
  m.ikle.resize(static_cast<std::size_t>(m.nelem * m.ndp));

  const double dx = o.length / nx, dy = o.width / ny;
  auto id = [ny](int i, int j) { return static_cast<std::int32_t>(static_cast<std::int64_t>(i) * (ny + 1) + j + 1); };
  for (int i = 0; i <= nx; ++i) {
    for (int j = 0; j <= ny; ++j) {
      double x = i * dx, y = j * dy - 0.5 * o.width;
      if (i > 0 && i < nx) x += 0.2 * dx * unit(o.seed, static_cast<std::uint64_t>(i), static_cast<std::uint64_t>(j), 1);
      if (j > 0 && j < ny) y += 0.2 * dy * unit(o.seed, static_cast<std::uint64_t>(i), static_cast<std::uint64_t>(j), 2);
      y += 0.3 * o.width * std::sin(2.0 * kPi * x / (0.5 * o.length));  // meander
      const std::size_t k = static_cast<std::size_t>(id(i, j) - 1);
      m.x[k] = x;
      m.y[k] = y;
    }
  }
  // Each cell split along a random diagonal: counter-clockwise triangles.
  std::vector<std::int32_t> tri(static_cast<std::size_t>(e2 * 3));
  std::size_t t = 0;
  for (int i = 0; i < nx; ++i) {
    for (int j = 0; j < ny; ++j) {
      const std::int32_t a = id(i, j), b = id(i + 1, j), c = id(i + 1, j + 1), d = id(i, j + 1);
      if (unit(o.seed, static_cast<std::uint64_t>(i), static_cast<std::uint64_t>(j), 3) < 0) {
        for (std::int32_t v : {a, b, c, a, c, d}) tri[t++] = v;
      } else {
        for (std::int32_t v : {a, b, d, b, c, d}) tri[t++] = v;
      }
    }
  }
  if (planes == 1) {
    m.ikle = std::move(tri);
  } else {
    std::size_t k = 0;
    for (int l = 0; l + 1 < planes; ++l) {
      const std::int32_t lo = static_cast<std::int32_t>(l * n2), hi = static_cast<std::int32_t>((l + 1) * n2);
      for (std::int64_t e = 0; e < e2; ++e) {
        for (int v = 0; v < 3; ++v) m.ikle[k++] = tri[static_cast<std::size_t>(3 * e + v)] + lo;
        for (int v = 0; v < 3; ++v) m.ikle[k++] = tri[static_cast<std::size_t>(3 * e + v)] + hi;
      }
    }
    for (int p = 1; p < planes; ++p) {
      std::copy(m.x.begin(), m.x.begin() + n2, m.x.begin() + p * n2);
      std::copy(m.y.begin(), m.y.begin() + n2, m.y.begin() + p * n2);
    }
  }
  // Contour, counter-clockwise from the upstream bottom corner: bottom bank, outlet, top
  // bank, inlet. Corners are walls.
  auto& bnd = cm.boundary;
  for (int i = 0; i <= nx; ++i) bnd.push_back({id(i, 0), BoundaryKind::Wall});
  for (int j = 1; j <= ny; ++j) bnd.push_back({id(nx, j), j < ny ? BoundaryKind::Outflow : BoundaryKind::Wall});
  for (int i = nx - 1; i >= 0; --i) bnd.push_back({id(i, ny), BoundaryKind::Wall});
  for (int j = ny - 1; j >= 1; --j) bnd.push_back({id(0, j), BoundaryKind::Inflow});
  // IPOBO: the boundary number; in 3D the lateral nodes of plane p are numbered after
  // those of the planes below (as TELEMAC-3D writes it).
  const auto nptfr = static_cast<std::int64_t>(bnd.size());
  for (int p = 0; p < planes; ++p)
    for (std::int64_t k = 0; k < nptfr; ++k)
      m.ipobo[static_cast<std::size_t>(bnd[static_cast<std::size_t>(k)].node - 1 + p * n2)] =
          static_cast<std::int32_t>(k + 1 + p * nptfr);
  return cm;
}

std::vector<Variable> synthetic_variables(int count, bool three_d) {
  static const Variable v2[] = {{"VELOCITY U", "M/S"}, {"VELOCITY V", "M/S"}, {"WATER DEPTH", "M"},
                                {"FREE SURFACE", "M"}, {"BOTTOM", "M"}};
  static const Variable v3[] = {{"ELEVATION Z", "M"}, {"VELOCITY U", "M/S"}, {"VELOCITY V", "M/S"}, {"VELOCITY W", "M/S"}};
  std::vector<Variable> out;
  const int base = three_d ? 4 : 5;
  for (int i = 0; i < count; ++i) {
    if (i < base)
      out.push_back(three_d ? v3[i] : v2[i]);
    else
      out.push_back({"TRACER " + std::to_string(i - base + 1), ""});
  }
  return out;
}

void synthetic_values(const Mesh& m, int var, bool three_d, double t, std::vector<double>& out) {
  out.resize(static_cast<std::size_t>(m.npoin));
  const std::int64_t n2 = m.npoin2();
  const int planes = m.nplan;
  for (std::int64_t k = 0; k < m.npoin; ++k) {
    const double x = m.x[static_cast<std::size_t>(k)], y = m.y[static_cast<std::size_t>(k)];
    const double b = bottom_at(x, y), s = surface_at(x, y, t);
    const double sigma = planes > 1 ? static_cast<double>(k / n2) / (planes - 1) : 1.0;  // 0 at the bed
    const double wave = std::sin(2.0 * kPi * (x / 3000.0 - t / 600.0));
    double v;
    if (three_d) {
      switch (var) {
        case 0: v = b + (s - b) * sigma; break;
        case 1: v = (0.6 + 0.4 * std::sqrt(sigma)) * (1.0 + 0.3 * wave); break;
        case 2: v = 0.2 * std::cos(y / 400.0 + t / 300.0) * (0.5 + 0.5 * sigma); break;
        case 3: v = 0.01 * wave * sigma * (1.0 - sigma); break;
        default: v = std::exp(-((x - 2000.0 * var - t) * (x - 2000.0 * var - t)) / 1.0e6) * (1.0 - 0.5 * sigma);
      }
    } else {
      switch (var) {
        case 0: v = 1.0 + 0.3 * wave; break;
        case 1: v = 0.2 * std::cos(y / 400.0 + t / 300.0); break;
        case 2: v = s - b; break;
        case 3: v = s; break;
        case 4: v = b; break;
        default: v = std::exp(-((x - 2000.0 * var - t) * (x - 2000.0 * var - t)) / 1.0e6);
      }
    }
    out[static_cast<std::size_t>(k)] = v;
  }
}

}  // namespace anabranch
