// A Tecplot binary file (.plt) of ordered zones as a multi-block file: the blocks, frames,
// variables and the place of every block's array, for the engine's readers (serial, no
// MPI: rank 0 describes, every rank reads its pieces' bytes). Written by
// pio::TecplotBlocks (layouts/block_tecplot.hpp); files of other writers read as the
// rules below say. Specification: docs/formats/tecplot.md.
//
// The zones are blocks, frame after frame: with strands, a frame's zones end where a strand
// comes again; without, where the solution time changes (one time: one frame). Every frame
// has the first frame's blocks, in its order and sizes. The first three variables are the
// grid (X, Y, Z: Tecplot's writers put the coordinates first), read from the first frame's
// zones; the others are the frames' variables. A file with only the three coordinates is a
// grid (no frame).
#pragma once
#include <string>

#include "blockformats/block_file.hpp"
#include "formats/tecplot.hpp"

namespace anabranch::tecplot_blocks {

// True and `info` filled when the file reads as blocks; false and `why` one line naming the
// zone or the variable when it does not (finite-element zones, a 2-D file, mixed
// precisions, ...). FormatError for bytes that are not Tecplot's.
bool describe(const std::string& path, const tecplot::File& file, BlockFileInfo& info, std::string& why);

}  // namespace anabranch::tecplot_blocks
