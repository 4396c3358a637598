// A multi-block grid as a Tecplot binary file (.plt; formats/tecplot.hpp), written by every
// rank: one ORDERED zone a block and a frame, X, Y, Z first, then the variables at the nodes;
// the frame's time as the zone's solution time, the block's place as its strand (Tecplot
// animates a strand's zones); the grid written once, in the first frame's zones, which the
// later frames' zones share. Specification: docs/formats/tecplot.md.
//
// Every zone's entry has its place before any value is written: after a header that has room
// for `frames` frames' zones (the entries' sizes follow from the grid and the precision), the
// first frame's zones, then each later frame's. The values go through the engine as a block
// file's do (BlockFileInfo::block_offsets: each block's array on its own). An entry's first
// bytes hold each variable's min/max: each rank measures its pieces, one reduction over the
// blocks a frame (MPI_Allreduce; a split block's pieces combined), and the block's first
// holder writes the entry's head. At close rank 0 writes the header (O(zones)); a header
// past its room (more frames than reserved) moves the data section along first, every rank a
// share (docs/formats/tecplot.md: the cost of not giving frames=N).
#pragma once
#include <mpi.h>

#include <array>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "blockformats/block_file.hpp"
#include "grid/block_layout.hpp"

namespace anabranch::pio {

class TecplotBlocks {
 public:
  // Collective. The first frame's zones (X, Y, Z and the variables) placed after a header
  // with room for `frames` frames (at least 1): info.block_offsets gets the grid's arrays.
  TecplotBlocks(MPI_Comm comm, const BlockLayout& layout, BlockFileInfo& info, std::int64_t frames, std::string title);

  // Frame f's arrays placed (info.block_offsets gets them): the first frame's in its zones,
  // a later frame's in zones of their own.
  void place_frame(std::int64_t f);
  // Collective: the min/max of this rank's pieces' values of n arrays (the grid's x, y, z, or
  // frame f's variables), arrays[p * n + a] in the caller's layout (halos skipped), combined
  // over the ranks. Once a zone's every min/max is known its holder writes the entry's head
  // into the file at `path` (after the engine's write of the frame is complete).
  template <class T>
  void measure(std::int64_t f, bool grid, const T* const* arrays);
  void write_heads(const std::string& path);
  // Collective, once the values are in the file: the header (rank 0), the data section moved
  // along first when the header is past its room. `frames`: the frames written.
  void close(const std::string& path, const std::vector<double>& times);

 private:
  struct Pending {  // a frame's zones whose heads wait for their min/max
    std::int64_t f = 0;
    std::vector<std::pair<double, double>> minmax;  // [block * arrays + a]
    int arrays = 0;
    bool complete = false;
  };
  std::int64_t entry_at(std::int64_t f, std::size_t b) const;
  std::int64_t header_room(std::int64_t frames) const;

  MPI_Comm comm_;
  int rank_ = 0, size_ = 1;
  const BlockLayout& layout_;
  BlockFileInfo& info_;
  std::string title_;
  std::int64_t reserved_ = 1;  // frames the header has room for
  std::int64_t room_ = 0;      // the header's bytes (the data section's start)
  std::vector<std::int64_t> first_size_, later_size_, first_at_, later_at_;  // entry sizes and places in a frame
  std::int64_t first_bytes_ = 0, later_bytes_ = 0;                          // a frame's entries
  std::vector<int> lead_;  // each block's first holder
  // The first frame's grid min/max (until its frame's variables come) and the frames whose
  // heads wait.
  std::vector<std::pair<double, double>> grid_minmax_;
  bool grid_measured_ = false;
  std::vector<Pending> pending_;
};

}  // namespace anabranch::pio
