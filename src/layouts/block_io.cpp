// Multi-block grids in one file. See block_io.hpp.
#include "layouts/block_io.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstring>
#include <optional>

#include "core/byteorder.hpp"
#include "core/error.hpp"
#include "core/io.hpp"
#include "core/outputs.hpp"
#include "core/provenance.hpp"
#include "blockformats/block_raw.hpp"
#include "blockformats/cgns.hpp"
#include "formats/hdf5_bytes.hpp"
#include "parallel/mpi_util.hpp"
#include "io/shared_file.hpp"
#include "io/strategy.hpp"
#include "layouts/block_compressed.hpp"
#include "layouts/block_tecplot.hpp"
#include "parallel/topology.hpp"
#ifdef ANABRANCH_HAVE_HDF5
#include "h5/block_h5.hpp"
#include "h5/cgns_files.hpp"
#endif

namespace anabranch::pio {
namespace {

std::string format_for(const std::string& path, const std::string& asked) {
  return !asked.empty() ? asked : hdf5_file_name(path) ? "hdf5" : cgns_file_name(path) ? "cgns" : tecplot_file_name(path) ? "tecplot" : "raw";
}

// A CGNS file's arrays: from this byte on (after the superblock), the grid's x, y, z (every
// block's, one array each), then frame after frame every variable; its tree after them,
// written at close.
constexpr std::int64_t kCgnsData = 4096;

// A frame of a block file for the engine (or its grid: the x, y, z arrays): every piece's
// grid lines of every array, each a run; with records, the markers of a block's record
// are fixed runs of the ranks holding its first and its last point.
class BlockFrame final : public FrameLayout {
 public:
  BlockFrame(const BlockLayout& l, const BlockFileInfo& info, bool grid)
      : l_(l), info_(info), grid_(grid), hdf5_(info.format != "raw"), narrays_(grid ? 3 : info.nvar()),
        records_(info.records && !grid), array_bytes_(info.first_point(info.blocks.size()) * info.real_bytes),
        frame_bytes_(hdf5_ ? narrays_ * array_bytes_ : info.frame_end(0)) {}
  int value_bytes() const override { return info_.real_bytes; }
  std::int64_t frame_bytes() const override { return frame_bytes_; }
  std::pair<std::int64_t, std::int64_t> locate(std::int64_t frame, std::int64_t at) const override {
    if (!hdf5_) return {frame * frame_bytes_ + at, frame_bytes_ - at};
    if (!info_.block_offsets.empty()) {  // each block's array on its own
      const auto v = static_cast<int>(at / array_bytes_);
      const std::int64_t in = at % array_bytes_, point = in / info_.real_bytes;
      std::size_t lo = 0, hi = info_.blocks.size();  // the block holding `point`
      while (hi - lo > 1) {
        const std::size_t mid = (lo + hi) / 2;
        (info_.first_point(mid) <= point ? lo : hi) = mid;
      }
      const std::int64_t from = info_.first_point(lo) * info_.real_bytes;
      return {info_.value_offset(frame, lo, grid_ ? -(v + 1) : v) + (in - from), info_.first_point(lo + 1) * info_.real_bytes - in};
    }
    const auto v = static_cast<std::size_t>(at / array_bytes_);  // one dataset per array
    const std::int64_t base = grid_ ? info_.grid_offsets.at(v) : info_.dataset_offsets.at(static_cast<std::size_t>(frame) * narrays_ + v);
    return {base + at % array_bytes_, array_bytes_ - at % array_bytes_};
  }
  std::int64_t parts() const override {
    return !hdf5_ ? 1 : info_.block_offsets.empty() ? narrays_ : narrays_ * static_cast<std::int64_t>(info_.blocks.size());
  }
  // One marker per piece: its block's record length.
  void fixed_bytes(std::int64_t, double, std::vector<unsigned char>& out) const override {
    out.clear();
    if (!records_) return;
    for (const auto& piece : l_.pieces) {
      const auto m = static_cast<std::int32_t>(l_.blocks[static_cast<std::size_t>(piece.block)].points() * info_.real_bytes);
      out.insert(out.end(), reinterpret_cast<const unsigned char*>(&m), reinterpret_cast<const unsigned char*>(&m) + 4);
    }
  }
  // In file order of the pieces' first values (a rank's pieces of one block split in i or j
  // interleave: their lines come piece after piece); each block's array on its own (a
  // Tecplot file, a CGNS file of another writer): in the order of the first frame's arrays
  // in the file (a block's arrays one after another, read and written as one stretch).
  void for_each_run(const std::function<void(const Run&)>& f) const override {
    const int rb = info_.real_bytes;
    std::vector<std::pair<std::int64_t, std::size_t>> order;  // (first byte, piece * narrays + array)
    for (std::size_t p = 0; p < l_.pieces.size(); ++p) {
      const auto& piece = l_.pieces[p];
      const auto b = static_cast<std::size_t>(piece.block);
      const auto& d = l_.blocks[b].dims;
      const std::int64_t first = (piece.range[2][0] * d[1] + piece.range[1][0]) * d[0] + piece.range[0][0];
      for (int v = 0; v < narrays_; ++v) {
        const auto placed = static_cast<std::size_t>((grid_ ? v + 1 : 3 + v + 1)) * info_.blocks.size();  // the first frame's places known
        order.emplace_back((info_.block_offsets.size() < placed ? array_at(b, v) : info_.value_offset(0, b, grid_ ? -(v + 1) : v)) + first * rb,
                           p * narrays_ + v);
      }
    }
    std::sort(order.begin(), order.end());
    for (const auto& entry : order) {
      const std::size_t pv = entry.second;  // a plain variable: the lambda below captures it
      const std::size_t p = pv / static_cast<std::size_t>(narrays_);
      const int v = static_cast<int>(pv % static_cast<std::size_t>(narrays_));
      const auto& piece = l_.pieces[p];
      const auto& shape = l_.blocks[static_cast<std::size_t>(piece.block)];
      const std::int64_t at = array_at(static_cast<std::size_t>(piece.block), v);
      const auto& r = piece.range;
      if (records_ && r[0][0] == 0 && r[1][0] == 0 && r[2][0] == 0) f({at - 4, 4, Run::kFixed, static_cast<std::int64_t>(4 * p)});
      l_.for_each_run(p, [&](const BlockRun& run) {
        f({at + run.block_index * rb, run.count, static_cast<int>(pv), run.memory_index});
      });
      if (records_ && r[0][1] == shape.dims[0] && r[1][1] == shape.dims[1] && r[2][1] == shape.dims[2])
        f({at + shape.points() * rb, 4, Run::kFixed, static_cast<std::int64_t>(4 * p)});
    }
  }

