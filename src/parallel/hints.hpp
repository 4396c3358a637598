// MPI-IO hints (cb_nodes, cb_buffer_size, striping_factor, striping_unit, romio_cb_write,
// ...) from options and from the environment variable ANABRANCH_MPIIO_HINTS, passed
// through to MPI_File_open unchanged.
#pragma once
#include <mpi.h>

#include <map>
#include <string>

namespace anabranch::pio {

class Hints {
 public:
  // "key=value,key=value" (spaces or commas between pairs).
  static Hints parse(const std::string& text);
  // ANABRANCH_MPIIO_HINTS, if set.
  static Hints from_environment();
  // Entries of other override these.
  void merge(const Hints& other);
  void set(const std::string& key, const std::string& value) { entries_[key] = value; }
  const std::map<std::string, std::string>& entries() const { return entries_; }
  // A new MPI_Info (the caller frees it), or MPI_INFO_NULL when empty.
  MPI_Info to_info() const;
  std::string str() const;

 private:
  std::map<std::string, std::string> entries_;
};

}  // namespace anabranch::pio
