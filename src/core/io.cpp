#include "core/io.hpp"

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <mutex>

#include "core/error.hpp"
#include "core/outputs.hpp"

namespace anabranch {

std::size_t pread_full(int fd, void* dst, std::size_t n, std::int64_t offset, const std::string& path) {
  auto* p = static_cast<char*>(dst);
  std::size_t done = 0;
  while (done < n) {
    ssize_t r = ::pread(fd, p + done, n - done, static_cast<off_t>(offset + static_cast<std::int64_t>(done)));
    if (r < 0) {
      if (errno == EINTR) continue;
      throw IoError::from_errno("cannot read", path);
    }
    if (r == 0) break;
    done += static_cast<std::size_t>(r);
  }
  return done;
}

void pwrite_all(int fd, const void* data, std::size_t n, std::int64_t offset, const std::string& path) {
  const auto* p = static_cast<const char*>(data);
  std::size_t done = 0;
  while (done < n) {
    ssize_t r = ::pwrite(fd, p + done, n - done, static_cast<off_t>(offset + static_cast<std::int64_t>(done)));
    if (r < 0) {
      if (errno == EINTR) continue;
      const int e = errno;
      throw IoError("cannot write " + path + " at byte " + std::to_string(offset + static_cast<std::int64_t>(done)) + ": " +
                    std::strerror(e));
    }
    done += static_cast<std::size_t>(r);
  }
}

void reserve_descriptors(int n) {
  rlimit rl{};
  if (::getrlimit(RLIMIT_NOFILE, &rl) != 0) return;
  const rlim_t top = std::min<rlim_t>(static_cast<rlim_t>(n), rl.rlim_cur);
  if (top <= 64) return;  // the table's first size
  for (int fd = 0; fd <= 2; ++fd) {  // any open descriptor, copied to the highest number once
    const int copy = ::fcntl(fd, F_DUPFD_CLOEXEC, static_cast<int>(top - 1));
    if (copy >= 0) {
      ::close(copy);
      return;
    }
  }
}

std::int64_t file_size_limit() {
  struct rlimit rl {};
  return ::getrlimit(RLIMIT_FSIZE, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY ? -1 : static_cast<std::int64_t>(rl.rlim_cur);
}

void check_size_limit(const std::string& name, std::int64_t end, const std::string& what) {
  const std::int64_t limit = file_size_limit();
  if (limit >= 0 && end > limit)
    throw IoError("cannot write " + name + ": " + what + " would take it past the file-size limit (ulimit -f, " + std::to_string(limit) +
                  " bytes): File too large");
}

std::int64_t file_size(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) throw IoError::from_errno("cannot stat", path);
  return static_cast<std::int64_t>(st.st_size);
}

std::string read_text_file(const std::string& path) {
  FileSource src(path);
  std::string text(static_cast<std::size_t>(src.size()), '\0');
  src.read_at(0, text.data(), text.size());
  return text;
}

std::string file_system_name(const std::string& path) {
  struct statfs st {};
  if (::statfs(path.c_str(), &st) != 0) return "unknown";
  const long type = static_cast<long>(st.f_type);
  switch (static_cast<unsigned long>(type)) {
    case 0xEF53: return "ext4";
    case 0x58465342: return "xfs";
    case 0x9123683E: return "btrfs";
    case 0x794C7630: return "overlay";
    case 0x01021994: return "tmpfs";
    case 0x6969: return "nfs";
    case 0x0BD00BD0: return "lustre";
    case 0x47504653: return "gpfs";
    case 0x19830326: return "beegfs";
    case 0x65735546: return "fuse";
    default: {
      char b[32];
      std::snprintf(b, sizeof b, "0x%lx", static_cast<unsigned long>(type));
      return b;
    }
  }
}

namespace {
// The files open for reading in this process: (device, inode) -> (open count, a name).
std::mutex inputs_mu;
std::map<std::pair<std::uint64_t, std::uint64_t>, std::pair<int, std::string>> open_inputs;
int scopes = 0;  // InputScopes alive: closed inputs are kept (count 0) until the last ends
}  // namespace

InputScope::InputScope() {
  std::lock_guard<std::mutex> lock(inputs_mu);
  ++scopes;
}

InputScope::~InputScope() {
  std::lock_guard<std::mutex> lock(inputs_mu);
  if (--scopes > 0) return;
  for (auto it = open_inputs.begin(); it != open_inputs.end();) it = it->second.first == 0 ? open_inputs.erase(it) : std::next(it);
}

void refuse_open_input(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return;
  std::lock_guard<std::mutex> lock(inputs_mu);
  auto it = open_inputs.find({static_cast<std::uint64_t>(st.st_dev), static_cast<std::uint64_t>(st.st_ino)});
  if (it == open_inputs.end()) return;
  const std::string& input = it->second.second;
  throw UsageError("the output " + path + " is " + (input == path ? "" : input + ", ") +
                   "an input of this command: writing it would destroy it (choose another output name)");
}

void forget_closed_input(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return;
  std::lock_guard<std::mutex> lock(inputs_mu);
  auto it = open_inputs.find({static_cast<std::uint64_t>(st.st_dev), static_cast<std::uint64_t>(st.st_ino)});
  if (it != open_inputs.end() && it->second.first == 0) open_inputs.erase(it);
}

bool hdf5_file_name(const std::string& path) {
  std::string lower = path;
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (const std::string e : {".h5", ".hdf", ".hdf5", ".vtkhdf"})
    if (lower.size() > e.size() && lower.compare(lower.size() - e.size(), e.size(), e) == 0) return true;
  return false;
}

bool cgns_file_name(const std::string& path) {
  std::string lower = path;
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return lower.size() > 5 && lower.compare(lower.size() - 5, 5, ".cgns") == 0;
}

bool tecplot_file_name(const std::string& path) {
  std::string lower = path;
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return lower.size() > 4 && lower.compare(lower.size() - 4, 4, ".plt") == 0;
}

bool file_exists(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0;
}

FileSource::FileSource(const std::string& path) : path_(path), name_(path) {
  // O_NONBLOCK: opening a FIFO must not wait for a writer; it is refused below.
  fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd_ < 0) throw IoError::from_errno("cannot open", path);
  struct stat st {};
  if (::fstat(fd_, &st) != 0) {
    ::close(fd_);
    throw IoError::from_errno("cannot stat", path);
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd_);
    throw IoError("cannot read " + path + ": " +
                  (S_ISDIR(st.st_mode) ? "is a directory" : "not a regular file (a FIFO, socket or device: its size is unknown)"));
  }
  ::fcntl(fd_, F_SETFL, ::fcntl(fd_, F_GETFL) & ~O_NONBLOCK);
  length_ = static_cast<std::int64_t>(st.st_size);
  dev_ = static_cast<std::uint64_t>(st.st_dev);
  ino_ = static_cast<std::uint64_t>(st.st_ino);
  std::lock_guard<std::mutex> lock(inputs_mu);
  auto& e = open_inputs[{dev_, ino_}];
  if (e.second.empty()) e.second = path;
  ++e.first;
}