 private:
  // Where array v of block b starts in a frame.
  std::int64_t array_at(std::size_t b, int v) const {
    if (hdf5_) return v * array_bytes_ + info_.first_point(b) * info_.real_bytes;
    return info_.value_offset(0, b, v);
  }

  const BlockLayout& l_;
  const BlockFileInfo& info_;
  bool grid_, hdf5_;
  int narrays_;
  bool records_;
  std::int64_t array_bytes_;  // one array of every block
  std::int64_t frame_bytes_;
};

}  // namespace

BlockFileOptions BlockFileOptions::parse(const std::string& text) {
  BlockFileOptions o;
  o.hints = parse_options(text, [&](const std::string& k, const std::string& v) {
    if (k == "format") {
      if (v != "raw" && v != "hdf5" && v != "cgns" && v != "tecplot") throw UsageError("format=" + v + ": expected raw, hdf5, cgns or tecplot");
      o.format = v;
    } else if (k == "strategy") {
      if (!writes_frame_layouts(v))
        throw UsageError("strategy=" + v + ": block files are written independent, collective, aggregated or aggregated-async");
      o.strategy = v;
    } else if (k == "precision") {
      if (v != "4" && v != "8" && v != "single" && v != "double") throw UsageError("precision=" + v + ": expected 4 (single) or 8 (double)");
      o.real_bytes = v == "4" || v == "single" ? 4 : 8;
    } else if (k == "records") {
      if (v != "fortran" && v != "none") throw UsageError("records=" + v + ": expected fortran or none");
      o.records = v == "fortran";
    } else if (k == "compress") {
      o.compress = Compression::parse(v);
    } else if (k == "atomic" || k == "xdmf") {
      (k == "atomic" ? o.atomic : o.xdmf) = option_flag(k, v);
    } else if (k == "frames") {
      o.frames = option_number(k, v, 1);
    } else if (k == "buffer_bytes" || k == "writers_per_node") {
      const std::int64_t x = option_number(k, v, k == "buffer_bytes" ? 4096 : 1);
      if (k == "buffer_bytes") o.buffer_bytes = x;
      else o.writers_per_node = static_cast<int>(std::min<std::int64_t>(x, INT_MAX));
    } else {
      return false;
    }
    return true;
  });
  return o;
}

// ---------------------------------------------------------------------------------------
// Writer

struct BlockWriter::Impl {
  MPI_Comm comm = MPI_COMM_NULL;
  int rank = 0, size = 1;
  std::string path;
  std::optional<OutputName> name;  // where the file is written (a temporary: atomic)
  BlockLayout layout;
  BlockFileOptions options;
  BlockFileInfo info;  // what the file holds so far
  MPI_Info mpi_info = MPI_INFO_NULL;
  std::unique_ptr<BlockFrame> frame;  // the values' runs
  std::unique_ptr<Strategy> strategy;
  // compress=: the file (opened here, not by a strategy) and the chunks' writer.
  MPI_File packed_fh = MPI_FILE_NULL;
  std::unique_ptr<CompressedBlocks> packed;
  std::unique_ptr<TecplotBlocks> tecplot;  // tecplot: the zones' places, min/max and header
  std::unique_ptr<Strategy> entries;       // tecplot: the later frames' entries whole
  Strategy* active = nullptr;              // the strategy of the pending frame (null: `strategy`)
  std::int64_t heads_pending = -1;         // tecplot: the pending frame, its heads with its values
#ifdef ANABRANCH_HAVE_HDF5
  std::unique_ptr<block_h5::File> h5;
#endif
  bool closed = false, grid_written = false, pending = false;

