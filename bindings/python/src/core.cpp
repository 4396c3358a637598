// anabranch._core: the C API (include/anabranch/anabranch.h) for Python, numpy in and out.
// Thin on purpose: the Pythonic API is anabranch/__init__.py. Status codes become the
// exceptions of anabranch.errors (one base class, anabranch.Error).
#include <climits>
#include <anabranch/anabranch.h>
#include <mpi.h>
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>
#include <nanobind/stl/pair.h>

#include <cstdint>
#include <string>
#include <vector>

namespace nb = nanobind;

namespace {

struct Failure {
  int code;
  std::string message;
};

void check(int rc) {
  if (rc != AB_OK) throw Failure{rc, ab_last_error()};
}

template <class T>
using Array1 = nb::ndarray<nb::numpy, T, nb::ndim<1>>;
template <class T>
using In1 = nb::ndarray<const T, nb::ndim<1>, nb::c_contig, nb::device::cpu>;
template <class T>
using In2 = nb::ndarray<const T, nb::ndim<2>, nb::c_contig, nb::device::cpu>;

// A numpy array owning a new buffer of n values.
template <class T>
Array1<T> new_array(std::size_t n, T** data) {
  T* p = new T[n > 0 ? n : 1];
  *data = p;
  nb::capsule owner(p, [](void* q) noexcept { delete[] static_cast<T*>(q); });
  return Array1<T>(p, {n}, owner);
}

MPI_Comm comm_of(long long fortran_handle) { return MPI_Comm_f2c(static_cast<MPI_Fint>(fortran_handle)); }

bool g_we_initialised = false;

struct File {
  ab_file* f = nullptr;
  explicit File(const std::string& path) { check(ab_file_open(path.c_str(), &f)); }
  ~File() { ab_file_close(f); }
  std::tuple<std::int64_t, std::int64_t, int, int, int, std::int64_t, int> sizes() const {
    std::int64_t nelem, npoin, frames;
    int ndp, nplan, nvar, rs;
    check(ab_file_sizes(f, &nelem, &npoin, &ndp, &nplan, &nvar, &frames, &rs));
    return {nelem, npoin, ndp, nplan, nvar, frames, rs};
  }
};

struct Header {
  ab_header* h = nullptr;
  Header() { check(ab_header_create(&h)); }
  ~Header() { ab_header_free(h); }
};

struct Writer {
  ab_writer* w = nullptr;
  std::int64_t nlocal = 0;
  int nvar = 0;
  ~Writer() { ab_writer_abandon(w); }  // collected unclosed: nothing collective
};

struct Blocks {
  ab_blocks* l = nullptr;
  Blocks() { check(ab_blocks_create(&l)); }
  ~Blocks() { ab_blocks_free(l); }
};

struct BlockWriter {
  ab_block_writer* w = nullptr;
};

struct BlockReader {
  ab_block_reader* r = nullptr;
};

// A Fortran records layout.
struct Records {
  ab_records* l = nullptr;
  Records() { check(ab_records_create(&l)); }
  ~Records() { ab_records_free(l); }
};

template <class T>
using Flat = nb::ndarray<T, nb::ndim<1>, nb::c_contig, nb::device::cpu>;

// Pointers to the caller's arrays (one per piece and variable), their sizes checked.
template <class P, class A>
std::vector<P> pointers(const Blocks& b, const std::vector<A>& arrays, int per_piece) {
  std::int64_t np = 0;
  check(ab_blocks_count(b.l, nullptr, &np));
  if (arrays.size() != static_cast<std::size_t>(np * per_piece))
    throw Failure{AB_ERR_USAGE, "expected " + std::to_string(np * per_piece) + " arrays (" + std::to_string(per_piece) +
                                    " per piece), got " + std::to_string(arrays.size())};
  std::vector<P> out;
  for (std::size_t k = 0; k < arrays.size(); ++k) {
    std::int64_t m[3];
    check(ab_blocks_piece(b.l, static_cast<std::int64_t>(k) / per_piece, nullptr, nullptr, m));
    if (arrays[k].size() != static_cast<std::size_t>(m[0] * m[1] * m[2]))
      throw Failure{AB_ERR_USAGE, "array " + std::to_string(k) + " holds " + std::to_string(arrays[k].size()) + " values where its piece (halos included) has " +
                                      std::to_string(m[0] * m[1] * m[2])};
    out.push_back(arrays[k].data());
  }
  return out;
}

struct Reader {
  ab_reader* r = nullptr;
  std::int64_t nlocal = 0;
  int nvar = 0;
  ~Reader() { ab_reader_abandon(r); }  // collected unclosed: nothing collective
};

}  // namespace

