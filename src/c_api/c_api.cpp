// The C ABI (include/anabranch/anabranch.h): every body inside one try/catch that maps
// exceptions to status codes, with the message kept for ab_last_error().
#include "anabranch/anabranch.h"

#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <string>

#include "core/error.hpp"
#include "core/io.hpp"
#include "blockformats/blocks.hpp"
#include "formats/partel.hpp"
#include "formats/serafin.hpp"
#include "layouts/block_io.hpp"
#include "layouts/records.hpp"
#include "tools/merge.hpp"
#include "parallel/mpi_util.hpp"
#include "partition/part_global.hpp"
#include "layouts/reader.hpp"
#include "h5/cgns_files.hpp"
#include "h5/results.hpp"
#include "layouts/writer.hpp"
#include "cli/commands.hpp"

using namespace anabranch;

struct ab_header {
  serafin::Header header;
  bool have_sizes = false;
  Mesh mesh;              // global arrays (rank 0)
  bool have_mesh = false;
  std::string geometry;
  Mesh local_mesh;
  bool have_local = false;
};

struct ab_writer {
  std::unique_ptr<pio::Writer> writer;
  std::vector<double> scratch;
  std::vector<const double*> ptrs;
  std::vector<const float*> fptrs;
  std::int64_t nlocal = 0;
};

struct ab_reader {
  std::unique_ptr<pio::Reader> reader;
};

struct ab_part {
  std::unique_ptr<serafin::Reader> reader;  // a part file
  Mesh mesh;                                 // or, without a reader, the part from the global geometry
};

struct ab_file {
  std::unique_ptr<pio::ResultFile> file;
};

struct ab_blocks {
  BlockLayout layout;
};

struct ab_block_writer {
  std::unique_ptr<pio::BlockWriter> writer;
};

struct ab_block_reader {
  std::unique_ptr<pio::BlockReader> reader;
};

struct ab_records {
  pio::RecordsLayout layout;
};

struct ab_records_writer {
  std::unique_ptr<pio::RecordsWriter> writer;
};

struct ab_records_reader {
  std::unique_ptr<pio::RecordsReader> reader;
};

namespace {

thread_local std::string g_last_error;

int fail(int code, const char* what) {
  g_last_error = what;
  return code;
}

template <class Fn>
int guarded(Fn&& fn) {
  try {
    fn();
    g_last_error.clear();
    return AB_OK;
  } catch (const UsageError& e) {
    return fail(AB_ERR_USAGE, e.what());
  } catch (const FormatError& e) {
    return fail(AB_ERR_FORMAT, e.what());
  } catch (const IoError& e) {
    return fail(AB_ERR_IO, e.what());
  } catch (const MpiError& e) {
    return fail(AB_ERR_MPI, e.what());
  } catch (const std::bad_alloc&) {
    return fail(AB_ERR_MEMORY, "out of memory");
  } catch (const std::exception& e) {
    return fail(AB_ERR_INTERNAL, e.what());
  } catch (...) {
    return fail(AB_ERR_INTERNAL, "unknown error");
  }
}

void require(const void* p, const char* what) {
  if (!p) throw UsageError(std::string(what) + " is NULL");
}

}  // namespace