  // The engine's set-up for this file (values, or the grid).
  StrategySetup setup(const FrameLayout& runs) const {
    StrategySetup s;
    s.comm = comm;
    s.path = name->open_path();
    s.final_path = path;
    s.frame = &runs;
    s.truncate = info.format != "hdf5";  // an HDF5 file is HDF5's, made before
    s.info = mpi_info;
    s.writers_per_node = options.writers_per_node;
    const int mib = options.strategy == "independent" ? 1 : options.strategy == "collective" ? 8 : 4;
    s.buffer_bytes = options.buffer_bytes > 0 ? options.buffer_bytes : std::int64_t{mib} << 20;
    s.hints = options.hints;
    return s;
  }
  void after_frame();
  // The grid through the engine as a frame of its own (x, y, z), into the arrays' places.
  template <class T>
  void grid_pass(const T* const* xyz);
  // Compressed HDF5: the frame's arrays (or the grid's), each rank its pieces' runs rounded
  // within the bound (the grid exact), through HDF5's collective filtered writes.
  template <class T>
  void write_h5_compressed(std::int64_t f, bool grid, const T* const* arrays);
  // The tree of a CGNS file, after its arrays, and its superblock: rank 0, at close.
  void write_cgns_tree();
  // Rank 0: the raw file's description beside it (block_raw's sidecar).
  void write_sidecar() const {
    block_raw::write_sidecar(path, {info.blocks, info.variables, info.real_bytes, info.records, info.times, info.provenance});
  }
  // Collective, after a failure every rank saw (they all threw the same agreed error): lets
  // the file go at once, errors ignored. A raw solver output keeps its complete frames (the
  // failed frame's bytes cut off); an HDF5 file is removed (HDF5 cannot close a file whose
  // writes failed on a full disk without emptying it first); a tool's temporary (and a CGNS
  // file, always written under one: its tree comes at close) is removed.
  void abandon(std::int64_t complete_frames);
};

void BlockWriter::Impl::abandon(std::int64_t complete_frames) {
  closed = true;
  pending = false;
  info.times.resize(static_cast<std::size_t>(complete_frames));
  if (packed_fh != MPI_FILE_NULL) MPI_File_close(&packed_fh);  // errors ignored: the file goes
  packed.reset();
  if (entries) {
    try {
      entries->abandon();
    } catch (...) {
    }
    entries.reset();
  }
  if (strategy) {
    try {
      strategy->abandon();
    } catch (...) {
    }
    strategy.reset();
    if (info.format == "raw" && !name->temporary() && rank == 0)
      (void)::truncate(path.c_str(), complete_frames == 0 ? 0 : static_cast<off_t>(info.value_offset(complete_frames, 0, 0) - (info.records ? 4 : 0)));
  }
#ifdef ANABRANCH_HAVE_HDF5
  if (h5) {
    h5->abandon();
    h5.reset();
    if (rank == 0) ::unlink(name->open_path().c_str());
  }
#endif
  name->discard();
}

BlockWriter::BlockWriter(MPI_Comm comm, const std::string& path, const BlockLayout& layout, const std::vector<std::string>& variables,
                         const BlockFileOptions& options)
    : impl_(std::make_unique<Impl>()) {
  Impl& m = *impl_;
  m.comm = comm;
  MPI_Comm_rank(comm, &m.rank);
  MPI_Comm_size(comm, &m.size);
  m.path = path;
  m.layout = layout;
  m.options = options;
  m.info.path = path;
  m.info.format = format_for(path, options.format);
  m.info.blocks = layout.blocks;
  m.info.variables = variables;
  m.info.real_bytes = options.real_bytes;
  m.info.records = options.records && m.info.format == "raw";
  const bool cgns = m.info.format == "cgns", tecplot = m.info.format == "tecplot";
  collective(comm, [&] {
    layout.check();
    if (options.compress.on() && tecplot)
      throw UsageError("compress=" + options.compress.str() + ": Tecplot's .plt format holds its values plain (compressed: format=cgns or hdf5)");
    if (variables.empty() && m.info.format == "raw") throw UsageError("a raw block file needs at least one variable");
    if (options.real_bytes != 4 && options.real_bytes != 8) throw UsageError("precision must be 4 or 8 bytes");
    if (options.records && m.info.format != "raw") throw UsageError("records=fortran is an option of the raw format");
    if (options.compress.on() && m.info.format == "raw")
      throw UsageError("compress=" + options.compress.str() + ": an option of CGNS and HDF5 block files, not of raw ones (format=cgns or hdf5)");
#ifndef ANABRANCH_HAVE_HDF5
    if (m.info.format == "hdf5") throw UsageError("this anabranch was built without HDF5: write format=raw");
#endif
    if (m.info.records)
      for (const auto& b : layout.blocks)
        if (b.points() * options.real_bytes > 0x7fffffffLL)
          throw UsageError("block " + std::to_string(b.id) + ": one array of " + std::to_string(b.points() * options.real_bytes) +
                           " bytes is past a Fortran record's 2^31-1 bytes (write records=none)");
    if (m.rank == 0) {
      refuse_open_input(path);
      if (m.info.format == "raw") refuse_open_input(block_raw::sidecar_path(path));
    }
  });
  // Every rank the same grid, and every point held once; compressed, every block's chunks.
  std::vector<std::array<std::int64_t, 3>> extents;
  {
    std::vector<std::int64_t> grid, flat;
    for (const auto& b : layout.blocks) grid.insert(grid.end(), {b.id, b.dims[0], b.dims[1], b.dims[2]});
    const std::string mine(reinterpret_cast<const char*>(grid.data()), grid.size() * sizeof(std::int64_t));
    const bool same = broadcast(comm, mine) == mine;
    for (const auto& p : layout.pieces)
      flat.insert(flat.end(), {p.block, p.range[0][0], p.range[0][1], p.range[1][0], p.range[1][1], p.range[2][0], p.range[2][1]});
    const std::vector<std::int64_t> all = gather(comm, flat);
    collective(comm, [&] {
      if (!same) throw UsageError("the ranks describe different grids (block ids or dimensions differ from rank 0's)");
      if (m.rank != 0) return;
      std::vector<BlockPiece> pieces;
      for (std::size_t k = 0; k + 7 <= all.size(); k += 7)
        pieces.push_back({all[k], {{{all[k + 1], all[k + 2]}, {all[k + 3], all[k + 4]}, {all[k + 5], all[k + 6]}}}});
      check_cover(layout.blocks, pieces);
      if (options.compress.on() && cgns) extents = CompressedBlocks::chunk_extents(layout.blocks, pieces);
    });
    if (options.compress.on() && cgns) {
      const std::string bytes = broadcast(comm, std::string(reinterpret_cast<const char*>(extents.data()), extents.size() * sizeof extents[0]));
      extents.resize(bytes.size() / sizeof extents[0]);
      if (!bytes.empty()) std::memcpy(extents.data(), bytes.data(), bytes.size());
    }
  }
  Hints hints = Hints::from_environment();
  hints.merge(options.hints);
  m.options.hints = hints;
  m.mpi_info = hints.to_info();
  // A CGNS file is one once its tree is written, a Tecplot file once its header is: at close.
  m.name.emplace(comm, path, options.atomic || cgns || tecplot);
  try {
    const CreatingTemporary creating;
    if (cgns) {  // every array's place, known from the grid alone
      const std::int64_t array = m.info.first_point(layout.blocks.size()) * options.real_bytes;
      for (int c = 0; c < 3; ++c) m.info.grid_offsets.push_back(kCgnsData + c * array);
    }
    if (m.info.format == "hdf5") {
#ifdef ANABRANCH_HAVE_HDF5
      std::map<std::string, std::string> prov;
      prov["strategy"] = options.strategy;
      prov["ranks"] = std::to_string(m.size);
      prov["hints"] = hints.str();
      m.h5 = std::make_unique<block_h5::File>(comm, m.name->open_path(), path, layout.blocks, variables, options.real_bytes, m.mpi_info, prov,
                                              options.compress);
#endif
    }
    if (tecplot) {
      const std::string base = path.substr(path.find_last_of('/') + 1);
      m.tecplot = std::make_unique<TecplotBlocks>(comm, m.layout, m.info, options.frames, base.substr(0, base.find_last_of('.')));
    }
    m.frame = std::make_unique<BlockFrame>(m.layout, m.info, false);
    if (options.compress.on() && cgns) {
      m.packed_fh = open_shared_file(comm, m.setup(*m.frame));
      m.packed = std::make_unique<CompressedBlocks>(comm, m.layout, std::move(extents), options.compress, options.real_bytes,
                                                    m.info.nvar(), kCgnsData);
    } else if (!options.compress.on()) {  // (compressed HDF5: HDF5's collective filtered writes, write_h5_compressed)
      m.strategy = make_strategy(options.strategy);
      m.strategy->open(m.setup(*m.frame));  // a raw file left from before is truncated there
    }
    collective(comm, [&] {
      if (m.rank != 0 || m.info.format != "raw") return;
      m.info.provenance = provenance::facts();
      m.info.provenance["strategy"] = options.strategy;
      m.info.provenance["ranks"] = std::to_string(m.size);
      if (!m.name->temporary()) m.write_sidecar();
    });
  } catch (...) {
    m.abandon(0);
    if (m.mpi_info != MPI_INFO_NULL) MPI_Info_free(&m.mpi_info);
    throw;
  }
}

BlockWriter::~BlockWriter() {
  Impl& m = *impl_;
  // Not closed: the handles are left to MPI_Finalize (the destructor is not collective); a
  // tool's temporary goes (with the name).
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized && m.mpi_info != MPI_INFO_NULL) MPI_Info_free(&m.mpi_info);
}

