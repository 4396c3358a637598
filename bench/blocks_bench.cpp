// One variant of the multi-block I/O benchmark (bench/blocks.py runs them side by side and
// samples every rank's memory from outside): a grid of N blocks of unequal sizes, dealt to
// the ranks by `balance`, each piece held with halos, V double-precision variables, F
// frames written into one file; or read back (a restart).
//
//   mpiexec -n 2 bench_blocks VARIANT DIR --blocks 256 --frame-bytes 1e9 --vars 5 --frames 2
//
// Variants (write): ceiling (plain pwrite of the same bytes, each rank its own contiguous
// range of one shared file), cosa-lines (one MPI_File_write_at per grid line: COSA's first
// restart writer), cosa-blocks (one write per block and variable, COSA's second), raw-
// independent, raw-collective, raw-aggregated, hdf5 and hdf5-independent (anabranch's concatenated layout), hdf5-
// per-block (one dataset per block and variable: CGNS's layout); (read) read-pread (plain
// pread of the same bytes), read-raw-collective, read-raw-independent, read-raw-aggregated,
// read-hdf5; open-hdf5
// and open-hdf5-per-block (rank 0 opens the file and finds every block's dimensions).
// --compute S: S seconds of the caller's compute after each frame (every rank busy on its
// arrays), left out of the times: what remains is the time the caller waits for its I/O.
// Prints one JSON object: seconds (write or read, then to disk with fdatasync), bytes,
// and the bytes of this rank's pieces.
#include <fcntl.h>
#include <mpi.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "grid/block_layout.hpp"
#include "partition/balance.hpp"
#include "layouts/block_io.hpp"
#include "h5/h5api.hpp"  // HDF5, opened at its first call as the library does

using namespace anabranch;

namespace {

double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

struct Args {
  std::string variant, dir;
  int blocks = 256, vars = 5, frames = 2, halo = 2;
  double frame_bytes = 1e9, compute = 0;
};

// Blocks of unequal sizes (each dimension 0.5x to 1.5x of the mean, some flat in k).
std::vector<BlockShape> make_grid(const Args& a) {
  std::mt19937 rng(42);
  std::uniform_real_distribution<double> f(0.5, 1.5);
  const double points = a.frame_bytes / 8 / a.vars / a.blocks;
  const double side = std::cbrt(points);
  std::vector<BlockShape> g;
  for (int b = 0; b < a.blocks; ++b) {
    const auto ni = std::max<std::int64_t>(2, static_cast<std::int64_t>(side * f(rng)));
    const auto nj = std::max<std::int64_t>(2, static_cast<std::int64_t>(side * f(rng)));
    const auto nk = std::max<std::int64_t>(1, static_cast<std::int64_t>(points / static_cast<double>(ni * nj) * f(rng)));
    g.push_back({b + 1, {ni, nj, nk}});
  }
  return g;
}

BlockLayout layout_for(const Args& a, int rank, int size) {
  BlockLayout l;
  l.blocks = make_grid(a);
  l.halo = {a.halo, a.halo, a.halo};
  std::vector<Block> blocks;
  for (const auto& s : l.blocks) {
    Block b;
    b.id = s.id;
    b.cells = s.dims;
    b.weight = static_cast<double>(s.points());
    blocks.push_back(b);
  }
  BalanceOptions o;
  o.method = BalanceMethod::Greedy;
  const auto r = balance(blocks, {}, size, o);
  for (std::size_t p = 0; p < r.pieces.size(); ++p) {
    if (r.process[p] != rank) continue;
    BlockPiece piece;
    piece.block = static_cast<std::int64_t>(l.block_index(r.pieces[p].block));
    const auto& d = l.blocks[static_cast<std::size_t>(piece.block)].dims;
    piece.range = r.pieces[p].count > 1 ? r.pieces[p].range : std::array<std::array<std::int64_t, 2>, 3>{{{0, d[0]}, {0, d[1]}, {0, d[2]}}};
    l.pieces.push_back(piece);
  }
  return l;
}

void check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "bench_blocks: %s failed\n", what);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
}

void sync_file(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY);
  if (fd >= 0) {
    ::fdatasync(fd);
    ::close(fd);
  }
}

