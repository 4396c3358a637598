#include "layouts/writer.hpp"

#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <type_traits>

#include "core/error.hpp"
#include "core/io.hpp"
#include "core/outputs.hpp"
#include "formats/partel.hpp"
#include "h5/vtkhdf.hpp"
#include "parallel/mpi_util.hpp"
#include "layouts/serafin_frame.hpp"

namespace anabranch::pio {

WriterOptions WriterOptions::parse(const std::string& text) {
  WriterOptions o;
  o.hints = parse_options(text, [&](const std::string& k, const std::string& v) {
    if (k == "strategy")
      o.strategy = v;
    else if (k == "writers_per_node")
      o.writers_per_node = static_cast<int>(std::min<std::int64_t>(option_number(k, v, 1, true), INT_MAX));
    else if (k == "buffer_bytes" || k == "chunk_bytes")
      (k == "buffer_bytes" ? o.buffer_bytes : o.chunk_bytes) = option_number(k, v, k == "buffer_bytes" ? 1024 : 64);
    else if (k == "compress")
      o.compress = Compression::parse(v);
    else if (k == "frames")
      o.frames = option_number(k, v, 1);
    else if (k == "partition_method" || k == "partition_parts")
      o.provenance[k] = v;
    else if (k == "owner") {
      if (v != "lowest" && v != "highest") throw UsageError("writer option owner=" + v + ": lowest or highest");
      o.owner_highest = v == "highest";
    } else if (k == "atomic" || k == "shared_memory" || k == "flush_frames" || k == "file_per_step")
      (k == "atomic" ? o.atomic : k == "shared_memory" ? o.shared_memory : k == "flush_frames" ? o.flush_frames : o.file_per_step) =
          option_flag(k, v);
    else
      return false;
    return true;
  });
  return o;
}

Writer::Writer(MPI_Comm comm, const std::string& path, const OutputDescription& out, const std::int32_t* global_ids,
               std::int64_t nlocal, const WriterOptions& options)
    : comm_(comm), path_(path), header_(out.header), nlocal_(nlocal), options_(options) {
  MPI_Comm_rank(comm_, &rank_);
  MPI_Comm_size(comm_, &size_);
  if (options_.strategy.empty())
    options_.strategy = hdf5_file_name(path_) ? "hdf5" : cgns_file_name(path_) ? "cgns" : tecplot_file_name(path_) ? "tecplot" : "aggregated";
  // Every rank must describe the same file.
  collective(comm_, [&] {
    strategy_ = make_strategy(options_.strategy);
    if (strategy_->serafin_file()) serafin::check_record_limits(header_);
    if (options_.file_per_step && strategy_->serafin_file()) throw UsageError("file_per_step is an option of the hdf5 strategy");
    if (options_.compress.on() && options_.strategy != "hdf5" && options_.strategy != "cgns")
      throw UsageError("compress=" + options_.compress.str() + ": an option of HDF5 and CGNS outputs (a .h5 or .cgns file), not of " +
                       options_.strategy);
    if (nlocal_ < 0) throw UsageError("negative number of local nodes");
    refuse_open_input(path_);
  });
  {
    std::int64_t mine[6] = {header_.npoin, header_.nelem, header_.ndp, header_.nvar(), header_.nplan(),
                            header_.precision == Precision::Double ? 8 : 4};
    std::int64_t root[6];
    std::copy(mine, mine + 6, root);
    MPI_Bcast(root, 6, MPI_INT64_T, 0, comm_);
    collective(comm_, [&] {
      if (!std::equal(mine, mine + 6, root))
        throw UsageError("the ranks describe different files (NPOIN, NELEM, NDP, variables, planes or precision differ from rank 0's)");
    });
  }
  layout_ = serafin::Layout::of(header_);
  std::vector<std::int64_t> gids(static_cast<std::size_t>(nlocal_));
  for (std::int64_t i = 0; i < nlocal_; ++i) gids[static_cast<std::size_t>(i)] = static_cast<std::int64_t>(global_ids[i]) - 1;
  owned_ = resolve_ownership(comm_, gids.data(), nlocal_, header_.npoin, options_.owner_highest);

  Hints hints = Hints::from_environment();
  hints.merge(options_.hints);
  info_ = hints.to_info();

  name_.emplace(comm_, path_, (options_.atomic || strategy_->written_at_close()) && strategy_->one_file() && !options_.file_per_step);

  StrategySetup setup;
  setup.comm = comm_;
  setup.path = name_->open_path();
  setup.final_path = path_;
  setup.header = header_;
  setup.layout = layout_;
  setup.owned = &owned_.gid;
  const auto role = !strategy_->serafin_file() ? SerafinFrame::Role::Values
                    : rank_ == 0                 ? SerafinFrame::Role::WriterOfFixed
                                                 : SerafinFrame::Role::Writer;
  frame_ = std::make_unique<SerafinFrame>(header_, layout_, owned_.gid, role);
  setup.frame = frame_.get();
  setup.info = info_;
  setup.writers_per_node = options_.writers_per_node;
  setup.shared_memory = options_.shared_memory;
  setup.buffer_bytes = options_.buffer_bytes;
  setup.hints = hints;
  setup.file_per_step = options_.file_per_step;
  setup.flush_frames = options_.flush_frames;
  setup.chunk_bytes = options_.chunk_bytes;
  setup.compress = options_.compress;
  setup.provenance = options_.provenance;
  setup.atomic = options_.atomic;
  setup.frames = options_.frames;
  // Rank 0's geometry file (when it gives no mesh in memory), for every rank: the ranks
  // opening the file copy its mesh records in shares; rank 0 writes the records before.
  const std::string geometry = broadcast(comm_, rank_ == 0 && !out.mesh ? out.geometry : std::string());
  const serafin::Header h = header_;
  if (!geometry.empty() && strategy_->serafin_file())
    setup.copy_mesh = [geometry, h](int share, int shares, const std::function<void(std::int64_t, const void*, std::size_t)>& write_at) {
      serafin::copy_mesh_records(h, serafin::Reader(vtkhdf::serafin_source(geometry)), share, shares, write_at);
    };
  setup.geometry = geometry;  // empty where rank 0 gives its mesh in memory
  if (rank_ == 0) {
    setup.mesh = out.mesh;
    const Mesh* mesh = out.mesh;
    const bool shared = static_cast<bool>(setup.copy_mesh);
    setup.write_header = [mesh, geometry, h, shared](ByteSink& sink) {
      if (mesh) {
        serafin::write_header(sink, h, *mesh);
        return;
      }
      if (geometry.empty()) throw UsageError("rank 0 must give the global mesh or a geometry file");
      if (shared) {
        serafin::write_header_records(sink, h);  // the mesh records: every rank's share
        return;
      }
      serafin::write_header(sink, h, serafin::Reader(vtkhdf::serafin_source(geometry)));  // streamed, never held whole
    };
  }
  if (options_.strategy == "file-per-process") {
    collective(comm_, [&] {
      if (!out.local_mesh) throw UsageError("the file-per-process strategy needs each rank's local mesh (ab_writer_set_local_mesh)");
      local_mesh_ = *out.local_mesh;
      local_mesh_.npoin = nlocal_;
      local_mesh_.ipobo.assign(global_ids, global_ids + nlocal_);
      if (local_mesh_.x.size() != static_cast<std::size_t>(nlocal_) || local_mesh_.y.size() != static_cast<std::size_t>(nlocal_))
        throw UsageError("the local mesh must have one coordinate per local node");
      local_header_ = header_;
      local_header_.set_mesh_sizes(local_mesh_);
      local_header_.iparam[7] = 0;
      local_header_.iparam[8] = 0;
    });
    setup.local_header = &local_header_;
    setup.local_mesh = &local_mesh_;
  }
  try {
    const CreatingTemporary creating;  // the temporary is created in there
    strategy_->open(setup);
  } catch (...) {  // agreed by every rank (a full disk at the header)
    try {
      strategy_->abandon();
    } catch (...) {
    }
    name_->discard();
    if (info_ != MPI_INFO_NULL) MPI_Info_free(&info_);
    throw;
  }
}

Writer::~Writer() {
  // Abandoned before close(): a tool's temporary file is removed (a solver's output stays,
  // readable up to its last complete frame).
  if (failed_) {
    try {
      strategy_->abandon();  // every rank failed together: the file handles go, collectively
    } catch (...) {
    }
  }
  if (info_ != MPI_INFO_NULL) {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized) MPI_Info_free(&info_);
  }
}

