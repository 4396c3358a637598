// Exceptions thrown inside the library. Every message is one line; format errors name the
// file, the record and the byte offset so a user can find the damage with `od`.
#pragma once
#include <cstdint>
#include <stdexcept>
#include <string>

namespace anabranch {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The bytes of a file do not mean what the format says they should.
class FormatError : public Error {
 public:
  FormatError(const std::string& file, const std::string& record, std::int64_t offset,
              const std::string& what);
  explicit FormatError(const std::string& message) : Error(message) {}
};

// The caller asked for something impossible (bad option, sizes that do not agree).
class UsageError : public Error {
 public:
  using Error::Error;
};

// The operating system refused a read, write, open or rename.
class IoError : public Error {
 public:
  using Error::Error;
  // Message "<what> <path>: <strerror(errno)>".
  static IoError from_errno(const std::string& what, const std::string& path);
};

// An MPI call failed, or another rank failed in a collective operation.
class MpiError : public Error {
 public:
  using Error::Error;
};

}  // namespace anabranch
