// The mesh of a result a strategy writes as arrays of its own (cgns, tecplot), a share at a
// time: from the geometry file (every rank reads its share) or from the mesh rank 0 holds.
#pragma once
#include <algorithm>
#include <optional>

#include "core/error.hpp"
#include "formats/serafin.hpp"
#include "h5/vtkhdf.hpp"
#include "io/strategy.hpp"
#include "parallel/mpi_util.hpp"

namespace anabranch::pio {

// The mesh's arrays, a share at a time (rank 0 all of it when it holds the mesh).
class MeshSource {
 public:
  // Collective.
  MeshSource(const StrategySetup& s, int rank) : h_(s.header), mesh_(s.mesh) {
    collective(s.comm, [&] {
      if (!s.geometry.empty())
        geometry_.emplace(vtkhdf::serafin_source(s.geometry));
      else if (rank == 0 && !s.mesh)
        throw UsageError("rank 0 must give the global mesh or a geometry file");
    });
  }
  // Whether every rank reads a share (a geometry file), or rank 0 alone holds the mesh.
  bool shared() const { return geometry_.has_value(); }
  // Nodes [n0, n0 + n): their X (c = 0) or Y (c = 1); their IPOBO. Elements [e0, e0 + ne):
  // their nodes (1-based).
  void coordinates(int c, std::int64_t n0, std::int64_t n, double* out) const {
    if (geometry_)
      serafin::read_mesh_coordinates(h_, *geometry_, c == 1, n0, n, out);
    else
      std::copy_n((c == 0 ? mesh_->x : mesh_->y).begin() + n0, n, out);
  }
  void ipobo(std::int64_t n0, std::int64_t n, std::int32_t* out) const {
    if (geometry_)
      serafin::read_mesh_ipobo(h_, *geometry_, n0, n, out);
    else
      std::copy_n(mesh_->ipobo.begin() + n0, n, out);
  }
  void rows(std::int64_t e0, std::int64_t ne, std::int32_t* out) const {
    if (geometry_)
      serafin::read_mesh_rows(h_, *geometry_, e0, ne, out);
    else
      std::copy_n(mesh_->ikle.begin() + e0 * h_.ndp, ne * h_.ndp, out);
  }

 private:
  const serafin::Header& h_;
  const Mesh* mesh_;
  std::optional<serafin::Reader> geometry_;
};

}  // namespace anabranch::pio
