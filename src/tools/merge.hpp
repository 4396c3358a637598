// Merging per-rank (or concatenated) SERAFIN parts into one global file: the gretel
// replacement. Streams frame by frame, each part opened once; under mpiexec the ranks
// share the parts and write the output together through the shared-file writer.
#pragma once
#include <mpi.h>

#include <cstdint>
#include <memory>
#include <string>

#include "formats/serafin.hpp"
#include "layouts/writer.hpp"

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
  Compression compress;                 // an HDF5 output's frames (core/compression.hpp)
};

struct MergeReport {
  int parts = 0;
  std::int64_t frames = 0, npoin = 0, bytes = 0, bytes_read = 0;
  double seconds = 0;
  std::string warning;  // e.g. frames left out with allow_partial
  bool kept = false;    // the output was written during the run (the parts hold no frames): left as it is
};

// The output header is gretel v8's: part 0's title with the format word of its precision,
// part 0's variables and date; IPARAM (1, 0, origin of the geometry, 0, 0, NPLAN, NPTFR,
// the geometry's NPTIR, date flag), NPTFR being the boundary points of `cli` (the
// geometry's IPARAM(8) without one). With 3D parts and a 2D geometry the mesh is the 2D
// mesh extruded to the parts' planes with IPOBO 0, NPTFR 0 and no date, as gretel writes it.
//
// Parts that hold no frames, with an output that already is the complete result this
// header describes (written during the run by open_merged_writer below), leave the output as
// it is (report.kept): nothing is merged over it.
//
// Collective over comm (a single rank merges alone, without MPI-IO; MPI_COMM_NULL: alone,
// without calling MPI at all). The output is written
// under a temporary name and renamed when complete. Errors name the part at fault.
MergeReport merge_parts(MPI_Comm comm, const MergeOptions& options);

// The file merge_parts would make of the ranks' parts, written by the ranks while they run
// instead of merged afterwards: each rank names its own part, of which only the header and
// mesh are read (KNOLG from IPOBO; a solver such as TELEMAC has written them, frames are not
// needed); the header is made from rank 0's part, the geometry and the boundary file as above.
// The writer takes each frame's values in the part's local node order (nvar blocks of the
// part's NPOIN); the last rank holding an interface node gives its value (owner=highest), as
// the last part does in merge_parts. Collective over comm.
struct MergedWriter {
  std::unique_ptr<Writer> writer;
  std::int64_t nlocal = 0;  // values per variable this rank gives: its part's NPOIN
};
MergedWriter open_merged_writer(MPI_Comm comm, const std::string& part, const std::string& geometry, const std::string& cli,
                                const std::string& output, WriterOptions options);

// A part's global nodes (0-based), every plane: KNOLG is the IPOBO record's first NPOIN2
// values (TELEMAC writes dummies above); plane j's nodes follow at j * npoin2. Checks the
// part's planes against geo_nplan and KNOLG against 1..npoin2 (FormatError naming name).
std::vector<std::int32_t> part_nodes(const serafin::Reader& part, const std::string& name, std::int64_t npoin2, int geo_nplan);

// Raises the open-file limit to its hard limit: every part of a set stays open.
void raise_open_file_limit();

}  // namespace anabranch::pio
