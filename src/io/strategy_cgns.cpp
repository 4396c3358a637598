// cgns: a mesh result as one CGNS file (docs/formats/cgns.md): one unstructured zone of the
// mesh's elements, a vertex FlowSolution per frame. Every array has its place from the
// header alone: at open each rank writes its share of the mesh (coordinates, IPOBO, the
// elements' nodes, read in shares from the geometry), each frame's values go to their places
// through the aggregated strategy, as into a SERAFIN file; at close rank 0 writes the CGNS
// tree after them (blockformats/cgns.hpp). A 3D result's CoordinateZ is its first frame's
// first variable (TELEMAC-3D's elevation), as in its VTKHDF file.
// Compressed (compress=SPEC): every array is an HDF5 chunked dataset through HDF5's byte
// shuffle and deflate or zstd, a chunk per rank (at most chunk_bytes; 256 MiB by default).
// Each rank reads its share of the mesh and regathers its block of each frame's values
// (io/node_blocks.hpp), rounds them within the bound, compresses its chunks and writes them
// one after another at the place the ranks' sizes give it (an exclusive scan); rank 0 is
// told each chunk's place and size (O(chunks)) for the tree's chunk indexes. The mesh is
// lossless.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <nlohmann/json.hpp>
#include <limits>
#include <map>
#include <optional>

#include "blockformats/cgns.hpp"
#include "core/error.hpp"
#include "core/io.hpp"
#include "formats/hdf5_bytes.hpp"
#include "h5/vtkhdf.hpp"
#include "io/mesh_source.hpp"
#include "io/node_blocks.hpp"
#include "io/shared_file.hpp"
#include "io/strategy.hpp"
#include "parallel/mpi_util.hpp"
#include "parallel/rounding.hpp"

namespace anabranch::pio {
namespace {

constexpr std::int64_t kData = 4096;  // the arrays from here on; the superblock before
constexpr std::int64_t kChunkBytes = std::int64_t{256} << 20;  // a compressed chunk's most, by default

// Compressed: an array of n values in equal chunks, holder r compressing chunks
// [r * per, (r + 1) * per) (a chunk a holder, within `most` bytes), each a whole number of
// `unit` values (an element's nodes).
struct Cut {
  std::int64_t n = 0, chunk = 1, per = 1;
  Cut() = default;
  Cut(std::int64_t values, std::int64_t unit, int holders, int value_bytes, std::int64_t most) : n(values) {
    const std::int64_t units = (n + unit - 1) / unit, mine = std::max<std::int64_t>(1, (units + holders - 1) / holders);
    const std::int64_t chunk_units = std::min(mine, std::max<std::int64_t>(1, most / (unit * value_bytes)));
    chunk = chunk_units * unit;
    per = (mine + chunk_units - 1) / chunk_units;
  }
  std::int64_t chunks() const { return (n + chunk - 1) / chunk; }
  std::int64_t first(int r) const { return r < 0 ? n : std::min(n, r * per * chunk); }
  std::int64_t end(int r) const { return r < 0 ? n : std::min(n, (r + 1) * per * chunk); }
  // The values a holder's piece has room for: its chunks whole (holder -1: none).
  std::int64_t room(int r) const {
    const std::int64_t a = first(r), b = end(r);
    return a >= b ? 0 : (b + chunk - 1) / chunk * chunk - a;
  }
};

// A compressed array's share on this rank: frame f's variable var (the mesh: frame 0, var
// -1, -2, -3 for x, y, z, MeshFile::kIpobo, kConnectivity), values [cut.first(me),
// cut.end(me)), then zeros up to its chunks' end (the last chunk is stored whole): room for
// cut.room() values.
struct Piece {
  std::int64_t f = 0;
  int var = 0;
  Cut cut;
  int value_bytes = 4;
  const unsigned char* values = nullptr;
};
// Where a chunk went (gathered on rank 0): 8-byte words.
struct Placed {
  std::int64_t f, var, k, address, bytes;
};

// The runs of a values-only frame's first variable: TELEMAC-3D's elevation, a 3D result's Z.
class FirstVariable final : public FrameLayout {
 public:
  FirstVariable(const FrameLayout& f, std::int64_t bytes) : f_(f), bytes_(bytes) {}
  int value_bytes() const override { return f_.value_bytes(); }
  std::int64_t frame_bytes() const override { return bytes_; }
  std::pair<std::int64_t, std::int64_t> locate(std::int64_t, std::int64_t at) const override { return {at, bytes_ - at}; }
  void for_each_run(const std::function<void(const Run&)>& f) const override {
    f_.for_each_run([&](const Run& r) {
      if (r.array == 0) f(r);
    });
  }

