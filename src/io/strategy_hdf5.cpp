// hdf5: one VTKHDF file (docs/formats/hdf5.md). HDF5 makes the file over every rank: its
// groups, attributes and steps, and the mesh, each rank writing its share. The frames' values
// take the engine's byte path: a variable's frame is one chunk (or a few equal ones) that
// HDF5 allocates when the frame is added, and the aggregated strategy writes every rank's
// owned values at those chunks' addresses, as it writes a SERAFIN frame. One file per step
// does the same in a file of its own for each frame, linked to the first one's mesh.
// Compressed frames (compress=SPEC) take HDF5's filters instead: each rank gathers the
// values of one block of nodes, a chunk of its own (no chunk shared between writers), and
// HDF5's collective filtered write compresses every chunk on the rank that holds it.
#include <algorithm>
#include <cstring>
#include <cstdlib>
#include <optional>

#include "core/error.hpp"
#include "core/outputs.hpp"
#include "h5/vtkhdf.hpp"
#include "io/node_blocks.hpp"
#include "io/shared_file.hpp"
#include "io/strategy.hpp"
#include "parallel/mpi_util.hpp"

namespace anabranch::pio {
namespace {

class Hdf5Strategy final : public Strategy {
 public:
  const char* name() const override { return "hdf5"; }
  bool serafin_file() const override { return false; }
  bool one_file() const override { return !s_.file_per_step; }
  int files_created(int) const override { return s_.file_per_step ? static_cast<int>(std::max<std::int64_t>(steps_, 1)) : 1; }
  std::map<std::string, std::string> file_hints() const override { return bytes_ ? bytes_->file_hints() : std::map<std::string, std::string>{}; }
  PhaseTimes phases() const override {
    PhaseTimes t = done_;
    if (bytes_) add(t, bytes_->phases());
    return t;
  }

  ~Hdf5Strategy() override {
    drop_file();
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (info_ != MPI_INFO_NULL && !finalized) MPI_Info_free(&info_);
  }

  void open(const StrategySetup& setup) override {
    s_ = setup;
    MPI_Comm_rank(s_.comm, &rank_);
    int size = 1;
    MPI_Comm_size(s_.comm, &size);
    // ROMIO (MPICH) reads a region before writing into it when a write leaves holes (data
    // sieving): HDF5's metadata pieces then cost reads of the file being made. Off unless
    // the hints say otherwise (Open MPI's OMPIO ignores the key).
    if (!s_.hints.entries().count("romio_ds_write")) {
      if (s_.info == MPI_INFO_NULL)
        MPI_Info_create(&info_);
      else
        MPI_Info_dup(s_.info, &info_);
      MPI_Info_set(info_, "romio_ds_write", "disable");
      s_.info = info_;
    }
    vtkhdf::OutputOptions& o = options_;
    o.final_path = s_.final_path;
    o.flush_frames = s_.flush_frames;
    o.chunk_bytes = s_.chunk_bytes;
    o.compress = s_.compress;
    if (s_.compress.on()) plan_blocks(size);
    o.xdmf = !s_.file_per_step;  // one file per step: the series' sidecar at close
    o.provenance["strategy"] = s_.file_per_step ? "hdf5 (one file per step)" : "hdf5";
    o.provenance["hints"] = s_.hints.str();
    o.provenance["ranks"] = std::to_string(size);
    for (const auto& [k, v] : s_.provenance) o.provenance[k] = v;
    const auto& e = s_.hints.entries();
    if (auto it = e.find("striping_unit"); it != e.end()) o.alignment = std::atoll(it->second.c_str());
    open_file();
  }

  void write(const EncodedFrame& frame) override {
    if (s_.file_per_step && steps_ > 0) open_file();
    if (s_.compress.on()) {
      write_blocks(frame);
      if (s_.file_per_step) {
        close_file();
        times_.push_back(frame.time);
      }
      ++steps_;
      return;
    }
    frame_->set(frame.index, out_->add_frame(frame.time));
    bytes_->write(frame);
    if (out_->settles() || s_.file_per_step) bytes_->wait();
    if (out_->settles()) out_->settle_frame();
    if (s_.file_per_step) {
      close_file();
      times_.push_back(frame.time);
    }
    ++steps_;
  }

  void wait() override {
    if (bytes_) bytes_->wait();
  }

  // Compressed frames: rank r gathers nodes [r * block_, (r + 1) * block_), a chunk.
  void plan_blocks(int size) {
    block_ = (s_.header.npoin + size - 1) / size;
    blocks_.emplace(s_.comm, *s_.owned, s_.header.npoin, block_);
  }

  void write_blocks(const EncodedFrame& frame) {
    const int rs = s_.layout.real_bytes, nvar = s_.header.nvar();
    const std::int64_t count = blocks_->count();
    std::vector<unsigned char> block(static_cast<std::size_t>(nvar * count * rs));
    for (int v = 0; v < nvar; ++v) blocks_->gather(*frame.encoder, v, rs, block.data() + static_cast<std::size_t>(v * count * rs));
    out_->write_frame(frame.time, blocks_->first(), count, block.data());
  }