std::int64_t BlockWriter::frames() const { return impl_->info.frames(); }
const std::string& BlockWriter::path() const { return impl_->path; }

void BlockWriter::Impl::write_cgns_tree() {
  collective(comm, [&] {
    if (rank != 0) return;
    const std::string& open = name->open_path();
    const int fd = ::open(open.c_str(), O_WRONLY);
    if (fd < 0) throw IoError::from_errno("cannot open", open);
    auto put = [&](std::int64_t at, const std::string& bytes) {
      try {
        pwrite_all(fd, bytes.data(), bytes.size(), at, path + " (its CGNS tree)");
      } catch (...) {
        ::close(fd);
        throw;
      }
    };
    cgns::BlockFile tree;
    tree.blocks = info.blocks;
    tree.variables = info.variables;
    tree.times = info.times;
    tree.real_bytes = info.real_bytes;
    std::int64_t data_end = 0;
    if (packed) {
      tree.codec = cgns::codec_filters(options.compress);
      tree.stored = [&](std::int64_t f, std::size_t b, int v) -> const cgns::Stored& { return packed->stored(f, b, v); };
      data_end = packed->end();
    } else {
      tree.address = [&](std::int64_t f, std::size_t b, int v) { return info.value_offset(f, b, v); };
      data_end = std::max(info.frame_end(0, true), info.frames() ? info.frame_end(info.frames() - 1) : 0);
    }
    // The file's description (blocks, variables, times, where the arrays are) after the
    // arrays, for anabranch's readers: the tree is for everyone else.
    BlockFileInfo described = info;
    for (const auto& b : info.blocks) described.zones.push_back("block_" + std::to_string(b.id));
    if (packed) {
      described.compression = options.compress.str();
      described.grid_offsets.clear();
    }
    described.provenance = provenance::facts();
    described.provenance["strategy"] = options.strategy;
    described.provenance["ranks"] = std::to_string(size);
    tree.index = described.to_json();
    tree.index.insert(1, std::string(cgns::kEndPlaceholder) + ",");
    tree.index_address = data_end;
    std::int64_t end = 0;
    const std::int64_t root = cgns::write_tree(tree, data_end + static_cast<std::int64_t>(tree.index.size()), put, end);
    cgns::finish_index(tree.index, end);
    put(data_end, tree.index);
    put(0, hdf5_bytes::Writer::superblock(root, end));
    if (::close(fd) != 0) throw IoError::from_errno("cannot close", open);
  });
}