extern "C" {

const char* ab_last_error(void) { return g_last_error.c_str(); }
const char* ab_version(void) { return ANABRANCH_VERSION; }

int ab_header_create(ab_header** header) {
  return guarded([&] {
    require(header, "header");
    auto* h = new ab_header;
    h->header.set_title("");
    h->header.iparam[0] = 1;
    *header = h;
  });
}

int ab_header_free(ab_header* header) {
  delete header;
  return AB_OK;
}

int ab_header_set_title(ab_header* h, const char* title) {
  return guarded([&] {
    require(h, "header");
    require(title, "title");
    h->header.set_title(title);
  });
}

int ab_header_add_variable(ab_header* h, const char* name, const char* unit) {
  return guarded([&] {
    require(h, "header");
    require(name, "name");
    if (std::strlen(name) > 16 || (unit && std::strlen(unit) > 16))
      throw UsageError("variable names and units have at most 16 characters");
    h->header.variables.push_back({name, unit ? unit : ""});
  });
}

int ab_header_set_precision(ab_header* h, int real_bytes) {
  return guarded([&] {
    require(h, "header");
    if (real_bytes != 4 && real_bytes != 8) throw UsageError("precision is 4 (single) or 8 (double) bytes");
    const std::string text = h->header.title.substr(0, 72);
    h->header.precision = real_bytes == 8 ? Precision::Double : Precision::Single;
    h->header.set_title(text);
  });
}

int ab_header_set_big_endian(ab_header* h, int big_endian) {
  return guarded([&] {
    require(h, "header");
    h->header.byte_order = big_endian ? ByteOrder::Big : ByteOrder::Little;
  });
}

int ab_header_set_iparam(ab_header* h, const int32_t iparam[10]) {
  return guarded([&] {
    require(h, "header");
    require(iparam, "iparam");
    std::copy(iparam, iparam + 10, h->header.iparam.begin());
  });
}

int ab_header_set_date(ab_header* h, const int32_t date[6]) {
  return guarded([&] {
    require(h, "header");
    require(date, "date");
    std::array<std::int32_t, 6> d{};
    std::copy(date, date + 6, d.begin());
    h->header.date = d;
  });
}

int ab_header_set_sizes(ab_header* h, int64_t nelem, int64_t npoin, int ndp, int nplan) {
  return guarded([&] {
    require(h, "header");
    if (nelem < 0 || npoin < 1 || ndp < 1 || ndp > 8 || nplan < 1)
      throw UsageError("impossible sizes (NELEM >= 0, NPOIN >= 1, NDP in 1..8, NPLAN >= 1)");
    h->header.nelem = nelem;
    h->header.npoin = npoin;
    h->header.ndp = ndp;
    h->header.iparam[6] = nplan > 1 ? nplan : 0;
    h->have_sizes = true;
  });
}

int ab_header_sizes(const ab_header* h, int64_t* nelem, int64_t* npoin, int* ndp, int* nplan) {
  return guarded([&] {
    require(h, "header");
    if (nelem) *nelem = h->header.nelem;
    if (npoin) *npoin = h->header.npoin;
    if (ndp) *ndp = h->header.ndp;
    if (nplan) *nplan = h->header.nplan();
  });
}

int ab_header_set_mesh(ab_header* h, const int32_t* ikle, const int32_t* ipobo, const double* x, const double* y) {
  return guarded([&] {
    require(h, "header");
    if (!h->have_sizes) throw UsageError("set the sizes (ab_header_set_sizes) before the mesh");
    require(ikle, "ikle");
    require(x, "x");
    require(y, "y");
    Mesh& m = h->mesh;
    m.nelem = h->header.nelem;
    m.npoin = h->header.npoin;
    m.ndp = h->header.ndp;
    m.nplan = h->header.nplan();
    m.ikle.assign(ikle, ikle + m.nelem * m.ndp);
    if (ipobo)
      m.ipobo.assign(ipobo, ipobo + m.npoin);
    else
      m.ipobo.assign(static_cast<std::size_t>(m.npoin), 0);
    m.x.assign(x, x + m.npoin);
    m.y.assign(y, y + m.npoin);
    h->have_mesh = true;
  });
}

int ab_header_set_geometry(ab_header* h, const char* path) {
  return guarded([&] {
    require(h, "header");
    require(path, "path");
    serafin::Reader r(path);
    const auto& g = r.header();
    h->header.nelem = g.nelem;
    h->header.npoin = g.npoin;
    h->header.ndp = g.ndp;
    h->header.sizes4 = g.sizes4;
    for (int i = 0; i < 9; ++i) h->header.iparam[static_cast<std::size_t>(i)] = g.iparam[static_cast<std::size_t>(i)];
    h->geometry = path;
    h->have_sizes = true;
  });
}

int ab_header_set_local_mesh(ab_header* h, int64_t nelem, const int32_t* ikle, int64_t nlocal, const double* x,
                             const double* y) {
  return guarded([&] {
    require(h, "header");
    if (nelem < 0 || nlocal < 0) throw UsageError("negative local sizes");
    if (nelem > 0) require(ikle, "ikle");
    if (nlocal > 0) {
      require(x, "x");
      require(y, "y");
    }
    Mesh& m = h->local_mesh;
    m.ndp = h->header.ndp;
    m.nplan = h->header.nplan();
    m.nelem = nelem;
    m.npoin = nlocal;
    m.ikle.assign(ikle, ikle + nelem * m.ndp);
    m.x.assign(x, x + nlocal);
    m.y.assign(y, y + nlocal);
    h->have_local = true;
  });
}

int ab_writer_open(MPI_Comm comm, const char* path, const ab_header* h, int64_t nlocal, const int32_t* global_ids,
                   const char* options, ab_writer** writer) {
  std::unique_ptr<ab_writer> w;
  int rc = guarded([&] {
    // Argument checks are agreed too: a NULL on one rank must not hang the others.
    pio::collective(comm, [&] {
      require(path, "path");
      require(h, "header");
      require(writer, "writer");
      if (nlocal > 0) require(global_ids, "global_ids");
      if (!h->have_sizes) throw UsageError("the header has no sizes (ab_header_set_sizes or ab_header_set_geometry)");
      w = std::make_unique<ab_writer>();
      w->nlocal = nlocal;
    });
    pio::OutputDescription out;
    out.header = h->header;
    if (h->have_mesh) out.mesh = &h->mesh;
    out.geometry = h->geometry;
    if (h->have_local) out.local_mesh = &h->local_mesh;
    const auto opts = pio::WriterOptions::parse(options ? options : "");
    w->writer = std::make_unique<pio::Writer>(comm, path, out, global_ids, nlocal, opts);
  });
  if (rc == AB_OK) *writer = w.release();
  return rc;
}

int ab_writer_open_f(MPI_Fint comm, const char* path, const ab_header* header, int64_t nlocal, const int32_t* global_ids,
                     const char* options, ab_writer** writer) {
  return ab_writer_open(MPI_Comm_f2c(comm), path, header, nlocal, global_ids, options, writer);
}

int ab_writer_open_merged(MPI_Comm comm, const char* part, const char* geometry, const char* boundary, const char* path,
                          const char* options, int64_t* nlocal, ab_writer** writer) {
  std::unique_ptr<ab_writer> w;
  int rc = guarded([&] {
    pio::collective(comm, [&] {
      require(part, "part");
      require(geometry, "geometry");
      require(path, "path");
      require(nlocal, "nlocal");
      require(writer, "writer");
      w = std::make_unique<ab_writer>();
    });
    auto m = pio::open_merged_writer(comm, part, geometry, boundary ? boundary : "", path,
                                     pio::WriterOptions::parse(options ? options : ""));
    w->writer = std::move(m.writer);
    w->nlocal = m.nlocal;
  });
  if (rc == AB_OK) {
    *nlocal = w->nlocal;
    *writer = w.release();
  }
  return rc;
}

int ab_writer_open_merged_f(MPI_Fint comm, const char* part, const char* geometry, const char* boundary, const char* path,
                            const char* options, int64_t* nlocal, ab_writer** writer) {
  return ab_writer_open_merged(MPI_Comm_f2c(comm), part, geometry, boundary, path, options, nlocal, writer);
}

}  // extern "C"