FileSource::FileSource(const std::string& path, std::int64_t begin, std::int64_t length) : FileSource(path) {
  if (begin < 0 || length < 0 || begin + length > length_)
    throw FormatError(path + ": range [" + std::to_string(begin) + ", " + std::to_string(begin + length) +
                      ") lies outside the file of " + std::to_string(length_) + " bytes");
  begin_ = begin;
  length_ = length;
  name_ = path + "[" + std::to_string(begin) + ":" + std::to_string(begin + length) + "]";
}

FileSource::~FileSource() {
  if (fd_ < 0) return;
  ::close(fd_);
  std::lock_guard<std::mutex> lock(inputs_mu);
  auto it = open_inputs.find({dev_, ino_});
  if (it != open_inputs.end() && --it->second.first == 0 && scopes == 0) open_inputs.erase(it);
}

void FileSource::read_at(std::int64_t offset, void* dst, std::size_t n) const {
  if (offset < 0 || offset + static_cast<std::int64_t>(n) > length_)
    throw IoError("read past the end of " + name_ + " (byte " + std::to_string(offset) + ", " +
                  std::to_string(n) + " bytes)");
  if (pread_full(fd_, dst, n, begin_ + offset, path_) != n)
    throw IoError("file " + name_ + " shrank while being read");
}

void FileSource::advise_sequential() const {
#ifdef POSIX_FADV_SEQUENTIAL
  ::posix_fadvise(fd_, begin_, length_, POSIX_FADV_SEQUENTIAL);
#endif
}

void FileSource::will_need(std::int64_t offset, std::int64_t n) const {
#ifdef POSIX_FADV_WILLNEED
  ::posix_fadvise(fd_, begin_ + offset, n, POSIX_FADV_WILLNEED);
#endif
}

