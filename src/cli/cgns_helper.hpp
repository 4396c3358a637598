// The CGNS helper program (anabranch-cgns, src/cgns/): CGNS files are written and read in a
// process of its own, because Debian's libcgns is built on the serial HDF5 library and
// anabranch links the parallel one. Found as $ANABRANCH_CGNS, beside this executable, or on
// the PATH.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "core/io.hpp"  // cgns_file_name

namespace anabranch::cli {

// Runs anabranch-cgns with args; feed(fd) writes its stdin, drain(fd) reads its stdout (each
// may be empty). Throws the helper's own one-line error (naming the file), or IoError when it
// cannot be run.
void run_cgns_helper(const std::vector<std::string>& args, const std::function<void(int fd)>& feed,
                     const std::function<void(int fd)>& drain);

// Writes n bytes to fd, reads n bytes from fd (throwing IoError / FormatError).
void write_fd(int fd, const void* data, std::size_t n);
void read_fd(int fd, void* data, std::size_t n);

}  // namespace anabranch::cli