  void close() override {
    if (s_.file_per_step) {
      if (out_) close_file();  // no frame: the mesh alone
      collective(s_.comm, [&] {
        if (rank_ != 0) return;
        std::vector<vtkhdf::XdmfFrame> frames;
        for (std::size_t k = 0; k < times_.size(); ++k)
          frames.push_back({base_name(vtkhdf::step_path(s_.final_path, static_cast<std::int64_t>(k))), 0, 1, times_[k]});
        vtkhdf::write_xdmf(vtkhdf::xdmf_path(s_.final_path), s_.header, frames);
      });
    } else if (out_) {
      close_bytes();
      out_->close();
    }
  }

  void abandon() override {
    if (bytes_) try {
        bytes_->abandon();
      } catch (...) {
      }
    drop_file();
  }

 private:
  std::string file_name() const { return s_.file_per_step ? vtkhdf::step_path(s_.final_path, steps_) : s_.final_path; }
  std::string open_name() const { return step_ ? step_->open_path() : s_.path; }
  static std::string base_name(const std::string& p) {
    const auto slash = p.rfind('/');
    return slash == std::string::npos ? p : p.substr(slash + 1);
  }

  // The one file, or step steps_'s: HDF5 makes it with the mesh (one file per step: the
  // first; the others link to its mesh), then the byte strategy opens it for the values.
  void open_file() {
    vtkhdf::OutputOptions o = options_;
    o.final_path = file_name();
    if (s_.compress.on()) o.compress_chunk = block_;  // a chunk a rank
    if (s_.file_per_step && steps_ > 0) o.mesh_link = base_name(vtkhdf::step_path(s_.final_path, 0));
    {
      const CreatingTemporary creating;
      if (s_.file_per_step) step_.emplace(s_.comm, file_name(), true);
      out_ = std::make_unique<vtkhdf::Output>(s_.comm, open_name(), s_.header, s_.info, o);
    }
    if (o.mesh_link.empty() && !s_.geometry.empty()) {  // every rank its share of the geometry
      std::optional<serafin::Reader> geometry;
      collective(s_.comm, [&] { geometry.emplace(vtkhdf::serafin_source(s_.geometry)); });
      out_->write_mesh(&*geometry);
    } else if (o.mesh_link.empty()) {
      out_->write_mesh(rank_ == 0 ? s_.mesh : nullptr);
    }
    if (s_.compress.on()) return;  // the frames go through write_frame
    frame_ = std::make_unique<StretchedFrame>(*s_.frame, out_->chunk_values() * s_.layout.real_bytes);
    StrategySetup b = s_;
    b.path = open_name();
    b.final_path = o.final_path;
    b.frame = frame_.get();
    b.truncate = false;  // HDF5's
    b.write_header = nullptr;
    b.copy_mesh = nullptr;
    bytes_ = make_strategy("aggregated");
    bytes_->open(b);
  }

  void close_bytes() {
    if (!bytes_) return;
    bytes_->close();
    add(done_, bytes_->phases());
    bytes_.reset();
  }
  static void add(PhaseTimes& t, const PhaseTimes& more) {
    t.encode += more.encode;
    t.exchange += more.exchange;
    t.wait += more.wait;
    t.write += more.write;
    t.close += more.close;
  }

  // One file per step: the step's file complete, under its name.
  void close_file() {
    close_bytes();
    out_->close();
    out_.reset();
    step_->commit();
    step_.reset();
  }

  // Abandoned (a write failed, or the step's file could not be made): the file let go; one
  // file per step removes the step it was writing (the one file is the writer's to remove).
  void drop_file() {
    bytes_.reset();
    out_.reset();  // closes the abandoned file, collectively
    step_.reset();
  }

  MPI_Info info_ = MPI_INFO_NULL;  // the hints with HDF5's defaults, when made here
  StrategySetup s_;
  int rank_ = 0;
  std::unique_ptr<vtkhdf::Output> out_;
  std::unique_ptr<StretchedFrame> frame_;
  std::unique_ptr<Strategy> bytes_;
  PhaseTimes done_;  // the byte strategies' closed so far
  vtkhdf::OutputOptions options_;
  std::int64_t steps_ = 0;
  std::optional<OutputName> step_;  // one file per step: the step's temporary
  std::vector<double> times_;  // one file per step: for the XDMF series
  // Compressed frames: the nodes a rank's block holds, and the ranks' blocks.
  std::int64_t block_ = 0;
  std::optional<NodeBlocks> blocks_;
};

}  // namespace

std::unique_ptr<Strategy> make_hdf5_strategy() { return std::make_unique<Hdf5Strategy>(); }

}  // namespace anabranch::pio