NB_MODULE(_core, m) {
  m.doc() = "anabranch C API bindings (use the anabranch package, not this module)";
  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const Failure& e) {
      static const char* names[] = {"Error", "UsageError", "FormatError", "IoError", "MpiError", "MemoryError", "InternalError"};
      const char* name = e.code >= 1 && e.code <= 6 ? names[e.code] : "Error";
      nb::object cls = nb::module_::import_("anabranch.errors").attr(name);
      PyErr_SetString(cls.ptr(), e.message.c_str());
    }
  });

  m.def("version", [] { return std::string(ab_version()); });

  // MPI: initialised here when nobody did (mpi4py does it on import), finalised at exit.
  m.def("mpi_ensure", [] {
    int init = 0;
    MPI_Initialized(&init);
    if (init) return;
    int provided = 0;
    MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
    g_we_initialised = true;
  });
  m.def("mpi_finalize_if_ours", [] {
    int fin = 0;
    MPI_Finalized(&fin);
    if (g_we_initialised && !fin) MPI_Finalize();
  });
  m.def("comm_world", [] { return static_cast<long long>(MPI_Comm_c2f(MPI_COMM_WORLD)); });
  m.def("comm_self", [] { return static_cast<long long>(MPI_Comm_c2f(MPI_COMM_SELF)); });
  // Collective: the lowest rank's non-empty message on every rank ("" when every rank gave
  // ""): argument checks made in Python before a collective call, agreed so that a refusal on
  // one rank is raised on all (none left waiting inside the call).
  m.def("agree", [](long long comm, const std::string& message) {
    nb::gil_scoped_release released;
    const MPI_Comm c = comm_of(comm);
    int rank = 0;
    MPI_Comm_rank(c, &rank);
    int who = message.empty() ? INT_MAX : rank;
    MPI_Allreduce(MPI_IN_PLACE, &who, 1, MPI_INT, MPI_MIN, c);
    if (who == INT_MAX) return std::string();
    int n = static_cast<int>(message.size());
    MPI_Bcast(&n, 1, MPI_INT, who, c);
    std::string out = rank == who ? message : std::string(static_cast<std::size_t>(n), '\0');
    MPI_Bcast(out.data(), n, MPI_CHAR, who, c);
    return out;
  });
  m.def("comm_rank_size", [](long long comm) {
    int r = 0, s = 1;
    MPI_Comm_rank(comm_of(comm), &r);
    MPI_Comm_size(comm_of(comm), &s);
    return std::make_tuple(r, s);
  });

  m.def("main", [](const std::vector<std::string>& args) {
    std::vector<std::string> all = args;
    std::vector<char*> argv;
    for (auto& a : all) argv.push_back(a.data());
    argv.push_back(nullptr);
    nb::gil_scoped_release release;
    return ab_main(static_cast<int>(all.size()), argv.data());
  });
  m.def("command", [](const std::vector<std::string>& args) {
    std::vector<const char*> argv;
    for (const auto& a : args) argv.push_back(a.c_str());
    char* report = nullptr;
    int rc;
    {
      nb::gil_scoped_release release;
      rc = ab_command(static_cast<int>(argv.size()), argv.data(), &report);
    }
    check(rc);
    std::string out = report ? report : "";
    ab_free(report);
    return out;
  });

  nb::class_<File>(m, "File")
      .def(nb::init<const std::string&>())
      .def("sizes", &File::sizes, "(nelem, npoin, ndp, nplan, nvar, frames, real_bytes)")
      .def("times", [](const File& f) {
        const auto n = static_cast<std::size_t>(std::get<5>(f.sizes()));
        double* p;
        auto a = new_array<double>(n, &p);
        if (n) check(ab_file_times(f.f, p));
        return a;
      })
      .def("mesh", [](const File& f) {
        auto [nelem, npoin, ndp, nplan, nvar, frames, rs] = f.sizes();
        std::int32_t *ikle, *ipobo;
        double *x, *y;
        auto a = new_array<std::int32_t>(static_cast<std::size_t>(nelem * ndp), &ikle);
        auto b = new_array<std::int32_t>(static_cast<std::size_t>(npoin), &ipobo);
        auto c = new_array<double>(static_cast<std::size_t>(npoin), &x);
        auto d = new_array<double>(static_cast<std::size_t>(npoin), &y);
        check(ab_file_mesh(f.f, ikle, ipobo, x, y));
        return std::make_tuple(a, b, c, d);
      })
      .def("read_float", [](const File& f, std::int64_t frame, int var, std::int64_t first, std::int64_t count) {
        float* p;
        auto a = new_array<float>(static_cast<std::size_t>(count), &p);
        check(ab_file_read_float(f.f, frame, var, first, count, p));
        return a;
      })
      .def("read_double", [](const File& f, std::int64_t frame, int var, std::int64_t first, std::int64_t count) {
        double* p;
        auto a = new_array<double>(static_cast<std::size_t>(count), &p);
        check(ab_file_read(f.f, frame, var, first, count, p));
        return a;
      });

  nb::class_<Header>(m, "Header")
      .def(nb::init<>())
      .def("set_title", [](Header& h, const std::string& t) { check(ab_header_set_title(h.h, t.c_str())); })
      .def("add_variable", [](Header& h, const std::string& n, const std::string& u) { check(ab_header_add_variable(h.h, n.c_str(), u.c_str())); })
      .def("set_precision", [](Header& h, int rs) { check(ab_header_set_precision(h.h, rs)); })
      .def("set_big_endian", [](Header& h, bool b) { check(ab_header_set_big_endian(h.h, b ? 1 : 0)); })
      .def("set_date", [](Header& h, const std::vector<std::int32_t>& d) {
        if (d.size() != 6) throw Failure{AB_ERR_USAGE, "date: year, month, day, hour, minute, second"};
        check(ab_header_set_date(h.h, d.data()));
      })
      .def("set_iparam", [](Header& h, const std::vector<std::int32_t>& ip) {
        if (ip.size() != 10) throw Failure{AB_ERR_USAGE, "iparam: 10 integers"};
        check(ab_header_set_iparam(h.h, ip.data()));
      })
      .def("set_sizes", [](Header& h, std::int64_t nelem, std::int64_t npoin, int ndp, int nplan) { check(ab_header_set_sizes(h.h, nelem, npoin, ndp, nplan)); })
      .def("sizes", [](const Header& h) {
        std::int64_t nelem = 0, npoin = 0;
        int ndp = 0, nplan = 0;
        check(ab_header_sizes(h.h, &nelem, &npoin, &ndp, &nplan));
        return std::make_tuple(nelem, npoin, ndp, nplan);
      })
      .def("set_geometry", [](Header& h, const std::string& p) { check(ab_header_set_geometry(h.h, p.c_str())); })
      .def("set_mesh", [](Header& h, In1<std::int32_t> ikle, nb::object ipobo, In1<double> x, In1<double> y) {
        const std::int32_t* ip = nullptr;
        In1<std::int32_t> keep;
        if (!ipobo.is_none()) {
          keep = nb::cast<In1<std::int32_t>>(ipobo);
          ip = keep.data();
        }
        check(ab_header_set_mesh(h.h, ikle.data(), ip, x.data(), y.data()));
      }, nb::arg("ikle"), nb::arg("ipobo").none(), nb::arg("x"), nb::arg("y"))
      .def("set_local_mesh", [](Header& h, In1<std::int32_t> ikle, std::int64_t nelem, In1<double> x, In1<double> y) {
        check(ab_header_set_local_mesh(h.h, nelem, ikle.data(), static_cast<std::int64_t>(x.shape(0)), x.data(), y.data()));
      });

  nb::class_<Writer>(m, "Writer")
      .def("__init__", [](Writer* self, long long comm, const std::string& path, Header& h, In1<std::int32_t> ids, int nvar,
                          const std::string& options) {
        new (self) Writer();
        self->nlocal = static_cast<std::int64_t>(ids.shape(0));
        self->nvar = nvar;
        int rc;
        {
          nb::gil_scoped_release release;
          rc = ab_writer_open(comm_of(comm), path.c_str(), h.h, self->nlocal, ids.data(), options.c_str(), &self->w);
        }
        check(rc);
      })
      .def_static("open_merged", [](long long comm, const std::string& part, const std::string& geometry,
                                    const std::string& boundary, const std::string& path, int nvar, const std::string& options) {
        auto* self = new Writer();
        self->nvar = nvar;
        int rc;
        {
          nb::gil_scoped_release release;
          rc = ab_writer_open_merged(comm_of(comm), part.c_str(), geometry.c_str(), boundary.c_str(), path.c_str(), options.c_str(),
                                     &self->nlocal, &self->w);
        }
        if (rc != AB_OK) delete self;
        check(rc);
        return self;
      }, nb::rv_policy::take_ownership)
      .def("write_frame_double", [](Writer& w, double time, In2<double> values, bool begin) {
        if (values.shape(0) != static_cast<std::size_t>(w.nvar) || values.shape(1) != static_cast<std::size_t>(w.nlocal))
          throw Failure{AB_ERR_USAGE, "values: expected (" + std::to_string(w.nvar) + ", " + std::to_string(w.nlocal) + ")"};
        nb::gil_scoped_release release;
        check(begin ? ab_writer_write_frame_begin(w.w, time, values.data()) : ab_writer_write_frame(w.w, time, values.data()));
      })
      .def("write_frame_float", [](Writer& w, double time, In2<float> values) {
        if (values.shape(0) != static_cast<std::size_t>(w.nvar) || values.shape(1) != static_cast<std::size_t>(w.nlocal))
          throw Failure{AB_ERR_USAGE, "values: expected (" + std::to_string(w.nvar) + ", " + std::to_string(w.nlocal) + ")"};
        nb::gil_scoped_release release;
        check(ab_writer_write_frame_float(w.w, time, values.data()));
      })
      .def("end_frame", [](Writer& w) {
        nb::gil_scoped_release release;
        check(ab_writer_write_frame_end(w.w));
      })
      .def("nlocal", [](const Writer& w) { return w.nlocal; })
      .def("abandon", [](Writer& w) {
        ab_writer_abandon(w.w);
        w.w = nullptr;
      })
      .def("close", [](Writer& w) {
        if (!w.w) return;
        ab_writer* p = w.w;
        w.w = nullptr;
        int rc;
        {
          nb::gil_scoped_release release;
          rc = ab_writer_close(p);
        }
        check(rc);
      });

  nb::class_<Blocks>(m, "Blocks")
      .def(nb::init<>())
      .def("add_block", [](Blocks& b, std::int64_t id, std::int64_t ni, std::int64_t nj, std::int64_t nk) { check(ab_blocks_add_block(b.l, id, ni, nj, nk)); })
      .def("add_piece", [](Blocks& b, std::int64_t id, const std::vector<std::int64_t>& r) {
        if (r.size() != 6) throw Failure{AB_ERR_USAGE, "a piece's range is (i0, i1, j0, j1, k0, k1)"};
        check(ab_blocks_add_piece(b.l, id, r.data()));
      })
      .def("set_halo", [](Blocks& b, std::int64_t hi, std::int64_t hj, std::int64_t hk) { check(ab_blocks_set_halo(b.l, hi, hj, hk)); })
      .def("load", [](Blocks& b, const std::string& path, int rank) { check(ab_blocks_load(b.l, path.c_str(), rank)); })
      .def("pieces", [](const Blocks& b) {
        std::int64_t np = 0;
        check(ab_blocks_count(b.l, nullptr, &np));
        std::vector<std::tuple<std::int64_t, std::vector<std::int64_t>, std::vector<std::int64_t>>> out;
        for (std::int64_t p = 0; p < np; ++p) {
          std::int64_t id, r[6], md[3];
          check(ab_blocks_piece(b.l, p, &id, r, md));
          out.emplace_back(id, std::vector<std::int64_t>(r, r + 6), std::vector<std::int64_t>(md, md + 3));
        }
        return out;
      }, "[(block id, (i0, i1, j0, j1, k0, k1), (mi, mj, mk) memory dims with halos)]");

  nb::class_<BlockWriter>(m, "BlockWriter")
      .def("__init__", [](BlockWriter* self, long long comm, const std::string& path, const Blocks& b, const std::vector<std::string>& names,
                          const std::string& options) {
        new (self) BlockWriter();
        std::vector<const char*> n;
        for (const auto& x : names) n.push_back(x.c_str());
        int rc;
        {
          nb::gil_scoped_release release;
          rc = ab_block_writer_open(comm_of(comm), path.c_str(), b.l, static_cast<int>(n.size()), n.data(), options.c_str(), &self->w);
        }
        check(rc);
      })
      .def("write_frame", [](BlockWriter& w, const Blocks& b, double time, int nvar, const std::vector<Flat<const double>>& arrays) {
        const auto p = pointers<const double*>(b, arrays, nvar);
        nb::gil_scoped_release release;
        check(ab_block_writer_write_frame(w.w, time, p.data()));
      })
      .def("write_frame_begin", [](BlockWriter& w, const Blocks& b, double time, int nvar, const std::vector<Flat<const double>>& arrays) {
        const auto p = pointers<const double*>(b, arrays, nvar);
        nb::gil_scoped_release release;
        check(ab_block_writer_write_frame_begin(w.w, time, p.data()));
      })
      .def("write_frame_end", [](BlockWriter& w) {
        nb::gil_scoped_release release;
        check(ab_block_writer_write_frame_end(w.w));
      })
      .def("write_grid", [](BlockWriter& w, const Blocks& b, const std::vector<Flat<const double>>& arrays) {
        const auto p = pointers<const double*>(b, arrays, 3);
        nb::gil_scoped_release release;
        check(ab_block_writer_write_grid(w.w, p.data()));
      })
      .def("close", [](BlockWriter& w) {
        ab_block_writer* x = w.w;
        w.w = nullptr;
        nb::gil_scoped_release release;
        check(ab_block_writer_close(x));
      });

  nb::class_<Records>(m, "Records")
      .def(nb::init<>())
      .def("add", [](Records& r, std::int64_t bytes) { check(ab_records_add(r.l, bytes)); })
      .def("set_form", [](Records& r, int marker_bytes, int big_endian, std::int64_t max_subrecord) {
        check(ab_records_set_form(r.l, marker_bytes, big_endian, max_subrecord));
      })
      .def("set_offset", [](Records& r, std::int64_t offset) { check(ab_records_set_offset(r.l, offset)); })
      .def("extent", [](const Records& r, std::int64_t k) {
        std::int64_t first = 0, end = 0;
        check(ab_records_extent(r.l, k, &first, &end));
        return std::make_pair(first, end);
      });
  m.def("h5_extents", [](const std::string& path, const std::vector<std::string>& datasets) {
    std::vector<const char*> names;
    for (const auto& d : datasets) names.push_back(d.c_str());
    std::vector<std::int64_t> offsets(datasets.size()), bytes(datasets.size());
    check(ab_h5_extents(path.c_str(), static_cast<std::int64_t>(names.size()), names.data(), offsets.data(), bytes.data()));
    std::vector<std::pair<std::int64_t, std::int64_t>> out;
    for (std::size_t i = 0; i < names.size(); ++i) out.emplace_back(offsets[i], bytes[i]);
    return out;
  });
  // Collective: opens, writes this rank's records, closes.
  m.def("write_records", [](long long comm, const std::string& path, const Records& r, const std::vector<std::int64_t>& records,
                            const std::vector<Flat<const std::uint8_t>>& data, const std::string& options) {
    if (records.size() != data.size()) throw Failure{AB_ERR_USAGE, "as many payloads as records"};
    std::vector<const void*> p;
    for (const auto& d : data) p.push_back(d.data());
    ab_records_writer* w = nullptr;
    std::string message;  // the write's error (close, called after it, has its own)
    int rc;
    {
      nb::gil_scoped_release released;
      rc = ab_records_writer_open_f(static_cast<MPI_Fint>(comm), path.c_str(), r.l, options.c_str(), &w);
      if (rc == AB_OK) {
        rc = ab_records_writer_write(w, static_cast<std::int64_t>(records.size()), records.data(), p.data());
        if (rc != AB_OK) message = ab_last_error();
        const int closed = ab_records_writer_close(w);  // collective, also after an error
        if (rc == AB_OK) rc = closed;
      }
    }
    if (rc != AB_OK) throw Failure{rc, message.empty() ? std::string(ab_last_error()) : message};
  });
  // Collective: opens, reads this rank's records into the arrays, closes.
  m.def("read_records", [](long long comm, const std::string& path, const Records& r, const std::vector<std::int64_t>& records,
                           const std::vector<Flat<std::uint8_t>>& data, const std::string& options) {
    if (records.size() != data.size()) throw Failure{AB_ERR_USAGE, "as many arrays as records"};
    std::vector<void*> p;
    for (std::size_t i = 0; i < data.size(); ++i) {
      std::int64_t first = 0, end = 0;
      check(ab_records_extent(r.l, records[i], &first, &end));
      p.push_back(data[i].data());
    }
    ab_records_reader* rd = nullptr;
    std::string message;
    int rc;
    {
      nb::gil_scoped_release released;
      rc = ab_records_reader_open_f(static_cast<MPI_Fint>(comm), path.c_str(), r.l, options.c_str(), &rd);
      if (rc == AB_OK) {
        rc = ab_records_reader_read(rd, static_cast<std::int64_t>(records.size()), records.data(), p.data());
        if (rc != AB_OK) message = ab_last_error();
        const int closed = ab_records_reader_close(rd);
        if (rc == AB_OK) rc = closed;
      }
    }
    if (rc != AB_OK) throw Failure{rc, message.empty() ? std::string(ab_last_error()) : message};
  });

  nb::class_<BlockReader>(m, "BlockReader")
      .def("__init__", [](BlockReader* self, long long comm, const std::string& path, const Blocks& b, const std::string& options) {
        new (self) BlockReader();
        int rc;
        {
          nb::gil_scoped_release release;
          rc = ab_block_reader_open(comm_of(comm), path.c_str(), b.l, options.c_str(), &self->r);
        }
        check(rc);
      })
      .def("frames", [](const BlockReader& r) {
        std::int64_t frames;
        int nvar;
        check(ab_block_reader_frames(r.r, &frames, &nvar));
        return std::make_tuple(frames, nvar);
      })
      .def("time", [](const BlockReader& r, std::int64_t frame) {
        double t;
        check(ab_block_reader_time(r.r, frame, &t));
        return t;
      })
      .def("read_frame", [](BlockReader& r, const Blocks& b, std::int64_t frame, int nvar, const std::vector<Flat<double>>& arrays) {
        const auto p = pointers<double*>(b, arrays, nvar);
        nb::gil_scoped_release release;
        check(ab_block_reader_read_frame(r.r, frame, p.data()));
      })
      .def("read_grid", [](BlockReader& r, const Blocks& b, const std::vector<Flat<double>>& arrays) {
        const auto p = pointers<double*>(b, arrays, 3);
        nb::gil_scoped_release release;
        check(ab_block_reader_read_grid(r.r, p.data()));
      })
      .def("close", [](BlockReader& r) {
        ab_block_reader* x = r.r;
        r.r = nullptr;
        nb::gil_scoped_release release;
        check(ab_block_reader_close(x));
      });

  nb::class_<Reader>(m, "Reader")
      .def("__init__", [](Reader* self, long long comm, const std::string& path, In1<std::int32_t> ids, const std::string& options) {
        new (self) Reader();
        self->nlocal = static_cast<std::int64_t>(ids.shape(0));
        int rc;
        {
          nb::gil_scoped_release release;
          rc = ab_reader_open(comm_of(comm), path.c_str(), self->nlocal, ids.data(), options.c_str(), &self->r);
        }
        check(rc);
        check(ab_reader_frames(self->r, nullptr, &self->nvar));
      })
      .def("sizes", [](const Reader& r) {
        std::int64_t nelem, npoin, frames;
        int ndp, nplan, nvar;
        check(ab_reader_sizes(r.r, &nelem, &npoin, &ndp, &nplan));
        check(ab_reader_frames(r.r, &frames, &nvar));
        return std::make_tuple(nelem, npoin, ndp, nplan, nvar, frames);
      })
      .def("variable", [](const Reader& r, int var) {
        char name[17], unit[17];
        check(ab_reader_variable(r.r, var, name, unit));
        return std::make_tuple(std::string(name), std::string(unit));
      })
      .def("time", [](const Reader& r, std::int64_t frame) {
        double t;
        check(ab_reader_time(r.r, frame, &t));
        return t;
      })
      .def("read_frame", [](Reader& r, std::int64_t frame) {
        double* p;
        auto a = new_array<double>(static_cast<std::size_t>(r.nvar * r.nlocal), &p);
        int rc;
        {
          nb::gil_scoped_release release;
          rc = ab_reader_read_frame(r.r, frame, p);
        }
        check(rc);
        return a;
      })
      .def("read_variable", [](Reader& r, std::int64_t frame, int var) {
        double* p;
        auto a = new_array<double>(static_cast<std::size_t>(r.nlocal), &p);
        int rc;
        {
          nb::gil_scoped_release release;
          rc = ab_reader_read_variable(r.r, frame, var, p);
        }
        check(rc);
        return a;
      })
      .def("close", [](Reader& r) {
        if (!r.r) return;
        ab_reader* p = r.r;
        r.r = nullptr;
        int rc;
        {
          nb::gil_scoped_release release;
          rc = ab_reader_close(p);
        }
        check(rc);
      });

  // This rank's part, opened one way or the other (ab_part_open or ab_part_open_global).
  auto part_arrays = [](ab_part* p) {
    std::int64_t nelem, npoin;
    int ndp, nplan;
    int rc = ab_part_sizes(p, &nelem, &npoin, &ndp, &nplan);
    if (rc != AB_OK) {
      ab_part_close(p);
      check(rc);
    }
    std::int32_t *ikle, *knolg;
    double *x, *y;
    auto a = new_array<std::int32_t>(static_cast<std::size_t>(nelem * ndp), &ikle);
    auto b = new_array<std::int32_t>(static_cast<std::size_t>(npoin), &knolg);
    auto c = new_array<double>(static_cast<std::size_t>(npoin), &x);
    auto d = new_array<double>(static_cast<std::size_t>(npoin), &y);
    rc = ab_part_mesh(p, ikle, knolg, x, y);
    ab_part_close(p);
    check(rc);
    return std::make_tuple(a, b, c, d, ndp, nplan);
  };
  m.def("read_part", [part_arrays](long long comm, const std::string& base) {
    ab_part* p = nullptr;
    check(ab_part_open(comm_of(comm), base.c_str(), &p));
    return part_arrays(p);
  });
  m.def("read_part_global", [part_arrays](long long comm, const std::string& geometry, const std::string& partition) {
    ab_part* p = nullptr;
    int rc;
    {
      nb::gil_scoped_release release;
      rc = ab_part_open_global(comm_of(comm), geometry.c_str(), partition.c_str(), &p);
    }
    check(rc);
    return part_arrays(p);
  });
}