 private:
  const FrameLayout& f_;
  std::int64_t bytes_;
};

class CgnsStrategy final : public Strategy {
 public:
  const char* name() const override { return "cgns"; }
  bool serafin_file() const override { return false; }
  bool written_at_close() const override { return true; }
  PhaseTimes phases() const override { return bytes_ ? bytes_->phases() : done_; }

  void open(const StrategySetup& setup) override {
    s_ = setup;
    MPI_Comm_rank(s_.comm, &rank_);
    MPI_Comm_size(s_.comm, &size_);
    const auto& h = s_.header;
    rs_ = s_.layout.real_bytes;
    array_ = h.npoin * rs_;
    three_d_ = h.nplan() > 1;
    x_ = kData;
    y_ = x_ + array_;
    z_ = three_d_ ? y_ + array_ : -1;
    ipobo_ = (three_d_ ? z_ : y_) + array_;
    conn_ = ipobo_ + h.npoin * 4;
    frames_at_ = conn_ + h.nelem * h.ndp * 4;
    collective(s_.comm, [&] {
      if (h.ndp != 2 && h.ndp != 3 && h.ndp != 4 && h.ndp != 6)
        throw UsageError(s_.final_path + ": CGNS has no element of " + std::to_string(h.ndp) + " nodes for this mesh");
      if (s_.compress.codec == Compression::Codec::Zstd && s_.compress.on() && !have_zstd())
        throw UsageError("compression '" + s_.compress.str() + "': this anabranch was built without zstd (libzstd)");
    });
    if (s_.compress.on()) {
      open_compressed();
      return;
    }
    write_mesh();
    frame_ = std::make_unique<StretchedFrame>(*s_.frame, array_);
    StrategySetup b = s_;
    b.frame = frame_.get();
    b.truncate = false;  // made above, with the mesh in it
    b.write_header = nullptr;
    b.copy_mesh = nullptr;
    bytes_ = make_strategy("aggregated");
    bytes_->open(b);
  }

  void write(const EncodedFrame& frame) override {
    if (s_.compress.on()) {
      write_compressed(frame);
      return;
    }
    std::vector<std::int64_t> at;
    for (int v = 0; v < s_.header.nvar(); ++v) at.push_back(frames_at_ + (frame.index * s_.header.nvar() + v) * array_);
    collective(s_.comm, [&] { check_size_limit(s_.final_path, at.empty() ? frames_at_ : at.back() + array_, "frame " + std::to_string(frame.index)); });
    frame_->set(frame.index, at);
    bytes_->write(frame);
    times_.push_back(frame.time);
    if (three_d_ && frame.index == 0 && s_.header.nvar() > 0) {  // CoordinateZ: the first variable of the first frame
      bytes_->wait();
      const FirstVariable first(*s_.frame, array_);
      StretchedFrame z(first, array_);
      z.set(0, {z_});
      StrategySetup b = s_;
      b.frame = &z;
      b.truncate = false;
      b.write_header = nullptr;
      b.copy_mesh = nullptr;
      auto once = make_strategy("aggregated");
      once->open(b);
      once->write({0, frame.time, frame.encoder, nullptr});
      once->close();
      z_written_ = true;
    }
  }

  void wait() override {
    if (bytes_) bytes_->wait();
  }

  void close() override {
    if (s_.compress.on()) {
      if (three_d_ && !z_written_) {  // no frame: a CoordinateZ of zeros
        std::vector<unsigned char> zeros(static_cast<std::size_t>(values_.room(rank_) * rs_));
        put({0, -3, values_, rs_, zeros.data()}, rank_, "the mesh");
      }
      close_shared_file(s_.comm, fh_);
    } else {
      bytes_->close();
      done_ = bytes_->phases();
      bytes_.reset();
    }
    write_tree();
  }

  void abandon() override {
    if (bytes_) try {
        bytes_->abandon();
      } catch (...) {
      }
    bytes_.reset();
    if (fh_ != MPI_FILE_NULL) MPI_File_close(&fh_);
  }

