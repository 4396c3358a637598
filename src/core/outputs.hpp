// A set of output files written under temporary names and renamed together when the
// whole set is complete; if the set is dropped before commit() every temporary file is
// removed, so a failed run leaves no partial output under a final name.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace anabranch {

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