namespace {
template <class T>
int frame(ab_writer* w, double time, const T* values, bool begin_only) {
  return guarded([&] {
    require(w, "writer");
    const int nvar = w->writer->layout().nvar;
    std::vector<const T*> ptrs(static_cast<std::size_t>(nvar));
    for (int v = 0; v < nvar; ++v) ptrs[static_cast<std::size_t>(v)] = values + static_cast<std::int64_t>(v) * w->nlocal;
    if (begin_only)
      w->writer->begin_frame(time, ptrs.data());
    else
      w->writer->write_frame(time, ptrs.data());
  });
}
}  // namespace

extern "C" {

int ab_writer_write_frame(ab_writer* w, double time, const double* values) { return frame(w, time, values, false); }
int ab_writer_write_frame_float(ab_writer* w, double time, const float* values) { return frame(w, time, values, false); }
int ab_writer_write_frame_begin(ab_writer* w, double time, const double* values) { return frame(w, time, values, true); }

int ab_writer_write_frame_end(ab_writer* w) {
  return guarded([&] {
    require(w, "writer");
    w->writer->end_frame();
  });
}

int ab_writer_close(ab_writer* w) {
  int rc = guarded([&] {
    require(w, "writer");
    w->writer->close();
  });
  delete w;
  return rc;
}

int ab_writer_abandon(ab_writer* w) {
  delete w;  // ~Writer: no collective call; an atomic writer's temporary file is removed
  return AB_OK;
}

int ab_reader_open(MPI_Comm comm, const char* path, int64_t nlocal, const int32_t* global_ids, const char* options,
                   ab_reader** reader) {
  std::unique_ptr<ab_reader> r;
  int rc = guarded([&] {
    pio::collective(comm, [&] {
      require(path, "path");
      require(reader, "reader");
      if (nlocal > 0) require(global_ids, "global_ids");
      r = std::make_unique<ab_reader>();
    });
    r->reader = std::make_unique<pio::Reader>(comm, path, global_ids, nlocal, pio::ReaderOptions::parse(options ? options : ""));
  });
  if (rc == AB_OK) *reader = r.release();
  return rc;
}

int ab_reader_open_f(MPI_Fint comm, const char* path, int64_t nlocal, const int32_t* global_ids, const char* options,
                     ab_reader** reader) {
  return ab_reader_open(MPI_Comm_f2c(comm), path, nlocal, global_ids, options, reader);
}

int ab_reader_sizes(const ab_reader* r, int64_t* nelem, int64_t* npoin, int* ndp, int* nplan) {
  return guarded([&] {
    require(r, "reader");
    const auto& h = r->reader->header();
    if (nelem) *nelem = h.nelem;
    if (npoin) *npoin = h.npoin;
    if (ndp) *ndp = h.ndp;
    if (nplan) *nplan = h.nplan();
  });
}

int ab_reader_frames(const ab_reader* r, int64_t* frames, int* nvar) {
  return guarded([&] {
    require(r, "reader");
    if (frames) *frames = r->reader->frames();
    if (nvar) *nvar = r->reader->header().nvar();
  });
}

int ab_reader_variable(const ab_reader* r, int var, char name[17], char unit[17]) {
  return guarded([&] {
    require(r, "reader");
    const auto& vars = r->reader->header().variables;
    if (var < 0 || var >= static_cast<int>(vars.size()))
      throw UsageError("variable " + std::to_string(var) + " out of 0.." + std::to_string(vars.size() - 1));
    auto copy = [](const std::string& text, char* out) {
      if (!out) return;
      std::string t = text.substr(0, 16);
      while (!t.empty() && t.back() == ' ') t.pop_back();
      std::memcpy(out, t.c_str(), t.size() + 1);
    };
    copy(vars[static_cast<std::size_t>(var)].name, name);
    copy(vars[static_cast<std::size_t>(var)].unit, unit);
  });
}

int ab_reader_time(const ab_reader* r, int64_t frame, double* time) {
  return guarded([&] {
    require(r, "reader");
    require(time, "time");
    const auto& t = r->reader->times();
    if (frame < 0 || frame >= static_cast<int64_t>(t.size()))
      throw UsageError("frame " + std::to_string(frame) + " out of 0.." + std::to_string(static_cast<int64_t>(t.size()) - 1));
    *time = t[static_cast<std::size_t>(frame)];
  });
}

}  // extern "C"