 private:
  // Compressed: the file made, each rank's share of the mesh's arrays compressed into it.
  void open_compressed() {
    const auto& h = s_.header;
    most_ = s_.chunk_bytes > 0 ? std::min<std::int64_t>(s_.chunk_bytes, 0xffffffffLL) : kChunkBytes;
    values_ = Cut(h.npoin, 1, size_, rs_, most_);
    next_ = kData;
    StrategySetup create = s_;
    create.truncate = true;
    create.write_header = nullptr;  // the CGNS file has no SERAFIN header
    fh_ = open_shared_file(s_.comm, create);
    blocks_.emplace(s_.comm, *s_.owned, h.npoin, values_.per * values_.chunk);
    const MeshSource mesh(s_, rank_);
    // Every rank a share of the geometry's; else rank 0 the whole mesh it holds. An array at
    // a time: read, compressed, written, let go.
    const int holders = mesh.shared() ? size_ : 1, me = mesh.shared() ? rank_ : rank_ == 0 ? 0 : -1;
    const Cut nodes(h.npoin, 1, holders, rs_, most_), ipobo(h.npoin, 1, holders, 4, most_), conn(h.nelem * h.ndp, h.ndp, holders, 4, most_);
    for (int c = 0; c < 2; ++c) {
      std::vector<unsigned char> bytes;
      collective(s_.comm, [&] {
        if (me < 0) return;
        const std::int64_t n0 = nodes.first(me), n = nodes.end(me) - n0;
        std::vector<double> xy(static_cast<std::size_t>(n));
        mesh.coordinates(c, n0, n, xy.data());
        bytes.assign(static_cast<std::size_t>(nodes.room(me) * rs_), 0);
        serafin::encode_reals(xy.data(), n, h.precision, ByteOrder::Little, bytes.data());
      });
      put({0, -(c + 1), nodes, rs_, bytes.data()}, me, "the mesh");
    }
    std::vector<std::int32_t> ints;
    collective(s_.comm, [&] {
      if (me < 0) return;
      const std::int64_t i0 = ipobo.first(me), n = ipobo.end(me) - i0;
      ints.assign(static_cast<std::size_t>(ipobo.room(me)), 0);
      mesh.ipobo(i0, n, ints.data());
      to_order<4>(reinterpret_cast<unsigned char*>(ints.data()), static_cast<std::size_t>(n), ByteOrder::Little);
    });
    put({0, cgns::MeshFile::kIpobo, ipobo, 4, reinterpret_cast<const unsigned char*>(ints.data())}, me, "the mesh");
    collective(s_.comm, [&] {
      if (me < 0) return;
      const std::int64_t e0 = conn.first(me) / h.ndp, ne = conn.end(me) / h.ndp - e0;
      ints.assign(static_cast<std::size_t>(conn.room(me)), 0);
      ints.shrink_to_fit();
      mesh.rows(e0, ne, ints.data());
      to_order<4>(reinterpret_cast<unsigned char*>(ints.data()), static_cast<std::size_t>(ne * h.ndp), ByteOrder::Little);
    });
    put({0, cgns::MeshFile::kConnectivity, conn, 4, reinterpret_cast<const unsigned char*>(ints.data())}, me, "the mesh");
  }

  // Compressed: each variable of the frame regathered by blocks of nodes, rounded within the
  // bound (rel: its range over every rank's block), compressed, written.
  void write_compressed(const EncodedFrame& frame) {
    const std::int64_t n = blocks_->count();
    std::vector<unsigned char> block(static_cast<std::size_t>(values_.room(rank_) * rs_));  // zeros past n
    for (int v = 0; v < s_.header.nvar(); ++v) {
      blocks_->gather(*frame.encoder, v, rs_, block.data());
      if (three_d_ && frame.index == 0 && v == 0) {  // CoordinateZ: the first variable of the first frame, exact
        put({0, -3, values_, rs_, block.data()}, rank_, "the mesh");
        z_written_ = true;
      }
      if (s_.compress.lossy()) round_frame(s_.comm, s_.compress, block.data(), n, rs_);
      put({frame.index, v, values_, rs_, block.data()}, rank_, "frame " + std::to_string(frame.index));
    }
    times_.push_back(frame.time);
  }

