// MPI-IO hints (cb_nodes, cb_buffer_size, striping_factor, striping_unit, romio_cb_write,
// ...) from options and from the environment variable ANABRANCH_MPIIO_HINTS, passed
// through to MPI_File_open unchanged.
#pragma once
#include <mpi.h>

#include <cstdint>
#include <functional>
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

// The options text of the engine's users ("strategy=aggregated buffer_bytes=8388608
// cb_nodes=4", pairs split by spaces or commas): each pair handed to `take`, which returns
// false for a key it does not know; those are the MPI-IO hints returned. UsageError for a
// pair that is not key=value.
Hints parse_options(const std::string& text, const std::function<bool(const std::string& key, const std::string& value)>& take);
// An option's value as a whole number of at least `least` ("auto" is 0 where auto_ok), or as
// a flag (1, true, yes or 0, false, no). UsageError naming key=value otherwise.
std::int64_t option_number(const std::string& key, const std::string& value, std::int64_t least, bool auto_ok = false);
bool option_flag(const std::string& key, const std::string& value);

}  // namespace anabranch::pio