template <class T>
void BlockWriter::Impl::write_h5_compressed(std::int64_t f, bool grid, const T* const* arrays) {
#ifdef ANABRANCH_HAVE_HDF5
  const int n = grid ? 3 : info.nvar();
  const Compression c = grid ? Compression{Compression::Mode::Lossless, 0, options.compress.codec} : options.compress;
  const std::vector<double> bound = array_bounds(comm, layout, c, n, arrays);
  std::vector<std::int64_t> first(layout.blocks.size());
  for (std::size_t b = 0; b < first.size(); ++b) first[b] = info.first_point(b);
  std::vector<std::array<std::int64_t, 2>> runs;
  std::vector<unsigned char> values;
  for (int a = 0; a < n; ++a) {
    packed_runs(layout, first, a, n, arrays, info.real_bytes, bound[static_cast<std::size_t>(a)], runs, values);
    h5->write(f, grid ? -(a + 1) : a, runs, values.data());
  }
#endif
}

void BlockWriter::Impl::after_frame() {
  collective(comm, [&] {
    // MPI-IO libraries may report a failed collective write on an aggregator only, or not in
    // the count (Open MPI): every byte of the frame must be in the file.
    if (rank != 0) return;
    const std::int64_t end = info.frame_end(info.frames() - 1), bytes = file_size(name->open_path());
    if (bytes < end)
      throw IoError("cannot write " + path + ": frame " + std::to_string(info.frames() - 1) + " ends at byte " + std::to_string(end) +
                    " but the file holds " + std::to_string(bytes) + " (" + write_failure_reason(name->open_path(), end) + ")");
    if (info.format == "raw" && !name->temporary()) write_sidecar();
  });
}

template <class T>
void BlockWriter::write_grid(const T* const* xyz) {
  Impl& m = *impl_;
  if (m.closed) throw UsageError("write_grid after close: " + m.path);
  collective(m.comm, [&] {
    if (m.info.format == "raw") throw UsageError("the raw block format holds values only; write the grid to an HDF5, CGNS or Tecplot block file (or PLOT3D)");
    if (m.grid_written) throw UsageError("the grid of " + m.path + " is written once");
  });
  try {
    end_frame();
    if (m.packed || m.options.compress.on()) {
#ifdef ANABRANCH_HAVE_HDF5
      if (m.h5) {
        m.h5->add_grid();
        m.write_h5_compressed(0, true, xyz);
      }
#endif
      if (m.packed) m.packed->write(m.packed_fh, m.path, 0, true, xyz);
      m.grid_written = true;
      m.info.has_grid = true;
      return;
    }
#ifdef ANABRANCH_HAVE_HDF5
    if (m.h5) m.info.grid_offsets = m.h5->add_grid();
#endif
    if (m.tecplot && m.info.frames() == 0) {  // kept for the first frame, written with it
      m.tecplot->keep_grid(xyz);
    } else {
      if (m.tecplot) m.tecplot->measure(0, true, xyz);
      m.grid_pass(xyz);
      if (m.tecplot) m.tecplot->write_heads(m.name->open_path());
    }
    m.grid_written = true;
    m.info.has_grid = true;
  } catch (...) {
    m.abandon(0);
    throw;
  }
}

