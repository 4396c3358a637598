// The parallel reader, the writer's mirror: every rank of a communicator names the global
// nodes it holds (any decomposition, on any number of ranks: a restart on N -> M processes)
// and receives their values of a frame from one SERAFIN or HDF5 file, through the chosen
// read strategy. No per-rank files, no rank parsing what it does not read.
//
// Typical use (every call collective over comm):
//   pio::Reader r(comm, "T2DRES", global_ids, nlocal, options);
//   r.read_frame(frame, values);   // values[v]: nlocal values of variable v, local order
//   r.close();
#pragma once
#include <mpi.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "formats/serafin.hpp"
#include "parallel/hints.hpp"
#include "io/strategy.hpp"

namespace anabranch::pio {

// The same on every rank (the open is collective and the ranks follow one plan).
struct ReaderOptions {
  std::string strategy = "aggregated";
  int readers_per_node = 0;                            // aggregated: 0 is auto (as writers_per_node)
  // aggregated: bytes read per reader and round; independent, collective: a rank's bytes per
  // read call or round. 0 is auto (io/strategy.hpp, RunReading): aggregated 4 MiB where every
  // rank takes its values from its node's shared memory, 16 MiB where values cross nodes by
  // MPI (fewer all-to-alls); independent 4 MiB, collective 16 MiB.
  std::int64_t buffer_bytes = 0;
  bool shared_memory = true;  // aggregated: node-local values through shared memory (0: all by MPI messages)
  Hints hints;                                         // MPI-IO hints (hdf5)

  // "strategy=independent readers_per_node=2 buffer_bytes=8388608|auto shared_memory=0
  // cb_nodes=4": the keys above; anything else is an MPI-IO hint.
  static ReaderOptions parse(const std::string& text);
};

// What every rank learns of the file at open (from the ranks that parse it).
struct FileFacts {
  serafin::Header header;
  std::int64_t frames = 0;
  std::vector<double> times;
  // How the strategy hands values over: the file's precision in this byte order (SERAFIN:
  // the file's; HDF5: native).
  ByteOrder order = ByteOrder::Big;
};

// One way of getting the values of P ranks' nodes out of a file. Every strategy hands the
// same values over.
class ReadStrategy {
 public:
  virtual ~ReadStrategy() = default;
  virtual const char* name() const = 0;
  // Collective: opens the file (file-per-process: the base name of the per-rank files) and
  // gives every rank its facts.
  virtual FileFacts open(MPI_Comm comm, const std::string& path, const ReaderOptions& options) = 0;
  // Collective: the nodes this rank reads from now on, 0-based, increasing, without repeats
  // (checked to lie in 0..NPOIN-1): the Reader's own list, which outlives the strategy
  // (kept by reference, not copied).
  virtual void prepare(const std::vector<std::int64_t>& need) = 0;
  // Collective: the needed nodes' values of variables `vars` of `frame`, handed to `out`
  // as they arrive: out.decode(k, j, count, src) takes the values of needed nodes
  // [j, j + count) of variable vars[k], at src in the file's form (FileFacts::order, the
  // header's precision).
  virtual void read(std::int64_t frame, const std::vector<int>& vars, const ValueDecoder& out) = 0;
  // Collective: closes.
  virtual void close() {}
  virtual ReadTimes times() const { return {}; }
};

struct ReadStrategyInfo {
  std::string name;
  std::string description;
  bool available;
  std::string unavailable_reason;
};
const std::vector<ReadStrategyInfo>& read_strategies();
std::unique_ptr<ReadStrategy> make_read_strategy(const std::string& name);

class Reader {
 public:
  // Collective. global_ids: 1-based global node number of each of the nlocal local nodes
  // (KNOLG); a node may be held by several ranks, and listed twice by one.
  Reader(MPI_Comm comm, const std::string& path, const std::int32_t* global_ids, std::int64_t nlocal,
         const ReaderOptions& options = {});
  ~Reader();
  Reader(const Reader&) = delete;
  Reader& operator=(const Reader&) = delete;

  const std::string& path() const { return path_; }
  std::string strategy() const { return strategy_->name(); }
  const serafin::Header& header() const { return facts_.header; }
  std::int64_t frames() const { return facts_.frames; }
  const std::vector<double>& times() const { return facts_.times; }
  std::int64_t nlocal() const { return nlocal_; }
  ReadTimes read_times() const { return strategy_->times(); }

  // Collective: every variable of a frame (0-based); values[v] receives nlocal values.
  template <class T>
  void read_frame(std::int64_t frame, T* const* values);
  // Collective: one variable (0-based) of a frame.
  template <class T>
  void read_variable(std::int64_t frame, int var, T* values);
  // Collective.
  void close();

 private:
  template <class T>
  void read_vars(std::int64_t frame, const std::vector<int>& vars, T* const* values);

  MPI_Comm comm_ = MPI_COMM_NULL;
  std::string path_;
  std::int64_t nlocal_ = 0;
  FileFacts facts_;
  std::vector<std::int64_t> need_;   // the distinct global nodes (0-based), increasing
  std::vector<std::uint32_t> where_;  // local node i -> its place in need_ (fewer than 2^32 local nodes)
  bool in_place_ = false;             // the local nodes are need_ itself (increasing, no repeats)
  std::vector<unsigned char> buffer_;  // otherwise: the needed nodes' values, then placed
  std::unique_ptr<ReadStrategy> strategy_;
  bool closed_ = false;
};

// The facts of rank `root` on every rank of comm.
FileFacts broadcast_facts(MPI_Comm comm, int root, const FileFacts& facts);

}  // namespace anabranch::pio
