// Byte sources and sinks: positioned reads with 64-bit offsets, buffered writes to a
// temporary name that is renamed to the final one only when the output is complete.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace anabranch {

// A read-only range of bytes: a whole file, a part of a file (one part of a CONCAT
// container) or a buffer in memory. Offsets are relative to the start of the range.
class ByteSource {
 public:
  virtual ~ByteSource() = default;
  virtual std::int64_t size() const = 0;
  // Reads exactly n bytes at offset; throws IoError if the range is not all there.
  virtual void read_at(std::int64_t offset, void* dst, std::size_t n) const = 0;
  // The name used in error messages (a path, or "path[begin:end]").
  virtual const std::string& name() const = 0;
  // Hint that the range will be read once, front to back (larger read-ahead).
  virtual void advise_sequential() const {}
  // Hint that bytes [offset, offset + n) will be read soon: the kernel starts reading them
  // in the background.
  virtual void will_need(std::int64_t /*offset*/, std::int64_t /*n*/) const {}
};

class FileSource final : public ByteSource {
 public:
  // The whole file.
  explicit FileSource(const std::string& path);
  // Bytes [begin, begin + length) of the file.
  FileSource(const std::string& path, std::int64_t begin, std::int64_t length);
  ~FileSource() override;
  FileSource(const FileSource&) = delete;
  FileSource& operator=(const FileSource&) = delete;

  std::int64_t size() const override { return length_; }
  void read_at(std::int64_t offset, void* dst, std::size_t n) const override;
  const std::string& name() const override { return name_; }
  void advise_sequential() const override;
  void will_need(std::int64_t offset, std::int64_t n) const override;

 private:
  int fd_ = -1;
  std::int64_t begin_ = 0, length_ = 0;
  std::string path_, name_;
  std::uint64_t dev_ = 0, ino_ = 0;  // registered as an open input while it lives
};

class MemorySource final : public ByteSource {
 public:
  MemorySource(const void* data, std::size_t size, std::string name);
  std::int64_t size() const override { return static_cast<std::int64_t>(size_); }
  void read_at(std::int64_t offset, void* dst, std::size_t n) const override;
  const std::string& name() const override { return name_; }

 private:
  const unsigned char* data_;
  std::size_t size_;
  std::string name_;
};

// Sequential byte output.
class ByteSink {
 public:
  virtual ~ByteSink() = default;
  virtual void write(const void* data, std::size_t n) = 0;
  virtual std::int64_t position() const = 0;
};

class MemorySink final : public ByteSink {
 public:
  void write(const void* data, std::size_t n) override;
  std::int64_t position() const override { return static_cast<std::int64_t>(bytes.size()); }
  std::vector<unsigned char> bytes;
};

// A file written under "<path>.tmp.<pid>" and renamed to <path> by commit(). If the
// object is destroyed before commit() (an exception, a failed check) the temporary file
// is removed, so a half-written output never appears under the final name.
class AtomicFileSink final : public ByteSink {
 public:
  // direct = true: write under the final name at once (a solver's output, readable up to
  // its last complete frame if the run dies); commit() then only flushes and closes.
  explicit AtomicFileSink(std::string path, std::size_t buffer_bytes = 8u << 20, bool direct = false);
  ~AtomicFileSink() override;
  AtomicFileSink(const AtomicFileSink&) = delete;
  AtomicFileSink& operator=(const AtomicFileSink&) = delete;

  void write(const void* data, std::size_t n) override;
  std::int64_t position() const override { return written_ + static_cast<std::int64_t>(used_); }
  // Writes `n` bytes at absolute position `offset` (which must be below position()).
  void write_at(std::int64_t offset, const void* data, std::size_t n);
  void flush();
  // Flushes, closes and renames to the final name.
  void commit();
  const std::string& path() const { return path_; }
  const std::string& temp_path() const { return temp_; }

 private:
  void discard();  // removes the temporary file
  // Write-behind: the kernel is asked to start writing out every 4 MiB as soon as it is
  // written (`all`: whatever is left), waiting for nothing. The disk works while the rest
  // is made: a large output is mostly on disk when the tool ends, and its dirty pages never
  // pile up in memory. Advisory: a write error still comes at close.
  void write_behind(bool all);
  std::int64_t behind_ = 0;  // writeback asked for [0, behind_)
  std::string path_, temp_;
  bool direct_ = false;
  int fd_ = -1;
  std::unique_ptr<unsigned char[]> buffer_;  // not zeroed: only what is written in it is touched
  std::size_t capacity_ = 0, used_ = 0;
  std::int64_t written_ = 0;
};

// Writes all n bytes at offset (pwrite loop); throws IoError.
void pwrite_all(int fd, const void* data, std::size_t n, std::int64_t offset, const std::string& path);
// Reads all n bytes at offset (pread loop); returns the count read (less at end of file).
std::size_t pread_full(int fd, void* dst, std::size_t n, std::int64_t offset, const std::string& path);

// Grows this process's table of file descriptors to hold n (up to the open-file limit). The
// kernel grows it by waiting for an RCU grace period once other threads share it (~10 ms
// here, at 64, 128, 256... open files): grown before the first thread starts, a merge or a
// partition opening hundreds of files never waits.
void reserve_descriptors(int n);
std::int64_t file_size(const std::string& path);
// The file-size limit (RLIMIT_FSIZE, ulimit -f) in bytes; -1: none.
std::int64_t file_size_limit();
// Throws IoError ("cannot write NAME: WHAT would take it past the file-size limit ...: File
// too large") when a file growing to `end` bytes would pass the file-size limit: a write
// refused before it fails halfway.
void check_size_limit(const std::string& name, std::int64_t end, const std::string& what);
// The whole file as text; throws IoError.
std::string read_text_file(const std::string& path);
bool file_exists(const std::string& path);
// Whether a name ends like an HDF5 file: .h5, .hdf, .hdf5 or .vtkhdf, in any case.
bool hdf5_file_name(const std::string& path);
// True when path ends in .cgns (any case).
bool cgns_file_name(const std::string& path);
// True when path ends in .plt (any case): Tecplot's binary format.
bool tecplot_file_name(const std::string& path);
// Throws UsageError when `path` is a file this process has open for reading (compared by
// device and inode, so ./a.slf, links and other spellings are caught): an output must never
// replace an input. Every output is checked when it is created and again before its rename.
void refuse_open_input(const std::string& path);
// `path` was only looked at (is it already the output?), not read as an input: once closed
// it no longer counts as one.
void forget_closed_input(const std::string& path);
// While one lives (a command), files read and closed again still count as inputs: a command
// that read a .cli file must not write over it later.
class InputScope {
 public:
  InputScope();
  ~InputScope();
  InputScope(const InputScope&) = delete;
  InputScope& operator=(const InputScope&) = delete;
};
// The file system holding path: ext4, xfs, lustre, gpfs, nfs, tmpfs, overlay... (statfs),
// or its magic number in hex; "unknown" when statfs fails.
std::string file_system_name(const std::string& path);

}  // namespace anabranch