template <class T>
void BlockWriter::Impl::grid_pass(const T* const* xyz) {
  const BlockFrame grid(layout, info, true);
  const auto s = make_strategy(options.strategy);
  // The file was made (a file left from before truncated) when the writer opened: the
  // frames written since stay (CGNS's grid of the index space goes in at close).
  StrategySetup setup_grid = setup(grid);
  setup_grid.truncate = false;
  s->open(setup_grid);
  const ArrayEncoder<T> values(xyz, info.real_bytes);
  s->write({0, 0.0, &values, nullptr});
  s->close();
}

template <class T>
void BlockWriter::begin_frame(double time, const T* const* values) {
  Impl& m = *impl_;
  if (m.closed) throw UsageError("begin_frame after close: " + m.path);
  end_frame();
  const std::int64_t f = m.info.frames();
  try {
    if (m.options.compress.on()) {  // compressed and written before it returns
#ifdef ANABRANCH_HAVE_HDF5
      if (m.h5) {
        m.h5->add_frame(f, time);
        m.write_h5_compressed(f, false, values);
      }
#endif
      if (m.packed) m.packed->write(m.packed_fh, m.path, f, false, values);
      m.info.times.push_back(time);
      return;
    }
    if (m.info.format == "raw")
      collective(m.comm, [&] { check_size_limit(m.path, m.info.value_offset(f + 1, 0, 0), "frame " + std::to_string(f)); });
    if (m.info.format == "cgns") {  // the frame's arrays after the grid and the frames before
      const std::int64_t array = m.info.first_point(m.info.blocks.size()) * m.info.real_bytes;
      for (int v = 0; v < m.info.nvar(); ++v) m.info.dataset_offsets.push_back(kCgnsData + (3 + f * m.info.nvar() + v) * array);
      collective(m.comm, [&] { check_size_limit(m.path, kCgnsData + (3 + (f + 1) * m.info.nvar()) * array, "frame " + std::to_string(f)); });
    }
    if (m.tecplot) {  // the frame's zones after the header's room and the frames before
      m.tecplot->place_frame(f);
      collective(m.comm, [&] { check_size_limit(m.path, m.info.frame_end(f), "frame " + std::to_string(f)); });
      m.tecplot->measure(f, false, values);
      if (f == 0 && m.tecplot->grid_kept()) {  // the first frame's entries whole, with the grid kept for them
        m.info.times.push_back(time);
        const EntryEncoder<T> encoder(m.tecplot->kept_grid(), values, m.info.nvar(), m.info.real_bytes);
        const auto s = make_strategy(m.options.strategy);
        StrategySetup first = m.setup(m.tecplot->entries(true));
        first.truncate = false;
        s->open(first);
        s->write({0, time, &encoder, nullptr});
        s->close();
        m.tecplot->written(0);
        m.tecplot->drop_grid();
        m.after_frame();
        return;
      }
      if (f > 0) {  // a later frame's entries whole
        if (!m.entries) {
          m.entries = make_strategy(m.options.strategy);
          StrategySetup later = m.setup(m.tecplot->entries(false));
          later.truncate = false;
          m.entries->open(later);
        }
        m.info.times.push_back(time);
        const ArrayEncoder<T> encoder(values, m.info.real_bytes);
        m.entries->write({f, time, &encoder, nullptr});
        m.active = m.entries.get();
        m.heads_pending = f;
        m.pending = true;
        return;
      }
      // the first frame before the grid: its arrays where they go, the heads once the grid comes
    }
#ifdef ANABRANCH_HAVE_HDF5
    if (m.h5) {
      const auto off = m.h5->add_frame(f, time);
      m.info.dataset_offsets.insert(m.info.dataset_offsets.begin() + f * m.info.nvar(), off.begin(), off.end());
    }
#endif
    m.info.times.push_back(time);
    const ArrayEncoder<T> encoder(values, m.info.real_bytes);
    m.strategy->write({f, time, &encoder, nullptr});
    m.pending = true;
  } catch (...) {
    m.abandon(f);  // every rank is here: the errors of collective steps are agreed
    throw;
  }
}

void BlockWriter::end_frame() {
  Impl& m = *impl_;
  if (!m.pending) return;
  m.pending = false;
  try {
    (m.active ? m.active : m.strategy.get())->wait();
    m.active = nullptr;
    m.after_frame();
    if (m.heads_pending >= 0) m.tecplot->written(m.heads_pending);  // their heads went with the values
    m.heads_pending = -1;
    if (m.tecplot) m.tecplot->write_heads(m.name->open_path());
  } catch (...) {
    m.abandon(m.info.frames() - 1);
    throw;
  }
}