// The caller's compute: `seconds` of work on its arrays (values kept: the next frame's).
void compute(std::vector<std::vector<double>>& q, double seconds) {
  if (seconds <= 0) return;
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  volatile double sink = 0;
  while (std::chrono::steady_clock::now() < end)
    for (const auto& x : q) {
      double s = 0;
      for (std::size_t i = 0; i < x.size(); i += 64) s += std::sqrt(x[i] + 1.0);
      sink = sink + s;
    }
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (argc < 3) {
    if (rank == 0) std::fprintf(stderr, "usage: bench_blocks VARIANT DIR [--blocks N] [--frame-bytes B] [--vars V] [--frames F] [--halo H]\n");
    MPI_Finalize();
    return 2;
  }
  Args a;
  a.variant = argv[1];
  a.dir = argv[2];
  for (int i = 3; i + 1 < argc; i += 2) {
    const std::string k = argv[i];
    if (k == "--blocks") a.blocks = std::atoi(argv[i + 1]);
    else if (k == "--frame-bytes") a.frame_bytes = std::atof(argv[i + 1]);
    else if (k == "--vars") a.vars = std::atoi(argv[i + 1]);
    else if (k == "--frames") a.frames = std::atoi(argv[i + 1]);
    else if (k == "--halo") a.halo = std::atoi(argv[i + 1]);
    else if (k == "--compute") a.compute = std::atof(argv[i + 1]);
  }
  const BlockLayout l = layout_for(a, rank, size);
  std::vector<std::string> names;
  for (int v = 0; v < a.vars; ++v) names.push_back("q" + std::to_string(v));
  // The state: every piece's variables, halos included.
  std::vector<std::vector<double>> q;
  std::int64_t piece_bytes = 0;  // the arrays, halos included
  for (std::size_t p = 0; p < l.pieces.size(); ++p) {
    piece_bytes += l.memory_points(p) * 8 * a.vars;
    for (int v = 0; v < a.vars; ++v) {
      std::vector<double> x(static_cast<std::size_t>(l.memory_points(p)));
      for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<double>(i % 1000) + v + 0.5 * static_cast<double>(p);
      q.push_back(std::move(x));
    }
  }
  std::vector<const double*> ptr;
  std::vector<double*> wptr;
  for (auto& x : q) {
    ptr.push_back(x.data());
    wptr.push_back(x.data());
  }
  pio::BlockFileInfo raw;  // offsets of the raw layout
  raw.format = "raw";
  raw.blocks = l.blocks;
  raw.variables = names;
  raw.real_bytes = 8;
  std::int64_t total = 0;
  for (const auto& b : l.blocks) total += b.points();
  const std::int64_t frame_bytes = total * 8 * a.vars, bytes = frame_bytes * a.frames;

  const std::string& v = a.variant;
  const bool per_block = v == "hdf5-per-block" || v == "open-hdf5-per-block";
  const std::string path = a.dir + "/" + (v.rfind("read-", 0) == 0 || v.rfind("open-", 0) == 0 ? "" : "w-") +
                           (v.find("hdf5") != std::string::npos ? (per_block ? "per-block.h5" : "blocks.h5") : "blocks.dat");
  double t_io = 0, t_disk = 0, t_open = 0;
  MPI_Barrier(MPI_COMM_WORLD);
  const double t0 = now();
  if (v == "ceiling") {
    const std::int64_t share = bytes / size, first = share * rank, mine = rank == size - 1 ? bytes - first : share;
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT, 0644);
    check(fd >= 0, "open");
    std::vector<char> buf(16 << 20, 1);
    for (std::int64_t done = 0; done < mine;) {
      const auto n = static_cast<std::size_t>(std::min<std::int64_t>(static_cast<std::int64_t>(buf.size()), mine - done));
      check(::pwrite(fd, buf.data(), n, first + done) == static_cast<ssize_t>(n), "pwrite");
      done += static_cast<std::int64_t>(n);
    }
    ::close(fd);
  } else if (v == "cosa-lines" || v == "cosa-blocks") {
    MPI_File fh;
    check(MPI_File_open(MPI_COMM_WORLD, path.c_str(), MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh) == MPI_SUCCESS, "MPI_File_open");
    std::vector<double> stage;
    for (int f = 0; f < a.frames; ++f) {
      raw.times.assign(static_cast<std::size_t>(f + 1), 0.0);
      for (std::size_t p = 0; p < l.pieces.size(); ++p)
        for (int var = 0; var < a.vars; ++var) {
          const double* mem = q[p * static_cast<std::size_t>(a.vars) + static_cast<std::size_t>(var)].data();
          const std::int64_t base = raw.value_offset(f, static_cast<std::size_t>(l.pieces[p].block), var);
          if (v == "cosa-lines") {  // one write per line of the grid
            const auto& piece = l.pieces[p];
            const auto& d = l.blocks[static_cast<std::size_t>(piece.block)].dims;
            const auto m = l.memory_dims(p);
            const auto e = piece.extent();
            for (std::int64_t k = 0; k < e[2]; ++k)
              for (std::int64_t j = 0; j < e[1]; ++j) {
                const std::int64_t at = ((piece.range[2][0] + k) * d[1] + piece.range[1][0] + j) * d[0] + piece.range[0][0];
                const std::int64_t from = ((k + l.halo[2]) * m[1] + j + l.halo[1]) * m[0] + l.halo[0];
                MPI_Status st;
                check(MPI_File_write_at(fh, base + at * 8, mem + from, static_cast<int>(e[0]), MPI_DOUBLE, &st) == MPI_SUCCESS, "write_at");
              }
          } else {  // one write per block and variable (the interior copied out first)
            stage.clear();
            std::vector<BlockRun> runs = l.runs(p);
            for (const auto& r : runs) stage.insert(stage.end(), mem + r.memory_index, mem + r.memory_index + r.count);
            // A split piece is contiguous in the file only when split in k: else its runs.
            bool contiguous = true;
            for (std::size_t r = 1; r < runs.size(); ++r) contiguous = contiguous && runs[r].block_index == runs[r - 1].block_index + runs[r - 1].count;
            MPI_Status st;
            if (contiguous) {
              check(MPI_File_write_at(fh, base + runs[0].block_index * 8, stage.data(), static_cast<int>(stage.size()), MPI_DOUBLE, &st) == MPI_SUCCESS, "write_at");
            } else {
              std::size_t at = 0;
              for (const auto& r : runs) {
                check(MPI_File_write_at(fh, base + r.block_index * 8, stage.data() + at, static_cast<int>(r.count), MPI_DOUBLE, &st) == MPI_SUCCESS, "write_at");
                at += static_cast<std::size_t>(r.count);
              }
            }
          }
        }
    }
    MPI_File_close(&fh);
  } else if (v == "raw-independent" || v == "raw-collective" || v == "raw-aggregated" || v == "raw-aggregated-async" || v == "hdf5" ||
             v == "hdf5-independent") {
    pio::BlockFileOptions o = pio::BlockFileOptions::parse(std::getenv("AB_BENCH_OPTIONS") ? std::getenv("AB_BENCH_OPTIONS") : "");
    o.format = v.rfind("hdf5", 0) == 0 ? "hdf5" : "raw";
    o.strategy = v.find("independent") != std::string::npos ? "independent"
                 : v.find("aggregated") != std::string::npos ? v.substr(4)
                                                             : "collective";
    pio::BlockWriter w(MPI_COMM_WORLD, path, l, names, o);
    const double t1 = now();
    for (int f = 0; f < a.frames; ++f) {
      w.begin_frame(0.1 * f, ptr.data());
      compute(q, a.compute);  // aggregated-async: while the frame goes to disk
      w.end_frame();
    }
    const double t2 = now();
    w.close();
    if (rank == 0 && std::getenv("AB_BENCH_TRACE")) std::fprintf(stderr, "open %.3f frames %.3f close %.3f\n", t1 - t0, t2 - t1, now() - t2);
  } else if (v == "hdf5-per-block") {
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    H5Pset_fapl_mpio(fapl, MPI_COMM_WORLD, MPI_INFO_NULL);
    H5Pset_all_coll_metadata_ops(fapl, true);
    H5Pset_coll_metadata_write(fapl, true);
    hid_t file = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
    check(file >= 0, "H5Fcreate");
    hid_t xfer = H5Pcreate(H5P_DATASET_XFER);
    H5Pset_dxpl_mpio(xfer, H5FD_MPIO_INDEPENDENT);
    for (int f = 0; f < a.frames; ++f) {
      const std::string frame = "frame" + std::to_string(f);
      hid_t g = H5Gcreate2(file, frame.c_str(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
      std::vector<hid_t> dsets;
      for (const auto& b : l.blocks) {  // every rank creates every dataset (collective)
        hid_t bg = H5Gcreate2(g, ("block" + std::to_string(b.id)).c_str(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
        const hsize_t dims[3] = {static_cast<hsize_t>(b.dims[2]), static_cast<hsize_t>(b.dims[1]), static_cast<hsize_t>(b.dims[0])};
        hid_t space = H5Screate_simple(3, dims, nullptr);
        for (int var = 0; var < a.vars; ++var) dsets.push_back(H5Dcreate2(bg, names[static_cast<std::size_t>(var)].c_str(), H5T_IEEE_F64LE, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
        H5Sclose(space);
        H5Gclose(bg);
      }
      for (std::size_t p = 0; p < l.pieces.size(); ++p) {
        const auto& piece = l.pieces[p];
        const auto m = l.memory_dims(p);
        const auto e = piece.extent();
        const hsize_t mdims[3] = {static_cast<hsize_t>(m[2]), static_cast<hsize_t>(m[1]), static_cast<hsize_t>(m[0])};
        const hsize_t mstart[3] = {static_cast<hsize_t>(l.halo[2]), static_cast<hsize_t>(l.halo[1]), static_cast<hsize_t>(l.halo[0])};
        const hsize_t count[3] = {static_cast<hsize_t>(e[2]), static_cast<hsize_t>(e[1]), static_cast<hsize_t>(e[0])};
        const hsize_t fstart[3] = {static_cast<hsize_t>(piece.range[2][0]), static_cast<hsize_t>(piece.range[1][0]), static_cast<hsize_t>(piece.range[0][0])};
        hid_t ms = H5Screate_simple(3, mdims, nullptr);
        H5Sselect_hyperslab(ms, H5S_SELECT_SET, mstart, nullptr, count, nullptr);
        for (int var = 0; var < a.vars; ++var) {
          hid_t d = dsets[static_cast<std::size_t>(piece.block) * static_cast<std::size_t>(a.vars) + static_cast<std::size_t>(var)];
          hid_t fs = H5Dget_space(d);
          H5Sselect_hyperslab(fs, H5S_SELECT_SET, fstart, nullptr, count, nullptr);
          check(H5Dwrite(d, H5T_NATIVE_DOUBLE, ms, fs, xfer, q[p * static_cast<std::size_t>(a.vars) + static_cast<std::size_t>(var)].data()) >= 0, "H5Dwrite");
          H5Sclose(fs);
        }
        H5Sclose(ms);
      }
      for (hid_t d : dsets) H5Dclose(d);
      H5Gclose(g);
    }
    H5Pclose(xfer);
    H5Pclose(fapl);
    check(H5Fclose(file) >= 0, "H5Fclose");
  } else if (v == "read-pread") {
    const std::int64_t share = bytes / size, first = share * rank, mine = rank == size - 1 ? bytes - first : share;
    const int fd = ::open(path.c_str(), O_RDONLY);
    check(fd >= 0, "open");
    std::vector<char> buf(16 << 20);
    for (std::int64_t done = 0; done < mine;) {
      const auto n = static_cast<std::size_t>(std::min<std::int64_t>(static_cast<std::int64_t>(buf.size()), mine - done));
      check(::pread(fd, buf.data(), n, first + done) == static_cast<ssize_t>(n), "pread");
      done += static_cast<std::int64_t>(n);
    }
    ::close(fd);
  } else if (v == "read-raw-collective" || v == "read-raw-independent" || v == "read-raw-aggregated" || v == "read-hdf5") {
    pio::BlockFileOptions o;  // read-hdf5: the default strategy
    if (v == "read-raw-collective") o.strategy = "collective";
    if (v == "read-raw-aggregated") o.strategy = "aggregated";
    pio::BlockReader r(MPI_COMM_WORLD, path, l, o);
    for (int f = 0; f < a.frames; ++f) r.read_frame(f, wptr.data());
    r.close();
  } else if (v == "open-hdf5" || v == "open-hdf5-per-block") {
    if (rank == 0) {
      const double o0 = now();
      std::int64_t found = 0;
      if (v == "open-hdf5") {
        found = static_cast<std::int64_t>(pio::describe_block_file(path).blocks.size());
      } else {  // what a reader of the per-block layout does: open every block's dataset for its shape
        hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
        hid_t g = H5Gopen2(file, "frame0", H5P_DEFAULT);
        for (const auto& b : l.blocks) {
          hid_t d = H5Dopen2(g, ("block" + std::to_string(b.id) + "/q0").c_str(), H5P_DEFAULT);
          hid_t s = H5Dget_space(d);
          hsize_t dims[3];
          H5Sget_simple_extent_dims(s, dims, nullptr);
          found += dims[0] > 0 ? 1 : 0;
          H5Sclose(s);
          H5Dclose(d);
        }
        H5Gclose(g);
        H5Fclose(file);
      }
      t_open = now() - o0;
      check(found == a.blocks, "finding every block");
    }
  } else {
    if (rank == 0) std::fprintf(stderr, "bench_blocks: unknown variant %s\n", v.c_str());
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  t_io = now() - t0 - a.frames * a.compute;
  if (v.rfind("read-", 0) != 0 && v.rfind("open-", 0) != 0) {
    if (rank == 0) sync_file(path);
    MPI_Barrier(MPI_COMM_WORLD);
    t_disk = now() - t0 - a.frames * a.compute;
  }
  if (rank == 0)
    std::printf("{\"variant\": \"%s\", \"ranks\": %d, \"blocks\": %d, \"pieces_rank0\": %zu, \"vars\": %d, \"frames\": %d, \"bytes\": %lld, "
                "\"seconds\": %.6f, \"seconds_to_disk\": %.6f, \"open_seconds\": %.6f, \"piece_bytes_rank0\": %lld, \"path\": \"%s\"}\n",
                v.c_str(), size, a.blocks, l.pieces.size(), a.vars, a.frames, static_cast<long long>(bytes), t_io, t_disk, t_open,
                static_cast<long long>(piece_bytes), path.c_str());
  MPI_Finalize();
  return 0;
}