int Writer::files_created() const { return strategy_->files_created(size_); }

PhaseTimes Writer::phases() const {
  PhaseTimes t = strategy_->phases();
  t.encode += encode_seconds_;
  return t;
}

namespace {

// Owned values of the caller's arrays (T) to the file's precision (R) and byte order.
template <class R, class T>
class Encoder final : public ValueEncoder {
 public:
  Encoder(const T* const* values, const Owned& owned, bool swap) : values_(values), owned_(owned), swap_(swap) {}
  void encode(int var, std::int64_t first, std::int64_t count, unsigned char* dst) const override {
    encode_owned<R>(values_[var], owned_, first, count, swap_, dst);
  }

 private:
  const T* const* values_;
  const Owned& owned_;
  bool swap_;
};

}  // namespace

// file-per-process: every local value, variable after variable, in the file's form.
template <class T>
void Writer::encode_local(const T* const* values) {
  const int rs = layout_.real_bytes;
  local_values_.resize(static_cast<std::size_t>(header_.nvar() * nlocal_ * rs));
  for (int v = 0; v < header_.nvar(); ++v)
    serafin::encode_reals(values[v], nlocal_, header_.precision, header_.byte_order, local_values_.data() + v * nlocal_ * rs);
}

template <class T>
void Writer::begin_frame(double time, const T* const* values) {
  if (closed_) throw UsageError("begin_frame on a closed writer");
  if (pending_) end_frame();
  EncodedFrame f;
  f.index = frames_;
  f.time = time;
  f.local_values = &local_values_;
  struct Failed {  // an exception from here on was agreed by every rank
    bool& failed;
    bool done = false;
    ~Failed() { failed = failed || !done; }
  } failed{failed_};
  const bool swap = (strategy_->serafin_file() ? header_.byte_order : native_byte_order()) != native_byte_order();
  const Encoder<float, T> to_single(values, owned_, swap);
  const Encoder<double, T> to_double(values, owned_, swap);
  if (strategy_->encodes_owned())
    f.encoder = header_.precision == Precision::Single ? static_cast<const ValueEncoder*>(&to_single) : &to_double;
  else {
    const double t0 = MPI_Wtime();
    collective(comm_, [&] { encode_local(values); });
    encode_seconds_ += MPI_Wtime() - t0;
  }
  strategy_->write(f);
  failed.done = true;
  ++frames_;
  pending_ = true;
}

void Writer::end_frame() {
  if (!pending_) return;
  pending_ = false;
  try {
    strategy_->wait();
  } catch (...) {
    failed_ = true;
    throw;
  }
}

template <class T>
void Writer::write_frame(double time, const T* const* values) {
  begin_frame(time, values);
  end_frame();
}

template void Writer::write_frame<float>(double, const float* const*);
template void Writer::write_frame<double>(double, const double* const*);
template void Writer::begin_frame<float>(double, const float* const*);
template void Writer::begin_frame<double>(double, const double* const*);

void Writer::close() {
  if (closed_) return;
  closed_ = true;
  try {
    end_frame();
    strategy_->close();
    // Open MPI's two-phase collective writes report a full disk on the aggregator only, and
    // not in the count: a shared SERAFIN file has exactly the size its frames give.
    if (strategy_->serafin_file() && strategy_->one_file()) name_->check_size(layout_.frame_offset(frames_), frames_);
    name_->commit();
  } catch (...) {
    failed_ = true;
    name_->discard();  // a tool's output: nothing partial stays
    throw;
  }
}

}  // namespace anabranch::pio