MemorySource::MemorySource(const void* data, std::size_t size, std::string name)
    : data_(static_cast<const unsigned char*>(data)), size_(size), name_(std::move(name)) {}

void MemorySource::read_at(std::int64_t offset, void* dst, std::size_t n) const {
  if (offset < 0 || static_cast<std::size_t>(offset) > size_ || n > size_ - static_cast<std::size_t>(offset))
    throw IoError("read past the end of " + name_);
  if (n) std::memcpy(dst, data_ + offset, n);
}

void MemorySink::write(const void* data, std::size_t n) {
  const auto* p = static_cast<const unsigned char*>(data);
  bytes.insert(bytes.end(), p, p + n);
}

AtomicFileSink::AtomicFileSink(std::string path, std::size_t buffer_bytes, bool direct)
    : path_(std::move(path)), direct_(direct), buffer_(new unsigned char[buffer_bytes]), capacity_(buffer_bytes) {
  refuse_open_input(path_);
  temp_ = direct ? path_ : path_ + ".tmp." + std::to_string(::getpid());
  const CreatingTemporary creating;
  if (!direct) register_temporary(temp_);
  fd_ = ::open(temp_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd_ < 0) {
    if (!direct) release_temporary(temp_);
    throw IoError::from_errno("cannot create", path_);
  }
}

AtomicFileSink::~AtomicFileSink() {
  if (fd_ < 0) return;
  if (direct_) {
    try {
      flush();  // keep what was written: complete frames stay readable
    } catch (...) {
    }
    ::close(fd_);
    return;
  }
  ::close(fd_);
  discard();
}

void AtomicFileSink::discard() {
  ::unlink(temp_.c_str());
  release_temporary(temp_);
}

void AtomicFileSink::write(const void* data, std::size_t n) {
  const auto* p = static_cast<const unsigned char*>(data);
  // Large pieces (a variable's record) go to the file as they are, without a copy through
  // the buffer; small ones (record markers, times, text) are gathered.
  constexpr std::size_t kDirect = std::size_t{64} << 10;
  if (n >= kDirect || n >= capacity_) {
    flush();
    pwrite_all(fd_, p, n, written_, path_);
    written_ += static_cast<std::int64_t>(n);
    write_behind(false);
    return;
  }
  if (used_ + n > capacity_) flush();
  std::memcpy(buffer_.get() + used_, p, n);
  used_ += n;
}

void AtomicFileSink::write_at(std::int64_t offset, const void* data, std::size_t n) {
  flush();
  if (offset + static_cast<std::int64_t>(n) > written_)
    throw UsageError("write_at past the end of " + temp_);
  pwrite_all(fd_, data, n, offset, path_);
}

void AtomicFileSink::flush() {
  if (used_ == 0) return;
  pwrite_all(fd_, buffer_.get(), used_, written_, path_);
  written_ += static_cast<std::int64_t>(used_);
  used_ = 0;
  write_behind(false);
}

void AtomicFileSink::write_behind(bool all) {
#ifdef SYNC_FILE_RANGE_WRITE
  constexpr std::int64_t kStep = std::int64_t{4} << 20;
  if (written_ - behind_ < (all ? 1 : kStep)) return;
  ::sync_file_range(fd_, behind_, written_ - behind_, SYNC_FILE_RANGE_WRITE);  // advisory: errors come at close
  behind_ = written_;
#else
  (void)all;
#endif
}

void AtomicFileSink::commit() {
  flush();
  write_behind(true);
  const int rc = ::close(fd_);
  fd_ = -1;
  if (direct_) {
    if (rc != 0) throw IoError::from_errno("cannot write", path_);  // close reports delayed write errors (NFS)
    return;
  }
  try {
    if (rc != 0) throw IoError::from_errno("cannot write", path_);
    refuse_open_input(path_);
    // A signal's sweep waits for the rename and the release, and none starts during a sweep:
    // a rename between the sweep's removal of the final name (registered by a caller whose
    // outputs are a set, as a VTK MultiBlock's) and of the temporary left the file behind.
    const CreatingTemporary renaming;
    if (::rename(temp_.c_str(), path_.c_str()) != 0) throw IoError::from_errno("cannot rename " + temp_ + " to", path_);
    release_temporary(temp_);
  } catch (...) {
    discard();
    throw;
  }
}

}  // namespace anabranch
