#include "core/outputs.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>

#include "core/error.hpp"
#include "core/io.hpp"

namespace anabranch {

TempOutputs::~TempOutputs() {
  if (committed_) return;
  for (const auto& t : temp_) ::unlink(t.c_str());
}

std::size_t TempOutputs::add(const std::string& final_path) {
  refuse_open_input(final_path);
  std::string temp = final_path + ".tmp." + std::to_string(::getpid());
  int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw IoError::from_errno("cannot create", temp);
  ::close(fd);
  final_.push_back(final_path);
  temp_.push_back(std::move(temp));
  return final_.size() - 1;
}

int TempOutputs::open(std::size_t id) const {
  int fd = ::open(temp_[id].c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) throw IoError::from_errno("cannot open", temp_[id]);
  return fd;
}

void TempOutputs::write_at(std::size_t id, const void* data, std::size_t n, std::int64_t offset) const {
  int fd = open(id);
  try {
    pwrite_all(fd, data, n, offset, temp_[id]);
  } catch (...) {
    ::close(fd);
    throw;
  }
  if (::close(fd) != 0) throw IoError::from_errno("cannot close", temp_[id]);
}

void TempOutputs::commit() {
  for (const auto& f : final_) refuse_open_input(f);
  for (std::size_t i = 0; i < final_.size(); ++i)
    if (::rename(temp_[i].c_str(), final_[i].c_str()) != 0)
      throw IoError::from_errno("cannot rename " + temp_[i] + " to", final_[i]);
  committed_ = true;
}

}  // namespace anabranch
