// METIS_PartMeshDual alone, called as TELEMAC's partel calls it, on a SERAFIN mesh: the
// floor that `anabranch partition --method metis` is measured against (time, peak memory).
// Usage: bench_metis_alone MESH.slf NPARTS
#include <metis.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "core/error.hpp"
#include "core/progress.hpp"
#include "formats/serafin.hpp"
#include "partition/partitioner.hpp"

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s MESH.slf NPARTS\n", argv[0]);
    return 2;
  }
  try {
    anabranch::serafin::Reader r(argv[1]);
    const auto& h = r.header();
    const int nplan = h.nplan();
    const std::int64_t ne2 = nplan > 1 ? h.nelem / (nplan - 1) : h.nelem;
    const int ndp2 = nplan > 1 ? 3 : h.ndp;
    auto ikle = r.read_ikle();
    std::vector<idx_t> eind(static_cast<std::size_t>(ne2 * ndp2)), eptr(static_cast<std::size_t>(ne2) + 1);
    for (std::int64_t e = 0; e < ne2; ++e)
      for (int k = 0; k < ndp2; ++k) eind[static_cast<std::size_t>(e * ndp2 + k)] = ikle[static_cast<std::size_t>(e * h.ndp + k)] - 1;
    for (std::int64_t e = 0; e <= ne2; ++e) eptr[static_cast<std::size_t>(e)] = static_cast<idx_t>(e * ndp2);
    std::vector<std::int32_t>().swap(ikle);
    idx_t ne = static_cast<idx_t>(ne2), nn = static_cast<idx_t>(h.npoin / nplan), ncommon = 2, np = std::atoi(argv[2]), objval = 0;
    std::vector<idx_t> epart(static_cast<std::size_t>(ne)), npart(static_cast<std::size_t>(nn));
    const auto t0 = std::chrono::steady_clock::now();
    int rc = METIS_PartMeshDual(&ne, &nn, eptr.data(), eind.data(), nullptr, nullptr, &ncommon, &np, nullptr, nullptr, &objval,
                                epart.data(), npart.data());
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (rc != METIS_OK) {
      std::fprintf(stderr, "METIS_PartMeshDual failed: %d\n", rc);
      return 1;
    }
    std::printf("{\"seconds\": %.3f, \"peak_rss_bytes\": %lld, \"objval\": %lld}\n", secs,
                static_cast<long long>(anabranch::peak_rss_bytes()), static_cast<long long>(objval));
  } catch (const anabranch::Error& e) {
    std::fprintf(stderr, "bench_metis_alone: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