  // Collective: this rank's chunks of the piece (me: its place among the holders; -1 none)
  // compressed and written one after another from next_ + the bytes of the ranks before it;
  // rank 0 told where each chunk went.
  void put(const Piece& p, int me, const std::string& what) {
    std::string buffer;
    std::vector<Placed> placed;
    const double t0 = MPI_Wtime();
    collective(s_.comm, [&] {
      if (me < 0) return;
      const std::int64_t first = p.cut.first(me), end = p.cut.end(me), c = p.cut.chunk;
      for (std::int64_t k = first / c; first < end && k * c < end; ++k) {
        const unsigned char* from = p.values + (k * c - first) * p.value_bytes;  // c values, padded at the end
        const auto at = static_cast<std::int64_t>(buffer.size());
        encode_chunk(s_.compress, from, static_cast<std::size_t>(c), p.value_bytes, buffer);
        placed.push_back({p.f, p.var, k, at, static_cast<std::int64_t>(buffer.size()) - at});
      }
    });
    const double t1 = MPI_Wtime();
    std::int64_t mine = static_cast<std::int64_t>(buffer.size()), before = 0, all = mine;
    check_mpi(MPI_Exscan(&mine, &before, 1, MPI_INT64_T, MPI_SUM, s_.comm), "MPI_Exscan");
    if (rank_ == 0) before = 0;
    allreduce(s_.comm, &all, 1, MPI_INT64_T, MPI_SUM);
    collective(s_.comm, [&] {
      check_size_limit(s_.final_path, next_ + all, what);
      if (mine > 0) write_at(fh_, next_ + before, buffer.data(), mine, s_.final_path);
    });
    for (auto& q : placed) q.address += next_ + before;
    next_ += all;
    const std::vector<Placed> every = gather(s_.comm, placed);
    if (rank_ == 0) {
      stored_[{p.f, p.var}] = {{static_cast<std::uint64_t>(p.cut.chunk)}, std::vector<hdf5_bytes::Chunk>(static_cast<std::size_t>(p.cut.chunks()))};
      for (const auto& q : every) stored_[{q.f, static_cast<int>(q.var)}].chunks[static_cast<std::size_t>(q.k)] = {q.address, q.bytes};
    }
    done_.encode += t1 - t0;
    done_.write += MPI_Wtime() - t1;
  }

  // Each rank its share of the mesh's arrays, from the geometry; or rank 0 the mesh it holds.
  void write_mesh() {
    const auto& h = s_.header;
    StrategySetup create = s_;
    create.truncate = true;
    create.write_header = nullptr;  // the CGNS file has no SERAFIN header
    MPI_File fh = open_shared_file(s_.comm, create);
    const MeshSource mesh(s_, rank_);
    const int share = mesh.shared() ? rank_ : 0, shares = mesh.shared() ? size_ : 1;
    std::exception_ptr error;
    if (mesh.shared() || rank_ == 0) try {
        const std::int64_t n0 = h.npoin * share / shares, n1 = h.npoin * (share + 1) / shares;
        const std::int64_t e0 = h.nelem * share / shares, e1 = h.nelem * (share + 1) / shares;
        std::vector<double> xy(static_cast<std::size_t>(n1 - n0));
        std::vector<unsigned char> bytes;
        for (int c = 0; c < 2; ++c) {
          mesh.coordinates(c, n0, n1 - n0, xy.data());
          bytes.resize(static_cast<std::size_t>((n1 - n0) * rs_));
          serafin::encode_reals(xy.data(), n1 - n0, h.precision, ByteOrder::Little, bytes.data());
          write_at(fh, (c == 0 ? x_ : y_) + n0 * rs_, bytes.data(), static_cast<std::int64_t>(bytes.size()), s_.final_path);
        }
        std::vector<std::int32_t> ints(static_cast<std::size_t>(std::max(n1 - n0, (e1 - e0) * h.ndp)));
        mesh.ipobo(n0, n1 - n0, ints.data());
        to_order<4>(reinterpret_cast<unsigned char*>(ints.data()), static_cast<std::size_t>(n1 - n0), ByteOrder::Little);
        write_at(fh, ipobo_ + n0 * 4, ints.data(), (n1 - n0) * 4, s_.final_path);
        mesh.rows(e0, e1 - e0, ints.data());
        to_order<4>(reinterpret_cast<unsigned char*>(ints.data()), static_cast<std::size_t>((e1 - e0) * h.ndp), ByteOrder::Little);
        write_at(fh, conn_ + e0 * h.ndp * 4, ints.data(), (e1 - e0) * h.ndp * 4, s_.final_path);
      } catch (...) {
        error = std::current_exception();
      }
    agree(s_.comm, error);
    close_shared_file(s_.comm, fh);
  }