template <class T>
void BlockWriter::write_frame(double time, const T* const* values) {
  begin_frame(time, values);
  end_frame();
}

void BlockWriter::close() {
  Impl& m = *impl_;
  if (m.closed) return;
  end_frame();
  if ((m.info.format == "cgns" || m.tecplot) && !m.grid_written) {
    // CGNS and Tecplot want coordinates: without the caller's, the index space, the blocks
    // one after another along x.
    const auto first = m.layout.point_offsets();
    std::vector<std::vector<double>> xyz;
    for (std::size_t p = 0; p < m.layout.pieces.size(); ++p) {
      const auto& piece = m.layout.pieces[p];
      const auto md = m.layout.memory_dims(p);
      for (int c = 0; c < 3; ++c) {
        auto& a = xyz.emplace_back(static_cast<std::size_t>(m.layout.memory_points(p)), 0.0);
        for (std::int64_t at = 0; at < m.layout.memory_points(p); ++at) {
          const std::int64_t ijk[3] = {at % md[0], at / md[0] % md[1], at / (md[0] * md[1])};
          a[static_cast<std::size_t>(at)] = static_cast<double>(piece.range[c][0] + ijk[c] - m.layout.halo[static_cast<std::size_t>(c)] +
                                                                (c == 0 ? first[static_cast<std::size_t>(piece.block)] : 0));
        }
      }
    }
    std::vector<const double*> ptr;
    for (const auto& a : xyz) ptr.push_back(a.data());
    write_grid(ptr.data());
  }
  try {  // a grid kept for a first frame that never came: its zones' arrays, the heads at close
    if (m.tecplot && m.tecplot->grid_kept()) {
      m.grid_pass(m.tecplot->kept_grid());
      m.tecplot->drop_grid();
    }
  } catch (...) {
    m.abandon(0);
    throw;
  }
  m.closed = true;
  try {
    if (m.entries) m.entries->close();
    m.entries.reset();
    if (m.strategy) m.strategy->close();
    m.strategy.reset();
    if (m.packed_fh != MPI_FILE_NULL) close_shared_file(m.comm, m.packed_fh);
    if (m.info.format == "cgns") m.write_cgns_tree();
    if (m.tecplot) m.tecplot->close(m.name->open_path(), m.info.times);
#ifdef ANABRANCH_HAVE_HDF5
    if (m.h5) {
      m.h5->close();
      m.h5.reset();
    }
#endif
    if (m.info.format == "raw")
      m.name->check_size(m.info.frames() == 0 ? 0 : m.info.value_offset(m.info.frames(), 0, 0) - (m.info.records ? 4 : 0), m.info.frames());
    m.name->commit();
    collective(m.comm, [&] {
      if (m.rank != 0) return;
      if (m.info.format == "raw") try {
          m.write_sidecar();
        } catch (...) {
          if (m.name->temporary()) ::unlink(m.path.c_str());
          throw;
        }
#ifdef ANABRANCH_HAVE_HDF5
      if (m.info.format == "hdf5" && m.options.xdmf) block_h5::write_xdmf(m.path, block_h5::describe(m.path));
#endif
    });
  } catch (...) {
    m.abandon(m.info.frames());  // an HDF5 file not closed (no room to finish it) is closed here
    throw;
  }
}

template void BlockWriter::write_grid<float>(const float* const*);
template void BlockWriter::write_grid<double>(const double* const*);
template void BlockWriter::write_frame<float>(double, const float* const*);
template void BlockWriter::begin_frame<float>(double, const float* const*);
template void BlockWriter::begin_frame<double>(double, const double* const*);
template void BlockWriter::write_frame<double>(double, const double* const*);

// ---------------------------------------------------------------------------------------
// Reader

struct BlockReader::Impl {
  std::unique_ptr<FileSource> input;  // held open: registers the file as an input (no output may replace it)
  MPI_Comm comm = MPI_COMM_NULL;
  int rank = 0;
  BlockLayout layout;
  BlockFileOptions options;
  BlockFileInfo info;
  MPI_File fh = MPI_FILE_NULL;

  // The frames' runs and their reader, and the grid's (made on first use).
  std::pair<std::unique_ptr<BlockFrame>, std::unique_ptr<RunReader>> frame_reader, grid_reader;
#ifdef ANABRANCH_HAVE_HDF5
  std::unique_ptr<ChunkedArrays> chunked;  // a compressed file: its arrays through HDF5
#endif

  template <class T>
  void read(std::int64_t frame, bool grid, T* const* arrays);
};