namespace {
template <class T>
int read_frame(ab_reader* r, int64_t frame, T* values) {
  return guarded([&] {
    require(r, "reader");
    const int nvar = r->reader->header().nvar();
    std::vector<T*> ptrs(static_cast<std::size_t>(nvar));
    for (int v = 0; v < nvar; ++v) ptrs[static_cast<std::size_t>(v)] = values + static_cast<std::int64_t>(v) * r->reader->nlocal();
    r->reader->read_frame(frame, ptrs.data());
  });
}
}  // namespace

extern "C" {

int ab_reader_read_frame(ab_reader* r, int64_t frame, double* values) { return read_frame(r, frame, values); }
int ab_reader_read_frame_float(ab_reader* r, int64_t frame, float* values) { return read_frame(r, frame, values); }

int ab_reader_read_variable(ab_reader* r, int64_t frame, int var, double* values) {
  return guarded([&] {
    require(r, "reader");
    r->reader->read_variable(frame, var, values);
  });
}

int ab_reader_close(ab_reader* r) {
  int rc = guarded([&] {
    require(r, "reader");
    r->reader->close();
  });
  delete r;
  return rc;
}

int ab_reader_abandon(ab_reader* r) {
  delete r;  // ~Reader: the files go, nothing collective (but HDF5's own close)
  return AB_OK;
}

int ab_part_open(MPI_Comm comm, const char* base, ab_part** part) {
  std::unique_ptr<ab_part> p;
  int rc = guarded([&] {
    pio::collective(comm, [&] {
      require(base, "base");
      require(part, "part");
      int rank = 0, size = 1;
      MPI_Comm_rank(comm, &rank);
      MPI_Comm_size(comm, &size);
      p = std::make_unique<ab_part>();
      const std::string per_rank = std::string(base) + partel::suffix(size, rank);
      const std::string concat = std::string(base) + "-CONCAT";
      if (size == 1 && file_exists(base) && !file_exists(per_rank)) {
        p->reader = std::make_unique<serafin::Reader>(base);
      } else if (file_exists(per_rank)) {
        p->reader = std::make_unique<serafin::Reader>(per_rank);
      } else if (file_exists(concat)) {
        auto index = partel::read_geo_index(std::string(base) + "-INDEX");
        if (static_cast<int>(index.size()) != size)
          throw UsageError(std::string(base) + "-INDEX has " + std::to_string(index.size()) + " parts, the communicator " +
                           std::to_string(size) + " ranks");
        const auto [b, e] = index[static_cast<std::size_t>(rank)];
        p->reader = std::make_unique<serafin::Reader>(std::make_shared<FileSource>(concat, b, e - b));
      } else {
        throw IoError("no part for rank " + std::to_string(rank) + ": neither " + per_rank + " nor " + concat + " exists");
      }
    });
  });
  if (rc == AB_OK) *part = p.release();
  return rc;
}

int ab_part_open_f(MPI_Fint comm, const char* base, ab_part** part) { return ab_part_open(MPI_Comm_f2c(comm), base, part); }

int ab_part_open_global(MPI_Comm comm, const char* geometry, const char* partition, ab_part** part) {
  std::unique_ptr<ab_part> p;
  int rc = guarded([&] {
    pio::collective(comm, [&] {
      require(geometry, "geometry");
      require(partition, "partition");
      require(part, "part");
      p = std::make_unique<ab_part>();
    });
    p->mesh = pio::read_part_global(comm, geometry, partition);
  });
  if (rc == AB_OK) *part = p.release();
  return rc;
}

int ab_part_open_global_f(MPI_Fint comm, const char* geometry, const char* partition, ab_part** part) {
  return ab_part_open_global(MPI_Comm_f2c(comm), geometry, partition, part);
}

int ab_part_sizes(const ab_part* p, int64_t* nelem, int64_t* npoin, int* ndp, int* nplan) {
  return guarded([&] {
    require(p, "part");
    if (!p->reader) {
      if (nelem) *nelem = p->mesh.nelem;
      if (npoin) *npoin = p->mesh.npoin;
      if (ndp) *ndp = p->mesh.ndp;
      if (nplan) *nplan = p->mesh.nplan;
      return;
    }
    const auto& h = p->reader->header();
    if (nelem) *nelem = h.nelem;
    if (npoin) *npoin = h.npoin;
    if (ndp) *ndp = h.ndp;
    if (nplan) *nplan = h.nplan();
  });
}

int ab_part_mesh(const ab_part* p, int32_t* ikle, int32_t* knolg, double* x, double* y) {
  return guarded([&] {
    require(p, "part");
    if (!p->reader) {
      const Mesh& m = p->mesh;
      if (ikle) std::copy(m.ikle.begin(), m.ikle.end(), ikle);
      if (knolg) std::copy(m.ipobo.begin(), m.ipobo.end(), knolg);
      if (x) std::copy(m.x.begin(), m.x.end(), x);
      if (y) std::copy(m.y.begin(), m.y.end(), y);
      return;
    }
    const auto& r = *p->reader;
    if (ikle) {
      auto v = r.read_ikle();
      std::copy(v.begin(), v.end(), ikle);
    }
    if (knolg) {
      auto v = r.read_ipobo();
      std::copy(v.begin(), v.end(), knolg);
    }
    if (x) {
      auto v = r.read_x();
      std::copy(v.begin(), v.end(), x);
    }
    if (y) {
      auto v = r.read_y();
      std::copy(v.begin(), v.end(), y);
    }
  });
}

int ab_part_frames(const ab_part* p, int64_t* frames, int* nvar) {
  return guarded([&] {
    require(p, "part");
    if (frames) *frames = p->reader ? p->reader->frame_count() : 0;
    if (nvar) *nvar = p->reader ? p->reader->header().nvar() : 0;
  });
}

int ab_part_read_values(const ab_part* p, int64_t frame, int var, double* values) {
  return guarded([&] {
    require(p, "part");
    require(values, "values");
    if (!p->reader) throw UsageError("a part opened from the global geometry holds no values (read them with ab_reader_open)");
    p->reader->read_values(frame, var, values);
  });
}

int ab_part_close(ab_part* p) {
  delete p;
  return AB_OK;
}

int ab_file_open(const char* path, ab_file** file) {
  return guarded([&] {
    require(path, "path");
    require(file, "file");
    auto f = std::make_unique<ab_file>();
    f->file = pio::ResultFile::open(path);
    *file = f.release();
  });
}

int ab_file_sizes(const ab_file* f, int64_t* nelem, int64_t* npoin, int* ndp, int* nplan, int* nvar, int64_t* frames,
                  int* real_bytes) {
  return guarded([&] {
    require(f, "file");
    const auto& h = f->file->header();
    if (nelem) *nelem = h.nelem;
    if (npoin) *npoin = h.npoin;
    if (ndp) *ndp = h.ndp;
    if (nplan) *nplan = h.nplan();
    if (nvar) *nvar = h.nvar();
    if (frames) *frames = f->file->frame_count();
    if (real_bytes) *real_bytes = real_size(h.precision);
  });
}

int ab_file_mesh(const ab_file* f, int32_t* ikle, int32_t* ipobo, double* x, double* y) {
  return guarded([&] {
    require(f, "file");
    const Mesh m = f->file->read_mesh();
    if (ikle) std::copy(m.ikle.begin(), m.ikle.end(), ikle);
    if (ipobo) std::copy(m.ipobo.begin(), m.ipobo.end(), ipobo);
    if (x) std::copy(m.x.begin(), m.x.end(), x);
    if (y) std::copy(m.y.begin(), m.y.end(), y);
  });
}

int ab_file_times(const ab_file* f, double* times) {
  return guarded([&] {
    require(f, "file");
    require(times, "times");
    const auto t = f->file->times();
    std::copy(t.begin(), t.end(), times);
  });
}

int ab_file_read(const ab_file* f, int64_t frame, int var, int64_t first, int64_t count, double* values) {
  return guarded([&] {
    require(f, "file");
    if (count > 0) require(values, "values");
    f->file->read_values(frame, var, first, count, values);
  });
}

int ab_file_read_float(const ab_file* f, int64_t frame, int var, int64_t first, int64_t count, float* values) {
  return guarded([&] {
    require(f, "file");
    if (count > 0) require(values, "values");
    f->file->read_values(frame, var, first, count, values);
  });
}

int ab_file_close(ab_file* f) {
  delete f;
  return AB_OK;
}

int ab_blocks_create(ab_blocks** layout) {
  return guarded([&] {
    require(layout, "layout");
    *layout = new ab_blocks();
  });
}

int ab_blocks_free(ab_blocks* layout) {
  delete layout;
  return AB_OK;
}

int ab_blocks_add_block(ab_blocks* l, int64_t id, int64_t ni, int64_t nj, int64_t nk) {
  return guarded([&] {
    require(l, "layout");
    for (const auto& b : l->layout.blocks)
      if (b.id == id) throw UsageError("block id " + std::to_string(id) + " added twice");
    if (ni < 1 || nj < 1 || nk < 1) throw UsageError("block " + std::to_string(id) + ": dimensions must be at least 1");
    l->layout.blocks.push_back({id, {ni, nj, nk}});
  });
}

int ab_blocks_add_piece(ab_blocks* l, int64_t id, const int64_t range[6]) {
  return guarded([&] {
    require(l, "layout");
    require(range, "range");
    BlockPiece p;
    p.block = static_cast<std::int64_t>(l->layout.block_index(id));
    p.range = {{{range[0], range[1]}, {range[2], range[3]}, {range[4], range[5]}}};
    l->layout.pieces.push_back(p);
    l->layout.check();
  });
}

int ab_blocks_set_halo(ab_blocks* l, int64_t hi, int64_t hj, int64_t hk) {
  return guarded([&] {
    require(l, "layout");
    if (hi < 0 || hj < 0 || hk < 0) throw UsageError("negative halo width");
    l->layout.halo = {hi, hj, hk};
  });
}

int ab_blocks_load(ab_blocks* l, const char* assignment, int rank) {
  return guarded([&] {
    require(l, "layout");
    require(assignment, "assignment");
    const auto a = blocks::read_assignment(assignment);
    if (rank < 0 || rank >= a.processes)
      throw UsageError(std::string(assignment) + " deals the blocks to " + std::to_string(a.processes) + " processes; rank " +
                       std::to_string(rank) + " has none of them (run balance with -n equal to the ranks)");
    l->layout = blocks::layout_for_rank(a, rank, l->layout.halo);
  });
}

int ab_blocks_count(const ab_blocks* l, int64_t* nblocks, int64_t* npieces) {
  return guarded([&] {
    require(l, "layout");
    if (nblocks) *nblocks = static_cast<int64_t>(l->layout.blocks.size());
    if (npieces) *npieces = static_cast<int64_t>(l->layout.pieces.size());
  });
}

int ab_blocks_piece(const ab_blocks* l, int64_t p, int64_t* id, int64_t range[6], int64_t memory_dims[3]) {
  return guarded([&] {
    require(l, "layout");
    if (p < 0 || p >= static_cast<int64_t>(l->layout.pieces.size()))
      throw UsageError("piece " + std::to_string(p) + " of " + std::to_string(l->layout.pieces.size()));
    const auto& piece = l->layout.pieces[static_cast<std::size_t>(p)];
    if (id) *id = l->layout.blocks[static_cast<std::size_t>(piece.block)].id;
    if (range)
      for (std::size_t a = 0; a < 3; ++a) {
        range[2 * a] = piece.range[a][0];
        range[2 * a + 1] = piece.range[a][1];
      }
    if (memory_dims) {
      const auto m = l->layout.memory_dims(static_cast<std::size_t>(p));
      for (std::size_t a = 0; a < 3; ++a) memory_dims[a] = m[a];
    }
  });
}

int ab_block_writer_open(MPI_Comm comm, const char* path, const ab_blocks* layout, int nvar, const char* const* names,
                         const char* options, ab_block_writer** writer) {
  std::unique_ptr<ab_block_writer> w;
  int rc = guarded([&] {
    std::vector<std::string> vars;
    pio::collective(comm, [&] {
      require(path, "path");
      require(layout, "layout");
      require(writer, "writer");
      if (nvar < 0) throw UsageError("a negative variable count");  // none: a grid alone (HDF5, CGNS, Tecplot)
      if (nvar > 0) require(names, "names");
      for (int v = 0; v < nvar; ++v) {
        require(names[v], "a variable name");
        vars.emplace_back(names[v]);
      }
      w = std::make_unique<ab_block_writer>();
    });
    w->writer = std::make_unique<pio::BlockWriter>(comm, path, layout->layout, vars, pio::BlockFileOptions::parse(options ? options : ""));
  });
  if (rc == AB_OK) *writer = w.release();
  return rc;
}

int ab_block_writer_open_f(MPI_Fint comm, const char* path, const ab_blocks* layout, int nvar, const char* const* names,
                           const char* options, ab_block_writer** writer) {
  return ab_block_writer_open(MPI_Comm_f2c(comm), path, layout, nvar, names, options, writer);
}

int ab_block_writer_write_grid(ab_block_writer* w, const double* const* xyz) {
  return guarded([&] {
    require(w, "writer");
    w->writer->write_grid(xyz);
  });
}

int ab_block_writer_write_frame(ab_block_writer* w, double time, const double* const* values) {
  return guarded([&] {
    require(w, "writer");
    w->writer->write_frame(time, values);
  });
}

int ab_block_writer_write_frame_float(ab_block_writer* w, double time, const float* const* values) {
  return guarded([&] {
    require(w, "writer");
    w->writer->write_frame(time, values);
  });
}

int ab_block_writer_write_frame_begin(ab_block_writer* w, double time, const double* const* values) {
  return guarded([&] {
    require(w, "writer");
    w->writer->begin_frame(time, values);
  });
}

int ab_block_writer_write_frame_end(ab_block_writer* w) {
  return guarded([&] {
    require(w, "writer");
    w->writer->end_frame();
  });
}

int ab_block_writer_close(ab_block_writer* w) {
  std::unique_ptr<ab_block_writer> owned(w);
  return guarded([&] {
    if (owned) owned->writer->close();
  });
}

int ab_block_reader_open(MPI_Comm comm, const char* path, const ab_blocks* layout, const char* options, ab_block_reader** reader) {
  std::unique_ptr<ab_block_reader> r;
  int rc = guarded([&] {
    pio::collective(comm, [&] {
      require(path, "path");
      require(layout, "layout");
      require(reader, "reader");
      r = std::make_unique<ab_block_reader>();
    });
    r->reader = std::make_unique<pio::BlockReader>(comm, path, layout->layout, pio::BlockFileOptions::parse(options ? options : ""));
  });
  if (rc == AB_OK) *reader = r.release();
  return rc;
}

int ab_block_reader_open_f(MPI_Fint comm, const char* path, const ab_blocks* layout, const char* options, ab_block_reader** reader) {
  return ab_block_reader_open(MPI_Comm_f2c(comm), path, layout, options, reader);
}

int ab_block_reader_frames(const ab_block_reader* r, int64_t* frames, int* nvar) {
  return guarded([&] {
    require(r, "reader");
    if (frames) *frames = r->reader->info().frames();
    if (nvar) *nvar = r->reader->info().nvar();
  });
}

int ab_block_reader_time(const ab_block_reader* r, int64_t frame, double* time) {
  return guarded([&] {
    require(r, "reader");
    require(time, "time");
    const auto& t = r->reader->info().times;
    if (frame < 0 || frame >= static_cast<int64_t>(t.size()))
      throw UsageError("frame " + std::to_string(frame) + " of " + std::to_string(t.size()));
    *time = t[static_cast<std::size_t>(frame)];
  });
}

int ab_block_reader_read_frame(ab_block_reader* r, int64_t frame, double* const* values) {
  return guarded([&] {
    require(r, "reader");
    r->reader->read_frame(frame, values);
  });
}

int ab_block_reader_read_grid(ab_block_reader* r, double* const* xyz) {
  return guarded([&] {
    require(r, "reader");
    r->reader->read_grid(xyz);
  });
}

int ab_block_reader_close(ab_block_reader* r) {
  std::unique_ptr<ab_block_reader> owned(r);
  return guarded([&] {
    if (owned) owned->reader->close();
  });
}

int ab_records_create(ab_records** layout) {
  return guarded([&] {
    require(layout, "layout");
    *layout = new ab_records();
  });
}

int ab_records_free(ab_records* layout) {
  delete layout;
  return AB_OK;
}

int ab_records_add(ab_records* layout, int64_t bytes) {
  return guarded([&] {
    require(layout, "layout");
    layout->layout.add(bytes);
  });
}

int ab_records_set_form(ab_records* layout, int marker_bytes, int big_endian, int64_t max_subrecord) {
  return guarded([&] {
    require(layout, "layout");
    if (big_endian < -1 || big_endian > 1) throw UsageError("big_endian is 1, 0 or -1 (the machine's), not " + std::to_string(big_endian));
    const ByteOrder order = big_endian < 0 ? native_byte_order() : big_endian ? ByteOrder::Big : ByteOrder::Little;
    layout->layout.set_form(marker_bytes, order, max_subrecord);
  });
}

int ab_h5_extents(const char* path, int64_t n, const char* const* datasets, int64_t* offsets, int64_t* bytes) {
  return guarded([&] {
    require(path, "path");
    if (n < 0) throw UsageError("n is a count, not " + std::to_string(n));
    if (n > 0) {
      require(datasets, "datasets");
      require(offsets, "offsets");
      require(bytes, "bytes");
    }
    std::vector<std::string> names;
    for (int64_t i = 0; i < n; ++i) {
      require(datasets[i], "datasets[i]");
      names.emplace_back(datasets[i]);
    }
    const auto e = pio::cgns_files::contiguous_extents(path, names);
    for (int64_t i = 0; i < n; ++i) {
      offsets[i] = e[static_cast<std::size_t>(i)].offset;
      bytes[i] = e[static_cast<std::size_t>(i)].bytes;
    }
  });
}

int ab_records_set_offset(ab_records* layout, int64_t offset) {
  return guarded([&] {
    require(layout, "layout");
    layout->layout.set_offset(offset);
  });
}

int ab_records_count(const ab_records* layout, int64_t* records) {
  return guarded([&] {
    require(layout, "layout");
    require(records, "records");
    *records = layout->layout.count();
  });
}

int ab_records_extent(const ab_records* layout, int64_t r, int64_t* first, int64_t* end) {
  return guarded([&] {
    require(layout, "layout");
    require(first, "first");
    require(end, "end");
    const auto& l = layout->layout;
    if (r < -1 || r >= l.count()) throw UsageError("record " + std::to_string(r) + " is not one of the layout's " + std::to_string(l.count()) + " (0-based, or -1)");
    *first = r < 0 ? l.begin() : l.first(r);
    *end = r < 0 ? l.end() : l.end(r);
  });
}

int ab_records_writer_open(MPI_Comm comm, const char* path, const ab_records* layout, const char* options, ab_records_writer** writer) {
  std::unique_ptr<ab_records_writer> w;
  int rc = guarded([&] {
    pio::RecordsOptions o;
    pio::collective(comm, [&] {
      require(path, "path");
      require(layout, "layout");
      require(writer, "writer");
      o = pio::RecordsOptions::parse(options ? options : "", false);
      w = std::make_unique<ab_records_writer>();
    });
    w->writer = std::make_unique<pio::RecordsWriter>(comm, path, layout->layout, o);
  });
  if (rc == AB_OK) *writer = w.release();
  return rc;
}

int ab_records_writer_open_f(MPI_Fint comm, const char* path, const ab_records* layout, const char* options, ab_records_writer** writer) {
  return ab_records_writer_open(MPI_Comm_f2c(comm), path, layout, options, writer);
}

int ab_records_writer_write(ab_records_writer* w, int64_t n, const int64_t* records, const void* const* data) {
  return guarded([&] {
    require(w, "writer");
    w->writer->write(n, records, data);
  });
}

int ab_records_writer_close(ab_records_writer* w) {
  std::unique_ptr<ab_records_writer> owned(w);
  return guarded([&] {
    if (owned) owned->writer->close();
  });
}

int ab_records_reader_open(MPI_Comm comm, const char* path, const ab_records* layout, const char* options, ab_records_reader** reader) {
  std::unique_ptr<ab_records_reader> r;
  int rc = guarded([&] {
    pio::RecordsOptions o;
    pio::collective(comm, [&] {
      require(path, "path");
      require(layout, "layout");
      require(reader, "reader");
      o = pio::RecordsOptions::parse(options ? options : "", true);
      r = std::make_unique<ab_records_reader>();
    });
    r->reader = std::make_unique<pio::RecordsReader>(comm, path, layout->layout, o);
  });
  if (rc == AB_OK) *reader = r.release();
  return rc;
}

int ab_records_reader_open_f(MPI_Fint comm, const char* path, const ab_records* layout, const char* options, ab_records_reader** reader) {
  return ab_records_reader_open(MPI_Comm_f2c(comm), path, layout, options, reader);
}

int ab_records_reader_read(ab_records_reader* r, int64_t n, const int64_t* records, void* const* data) {
  return guarded([&] {
    require(r, "reader");
    r->reader->read(n, records, data);
  });
}

int ab_records_reader_close(ab_records_reader* r) {
  std::unique_ptr<ab_records_reader> owned(r);
  return guarded([&] {
    if (owned) owned->reader->close();
  });
}

int ab_command(int argc, const char* const* argv, char** report) {
  return guarded([&] {
    if (argc > 0) require(argv, "argv");
    require(report, "report");
    *report = nullptr;
    std::vector<std::string> args(argv, argv + argc);
    const std::string json = cli::run_for_report(args);
    char* out = static_cast<char*>(std::malloc(json.size() + 1));
    if (!out) throw std::bad_alloc();
    std::memcpy(out, json.c_str(), json.size() + 1);
    *report = out;
  });
}

int ab_main(int argc, char** argv) { return cli::main(argc, argv); }

void ab_free(void* p) { std::free(p); }

}  // extern "C"
