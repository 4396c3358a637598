// A Tecplot file's header at close. See tecplot_header.hpp.
#include "io/tecplot_header.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <vector>

#include "core/error.hpp"
#include "core/io.hpp"
#include "parallel/mpi_util.hpp"

namespace anabranch::pio {

void write_tecplot_header(MPI_Comm comm, const std::string& path, const tecplot::File& file, std::int64_t room, std::int64_t end) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  const std::int64_t bare = tecplot::header_bytes(file);
  std::int64_t head = room;  // the header's bytes: the room, or more when it does not fit
  if (bare > room - tecplot::kPaddingBytes && bare != room) head = bare > room ? bare : bare + tecplot::kPaddingBytes;
  if (head != room) {
    // Every rank a share of each round, from the end back: a round's reads are all done before
    // its writes, which land past every byte a later round reads.
    collective(comm, [&] { check_size_limit(path, end + head - room, "the header of " + std::to_string(file.zones.size()) + " zones"); });
    const std::int64_t delta = head - room, chunk = std::int64_t{16} << 20;
    std::vector<char> buf(static_cast<std::size_t>(std::min(chunk, std::max<std::int64_t>(end - room, 0))));
    const int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
    try {
      collective(comm, [&] {
        if (fd < 0) throw IoError::from_errno("cannot open", path);
      });
      for (std::int64_t hi = end; hi > room;) {
        const std::int64_t lo = std::max(room, hi - chunk * size);
        const std::int64_t a = std::min(hi, lo + chunk * rank), z = std::min(hi, a + chunk);
        const auto n = static_cast<std::size_t>(std::max<std::int64_t>(z - a, 0));
        collective(comm, [&] {
          if (n > 0 && pread_full(fd, buf.data(), n, a, path) != n)
            throw FormatError(path, "the data section", a, "the file ends before its last zone's values");
        });
        collective(comm, [&] {
          if (n > 0) pwrite_all(fd, buf.data(), n, a + delta, path);
        });
        hi = lo;
      }
    } catch (...) {
      if (fd >= 0) ::close(fd);
      throw;
    }
    collective(comm, [&] {
      if (::close(fd) != 0) throw IoError::from_errno("cannot write", path);
    });
  }
  collective(comm, [&] {
    if (rank != 0) return;
    const std::string h = tecplot::header(file, head);
    const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0) throw IoError::from_errno("cannot open", path);
    try {
      const std::int64_t last = end + head - room;
      if (file_size(path) < last && ::ftruncate(fd, static_cast<off_t>(last)) != 0) throw IoError::from_errno("cannot write", path);
      pwrite_all(fd, h.data(), h.size(), 0, path);
    } catch (...) {
      ::close(fd);
      throw;
    }
    if (::close(fd) != 0) throw IoError::from_errno("cannot write", path);
  });
}

}  // namespace anabranch::pio