BlockReader::BlockReader(MPI_Comm comm, const std::string& path, const BlockLayout& layout, const BlockFileOptions& options)
    : impl_(std::make_unique<Impl>()) {
  Impl& m = *impl_;
  m.comm = comm;
  MPI_Comm_rank(comm, &m.rank);
  m.options = options;
  // Rank 0's description, for every rank: its arrays' places (a Tecplot file's: blocks x
  // arrays words) as they are, the rest as JSON text.
  std::string description, places;
  collective(comm, [&] {
    if (m.rank != 0) return;
    BlockFileInfo info = describe_block_file(path);
    places.assign(reinterpret_cast<const char*>(info.block_offsets.data()), info.block_offsets.size() * sizeof(std::int64_t));
    info.block_offsets.clear();
    description = info.to_json();
  });
  m.info = BlockFileInfo::from_json(broadcast(comm, std::move(description)));
  places = broadcast(comm, std::move(places));
  m.info.block_offsets.resize(places.size() / sizeof(std::int64_t));
  if (!places.empty()) std::memcpy(m.info.block_offsets.data(), places.data(), places.size());
  collective(comm, [&] { m.input = std::make_unique<FileSource>(path); });
  m.layout = layout;
  collective(comm, [&] {
    if (m.layout.blocks.empty()) m.layout.blocks = m.info.blocks;
    if (m.layout.blocks.size() != m.info.blocks.size())
      throw UsageError(path + " holds " + std::to_string(m.info.blocks.size()) + " blocks where the layout has " + std::to_string(m.layout.blocks.size()));
    for (std::size_t b = 0; b < m.info.blocks.size(); ++b)
      if (m.layout.blocks[b].id != m.info.blocks[b].id || m.layout.blocks[b].dims != m.info.blocks[b].dims)
        throw UsageError(path + ": block " + std::to_string(m.info.blocks[b].id) + " (" + std::to_string(b + 1) +
                         "th) differs from the layout's (id or dimensions)");
    m.layout.check();
  });
  m.fh = open_input_file(comm, path, options.hints);
}

BlockReader::~BlockReader() = default;

const BlockFileInfo& BlockReader::info() const { return impl_->info; }

template <class T>
void BlockReader::Impl::read(std::int64_t frame, bool grid, T* const* arrays) {
#ifdef ANABRANCH_HAVE_HDF5
  if (!info.compression.empty()) {  // each rank its pieces' boxes, HDF5 decoding the chunks they touch
    collective(comm, [&] {
      if (!chunked) chunked = std::make_unique<ChunkedArrays>(info);
      const int n = grid ? 3 : info.nvar();
      std::vector<double> box;
      for (std::size_t p = 0; p < layout.pieces.size(); ++p) {
        const BlockPiece& piece = layout.pieces[p];
        const auto e = piece.extent();
        const auto m = layout.memory_dims(p);
        box.resize(static_cast<std::size_t>(piece.points()));
        for (int a = 0; a < n; ++a) {
          chunked->read(frame, static_cast<std::size_t>(piece.block), grid ? -(a + 1) : a, piece.range, box.data());
          T* to = arrays[p * static_cast<std::size_t>(n) + static_cast<std::size_t>(a)];
          for (std::int64_t k = 0; k < e[2]; ++k)
            for (std::int64_t j = 0; j < e[1]; ++j) {
              const double* from = box.data() + (k * e[1] + j) * e[0];
              T* line = to + ((k + layout.halo[2]) * m[1] + j + layout.halo[1]) * m[0] + layout.halo[0];
              for (std::int64_t i = 0; i < e[0]; ++i) line[i] = static_cast<T>(from[i]);
            }
        }
      }
    });
    return;
  }
#endif
  auto& [runs, reader] = grid ? grid_reader : frame_reader;
  if (!reader) {
    runs = std::make_unique<BlockFrame>(layout, info, grid);
    const RunReading how = RunReading::of(options.strategy, options.buffer_bytes, options.writers_per_node);
    reader = std::make_unique<RunReader>(comm, fh, info.path, *runs, how);
  }
  reader->read(frame, ArrayDecoder<T>(arrays, info.real_bytes));
}

template <class T>
void BlockReader::read_frame(std::int64_t frame, T* const* values) {
  Impl& m = *impl_;
  collective(m.comm, [&] {
    if (frame < 0 || frame >= m.info.frames())
      throw UsageError(m.info.path + " holds " + std::to_string(m.info.frames()) + " frames; frame " + std::to_string(frame) + " asked");
  });
  m.read(frame, false, values);
}

template <class T>
void BlockReader::read_grid(T* const* xyz) {
  Impl& m = *impl_;
  collective(m.comm, [&] {
    if (!m.info.has_grid) throw FormatError(m.info.path + ": the file holds no grid coordinates");
  });
  m.read(0, true, xyz);
}

void BlockReader::close() {
  Impl& m = *impl_;
  if (m.fh == MPI_FILE_NULL) return;
  m.frame_reader = {};
  m.grid_reader = {};
#ifdef ANABRANCH_HAVE_HDF5
  m.chunked.reset();
#endif
  const int rc = MPI_File_close(&m.fh);
  m.input.reset();
  collective(m.comm, [&] { check_mpi(rc, "MPI_File_close"); });
}

template void BlockReader::read_frame<float>(std::int64_t, float* const*);
template void BlockReader::read_frame<double>(std::int64_t, double* const*);
template void BlockReader::read_grid<float>(float* const*);
template void BlockReader::read_grid<double>(double* const*);

}  // namespace anabranch::pio
