// A Tecplot binary file's (.plt; formats/tecplot.hpp) last step, shared by the layouts that
// write one from every rank (block grids: layouts/block_tecplot.hpp; mesh results:
// strategy_tecplot.cpp). Their data section starts after room reserved for the header, whose
// zones (their solution times) are known only at close.
#pragma once
#include <mpi.h>

#include <cstdint>
#include <string>

#include "formats/tecplot.hpp"

namespace anabranch::pio {

// Collective, once every value is in the file at `path` (data section [room, end)): rank 0
// writes `file`'s header, padded to the room. A header past its room (more zones than it was
// made for) first moves the data section along, every rank a share of it, from its end back;
// that costs a copy of the values (docs/formats/tecplot.md: frames=N). The file is made at
// least as long as its last entry (values never written read as zeros). Throws IoError naming
// the file.
void write_tecplot_header(MPI_Comm comm, const std::string& path, const tecplot::File& file, std::int64_t room, std::int64_t end);

}  // namespace anabranch::pio