  // Rank 0: what anabranch reads back (the SERAFIN header's facts, where the arrays are),
  // the tree after the last frame, and the superblock.
  void write_tree() {
    collective(s_.comm, [&] {
      if (rank_ != 0) return;
      const auto& h = s_.header;
      const int fd = ::open(s_.path.c_str(), O_WRONLY);
      if (fd < 0) throw IoError::from_errno("cannot open", s_.path);
      auto put = [&](std::int64_t at, const std::string& bytes) {
        try {
          pwrite_all(fd, bytes.data(), bytes.size(), at, s_.final_path + " (its CGNS tree)");
        } catch (...) {
          ::close(fd);
          throw;
        }
      };
      nlohmann::json index = nlohmann::json::parse(serafin::header_facts(h));
      index["format"] = "anabranch-cgns-mesh";
      index["version"] = 1;
      index["sizes"] = {h.nelem, h.npoin, h.ndp, h.sizes4};
      index["precision"] = h.precision == Precision::Double ? "double" : "single";
      index["times"] = times_;
      if (s_.compress.on())
        index["compression"] = s_.compress.str();  // the arrays are HDF5's chunked datasets
      else
        index["arrays"] = {{"x", x_}, {"y", y_}, {"z", z_written_ ? z_ : -1}, {"ipobo", ipobo_}, {"connectivity", conn_}, {"frames", frames_at_}};
      cgns::MeshFile m;
      m.npoin = h.npoin;
      m.nelem = h.nelem;
      m.ndp = h.ndp;
      m.three_d = three_d_;
      for (const auto& v : h.variables) m.variables.push_back(v.name);
      m.times = times_;
      m.real_bytes = rs_;
      m.x = x_;
      m.y = y_;
      m.z = z_;
      m.connectivity = conn_;
      m.address = [&](std::int64_t f, int v) { return frames_at_ + (f * h.nvar() + v) * array_; };
      m.index = index.dump();
      m.index.insert(1, std::string(cgns::kEndPlaceholder) + ",");
      m.index_address = frames_at_ + static_cast<std::int64_t>(times_.size()) * h.nvar() * array_;
      m.ipobo_address = ipobo_;
      if (s_.compress.on()) {
        m.codec = cgns::codec_filters(s_.compress);
        m.stored = [&](std::int64_t f, int v) -> const cgns::Stored& { return stored_.at({f, v}); };
        m.index_address = next_;
      }
      std::int64_t end = 0;
      const std::int64_t root = cgns::write_tree(m, m.index_address + static_cast<std::int64_t>(m.index.size()), put, end);
      cgns::finish_index(m.index, end);
      put(m.index_address, m.index);
      put(0, hdf5_bytes::Writer::superblock(root, end));
      if (::close(fd) != 0) throw IoError::from_errno("cannot close", s_.path);
    });
  }

  StrategySetup s_;
  int rank_ = 0, size_ = 1, rs_ = 4;
  bool three_d_ = false, z_written_ = false;
  std::int64_t array_ = 0, x_ = 0, y_ = 0, z_ = -1, ipobo_ = 0, conn_ = 0, frames_at_ = 0;
  std::unique_ptr<StretchedFrame> frame_;
  std::unique_ptr<Strategy> bytes_;
  PhaseTimes done_;
  std::vector<double> times_;
  // Compressed: the file, its end so far (every rank the same), a chunk's most bytes, the
  // frames' cut and blocks of nodes, and (rank 0) where every array's chunks are.
  MPI_File fh_ = MPI_FILE_NULL;
  std::int64_t next_ = 0, most_ = kChunkBytes;
  Cut values_;
  std::optional<NodeBlocks> blocks_;
  std::map<std::pair<std::int64_t, int>, cgns::Stored> stored_;
};

}  // namespace

std::unique_ptr<Strategy> make_cgns_strategy() { return std::make_unique<CgnsStrategy>(); }

}  // namespace anabranch::pio
