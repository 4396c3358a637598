// The pieces the MPI-IO strategies, readers and writers share: open a shared file, truncate
// it, have rank 0 write the header; close it; open one to read; the name an output is
// written under (a temporary renamed at the end); the strategies' common part.
#pragma once
#include <mpi.h>

#include <cstdint>
#include <map>
#include <string>

#include "io/strategy.hpp"

namespace anabranch::pio {

// Collective over comm: opens (creating) path for writing, truncates it (setup.truncate), and has the rank
// whose comm rank is 0 write the header with setup.write_header. Returns the handle.
MPI_File open_shared_file(MPI_Comm comm, const StrategySetup& setup);
// Collective over comm: opens path to read, with the hints of ANABRANCH_MPIIO_HINTS and
// `hints` over them; errors returned, not fatal. IoError naming the file on every rank.
MPI_File open_input_file(MPI_Comm comm, const std::string& path, const Hints& hints);
// Collective: closes the file.
void close_shared_file(MPI_Comm comm, MPI_File& fh);

// The name a shared output is written under, alike on every rank: its final name, or (a
// temporary) `<path>.tmp.<pid of rank 0>` beside it, registered so that a signal removes it.
// commit() renames the temporary to the final name; dropped before, the temporary is removed.
class OutputName {
 public:
  // Collective.
  OutputName(MPI_Comm comm, std::string path, bool temporary);
  ~OutputName() { discard(); }
  OutputName(const OutputName&) = delete;
  OutputName& operator=(const OutputName&) = delete;
  const std::string& path() const { return path_; }       // the final name
  const std::string& open_path() const { return open_; }  // where the file is written
  bool temporary() const { return open_ != path_; }
  // Collective: rank 0 checks that the file holds `expected` bytes, what `frames` frames make:
  // the last line of defence against a write the MPI-IO library reported as complete.
  void check_size(std::int64_t expected, std::int64_t frames) const;
  // Collective: the temporary renamed to the final name (refused while the final name is an
  // input this process reads).
  void commit();
  // The temporary removed now (rank 0; not collective, errors ignored).
  void discard();

 private:
  MPI_Comm comm_;
  int rank_ = 0;
  std::string path_, open_;
  bool pending_ = false;  // a temporary registered, not yet renamed or removed
};

// The hints the MPI-IO library holds for fh (empty for MPI_FILE_NULL).
std::map<std::string, std::string> hints_in_use(MPI_File fh);

// A strategy writing one shared MPI-IO file: its set-up, the handle, the phase times.
class SharedFileStrategy : public Strategy {
 public:
  PhaseTimes phases() const override { return times_; }
  std::map<std::string, std::string> file_hints() const override { return hints_in_use(fh_); }
  void abandon() override {
    if (fh_ != MPI_FILE_NULL) MPI_File_close(&fh_);
  }
  void close() override { close_shared_file(s_.comm, fh_); }

 protected:
  StrategySetup s_;
  PhaseTimes times_;
  MPI_File fh_ = MPI_FILE_NULL;
};

}  // namespace anabranch::pio
