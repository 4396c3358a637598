// A set of output files written under temporary names and renamed together when the
// whole set is complete; if the set is dropped before commit() every temporary file is
// removed, so a failed run leaves no partial output under a final name.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace anabranch {

// Temporary files of this process: registered before they are created, released once
// renamed or removed. A signal that ends the process removes those still registered (when
// the program asked for it with remove_temporaries_on_signals).
void register_temporary(const std::string& path);
void release_temporary(const std::string& path);
// Held while a registered temporary is being created (open with O_CREAT, MPI_File_open,
// H5Fcreate), and while a set of temporaries is renamed to its final names: the signal's
// sweep waits until no creation is in progress (up to 2 s, for a collective creation that
// another rank never joins), and none starts after the sweep, so no file is created after
// the temporaries were removed, and a set is renamed whole or not at all.
class CreatingTemporary {
 public:
  CreatingTemporary();
  ~CreatingTemporary();
  CreatingTemporary(const CreatingTemporary&) = delete;
  CreatingTemporary& operator=(const CreatingTemporary&) = delete;
};
// For the command-line program, before any other thread starts (MPI's included): SIGINT,
// SIGTERM, SIGHUP and SIGQUIT are blocked in every thread and taken by one thread that
// removes the registered temporaries, then ends the process by the same signal. (Libraries
// such as METIS catch SIGTERM for their own error handling; a signal taken this way still
// ends the process as the sender meant.)
void remove_temporaries_on_signals();
// Unblocks those signals in this thread (a child about to exec another program, a popen),
// and blocks them again.
void unblock_termination_signals();
void block_termination_signals();

// A file a command writes only to measure or check: removed when the object goes (and by a
// signal that ends the process).
class ScratchFile {
 public:
  explicit ScratchFile(std::string path);
  ~ScratchFile();
  ScratchFile(const ScratchFile&) = delete;
  ScratchFile& operator=(const ScratchFile&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

class TempOutputs {
 public:
  TempOutputs() = default;
  ~TempOutputs();
  TempOutputs(const TempOutputs&) = delete;
  TempOutputs& operator=(const TempOutputs&) = delete;

  // Creates an empty temporary file for final_path; returns its id.
  std::size_t add(const std::string& final_path);
  // Opens file id for writing (the caller closes the descriptor).
  int open(std::size_t id) const;
  // Writes n bytes at offset of file id (opens and closes it).
  void write_at(std::size_t id, const void* data, std::size_t n, std::int64_t offset) const;
  const std::string& temp_path(std::size_t id) const { return temp_[id]; }
  const std::string& final_path(std::size_t id) const { return final_[id]; }
  std::size_t size() const { return final_.size(); }
  // Renames every temporary file to its final name.
  void commit();

 private:
  std::vector<std::string> final_, temp_;
  bool committed_ = false;
};

}  // namespace anabranch
