// A multi-block grid as a Tecplot binary file (.plt; formats/tecplot.hpp), written by every
// rank: one ORDERED zone a block and a frame, X, Y, Z first, then the variables at the nodes;
// the frame's time as the zone's solution time, the block's place as its strand (Tecplot
// animates a strand's zones); the grid written once, in the first frame's zones, which the
// later frames' zones share. Specification: docs/formats/tecplot.md.
//
// Every zone's entry has its place before any value is written: after a header that has room
// for `frames` frames' zones (the entries' sizes follow from the grid and the precision), the
// first frame's zones, then each later frame's. An entry's first bytes hold each variable's
// min/max: each rank measures its pieces, one reduction over the blocks a frame
// (MPI_Allreduce; a split block's pieces combined), and the block's first holder makes the
// entry's head. A frame goes through the engine as one stretch of the file, its entries whole
// (entries()): each rank's runs are the heads of the zones it leads (fixed bytes) and its
// pieces' values, so that the ranks' writes meet end to end (a rank's zones one contiguous
// write where it holds consecutive blocks) instead of leaving partly written pages between
// them. The grid waits for the first frame (a copy of the rank's pieces), which goes with
// it. Written in another order (a frame before the grid, no frame at all), the arrays go
// through the block file's own layout and the heads are written after them (write_heads).
// At close rank 0 writes the header (O(zones)); a header past its room (more frames than
// reserved) moves the data section along first, every rank a share (io/tecplot_header.hpp).
#pragma once
#include <mpi.h>

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "blockformats/block_file.hpp"
#include "grid/block_layout.hpp"
#include "io/strategy.hpp"

namespace anabranch::pio {

class TecplotBlocks {
 public:
  // Collective. The first frame's zones (X, Y, Z and the variables) placed after a header
  // with room for `frames` frames (at least 1): info.block_offsets gets the grid's arrays.
  TecplotBlocks(MPI_Comm comm, const BlockLayout& layout, BlockFileInfo& info, std::int64_t frames, std::string title);
  ~TecplotBlocks();

  // Frame f's arrays placed (info.block_offsets gets them): the first frame's in its zones,
  // a later frame's in zones of their own.
  void place_frame(std::int64_t f);
  // Collective: the min/max of this rank's pieces' values of n arrays (the grid's x, y, z, or
  // frame f's variables), arrays[p * n + a] in the caller's layout (halos skipped), combined
  // over the ranks, kept until the frame's heads are written.
  template <class T>
  void measure(std::int64_t f, bool grid, const T* const* arrays);

  // The grid kept until the first frame (measured; a copy of this rank's arrays, halos
  // included): xyz[3 * p + c] as BlockWriter::write_grid's.
  template <class T>
  void keep_grid(const T* const* xyz);
  bool grid_kept() const { return kept_grid_; }
  const double* const* kept_grid() const { return kept_pointers_.data(); }
  void drop_grid();

  // Frame f's entries whole, as the engine writes them (first: the first frame's, X, Y, Z
  // and the variables, arrays[p * (3 + nvar) + a]; else a later frame's variables,
  // arrays[p * nvar + v]), once the frame (and for the first, the grid) is measured.
  const FrameLayout& entries(bool first);
  // Frame f's heads are in the file (written with its entries).
  void written(std::int64_t f) { measured_.erase(f); }
  // Collective: the heads of the frames measured and not written whose min/max are all known
  // (the first frame's wait for the grid), each by its zone's first holder, into the file
  // at `path`, after the engine's write of their values.
  void write_heads(const std::string& path);
  // Collective, once the values are in the file: the header (rank 0), the data section moved
  // along first when the header is past its room. `times`: the frames written.
  void close(const std::string& path, const std::vector<double>& times);

  // This rank's heads of frame f (the zones it leads, in file order), for the engine's fixed
  // runs; where each zone's entry and head are.
  void heads(std::int64_t f, std::vector<unsigned char>& out) const;
  std::int64_t entry_at(std::int64_t f, std::size_t b) const;
  std::int64_t head_bytes(bool first, std::size_t b) const { return first ? first_head_[b] : later_head_[b]; }
  std::int64_t frame_bytes(bool first) const { return first ? first_bytes_ : later_bytes_; }
  bool leads(std::size_t b) const { return lead_[b] == rank_; }
  const BlockLayout& layout() const { return layout_; }
  const BlockFileInfo& info() const { return info_; }

 private:
  std::int64_t header_room(std::int64_t frames) const;

  MPI_Comm comm_;
  int rank_ = 0, size_ = 1;
  const BlockLayout& layout_;
  BlockFileInfo& info_;
  std::string title_;
  std::int64_t reserved_ = 1;  // frames the header has room for
  std::int64_t room_ = 0;      // the header's bytes (the data section's start)
  // Each block's entry in a frame: its size, its head's, its place in the frame's entries.
  std::vector<std::int64_t> first_size_, later_size_, first_head_, later_head_, first_at_, later_at_;
  std::int64_t first_bytes_ = 0, later_bytes_ = 0;  // a frame's entries
  std::vector<int> lead_;                           // each block's first holder
  // The grid's min/max ([block * 3 + c]) and each frame's whose heads are not yet written
  // ([block * nvar + v]).
  std::vector<std::pair<double, double>> grid_minmax_;
  bool grid_measured_ = false;
  std::map<std::int64_t, std::vector<std::pair<double, double>>> measured_;
  // The grid kept until the first frame.
  bool kept_grid_ = false;  // (every rank alike, holding pieces or not)
  std::vector<std::vector<double>> kept_;
  std::vector<const double*> kept_pointers_;
  std::unique_ptr<FrameLayout> first_entries_, later_entries_;
};

// The first frame's values with the grid kept for it: arrays p * (3 + nvar) + a, X, Y, Z
// from the kept grid, the variables from the caller's.
template <class T>
class EntryEncoder final : public ValueEncoder {
 public:
  EntryEncoder(const double* const* grid, const T* const* values, int nvar, int real_bytes)
      : grid_(grid, real_bytes), values_(values, real_bytes), n_(3 + nvar) {}
  void encode(int array, std::int64_t index, std::int64_t count, unsigned char* dst) const override {
    const int p = array / n_, a = array % n_;
    if (a < 3) grid_.encode(p * 3 + a, index, count, dst);
    else values_.encode(p * (n_ - 3) + a - 3, index, count, dst);
  }

 private:
  ArrayEncoder<double> grid_;
  ArrayEncoder<T> values_;
  int n_;
};

}  // namespace anabranch::pio
