// Merging per-rank (or concatenated) SERAFIN parts into one global file: the gretel
// replacement. Streams frame by frame, each part opened once; under mpiexec the ranks
// share the parts and write the output together through the shared-file writer.
#pragma once
#include <mpi.h>

#include <cstdint>
#include <string>

namespace anabranch::pio {

struct MergeOptions {
  std::string base;        // parts: <base>NNNNN-IIIII, or <base>-CONCAT + <base>-INDEX
  int nparts = 0;          // 0: find out
  std::string geometry;    // the global geometry: connectivity, IPOBO, coordinates; for 3D
                           // parts it may be the 2D mesh, extruded as gretel does (see below)
  std::string cli;         // the global boundary file: IPARAM(8) = its boundary points (gretel)
  std::string output;
  bool allow_partial = false;  // merge the frames every part has
  std::string strategy = "aggregated";  // when run on several ranks
};

struct MergeReport {
  int parts = 0;
  std::int64_t frames = 0, npoin = 0, bytes = 0, bytes_read = 0;
  double seconds = 0;
  std::string warning;  // e.g. frames left out with allow_partial
};

// The output header is gretel v8's: part 0's title with the format word of its precision,
// part 0's variables and date; IPARAM (1, 0, origin of the geometry, 0, 0, NPLAN, NPTFR,
// the geometry's NPTIR, date flag), NPTFR being the boundary points of `cli` (the
// geometry's IPARAM(8) without one). With 3D parts and a 2D geometry the mesh is the 2D
// mesh extruded to the parts' planes with IPOBO 0, NPTFR 0 and no date, as gretel writes it.
//
// Collective over comm (a single rank merges alone, without MPI-IO; MPI_COMM_NULL: alone,
// without calling MPI at all). The output is written
// under a temporary name and renamed when complete. Errors name the part at fault.
MergeReport merge_parts(MPI_Comm comm, const MergeOptions& options);

}  // namespace anabranch::pio
