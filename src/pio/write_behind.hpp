// A writer rank's I/O thread: the pieces of a buffer are written (pwrite on the rank's own
// descriptor of the shared file) while the caller fills the next buffer. Only POSIX calls
// run on the thread, so MPI's thread level does not matter; the thread keeps the process's
// termination signals blocked (core/outputs.hpp), as every thread but the signal thread.
#pragma once
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace anabranch::pio {

class WriteBehind {
 public:
  struct Piece {
    const unsigned char* data;
    std::int64_t offset, bytes;
  };
  // fd: open for writing (not owned); path: the name in error messages; slots: buffers in turn.
  WriteBehind(int fd, std::string path, int slots);
  ~WriteBehind();  // finishes what was posted (errors dropped) and joins
  WriteBehind(const WriteBehind&) = delete;
  WriteBehind& operator=(const WriteBehind&) = delete;

  // Queues the pieces of a slot's buffer; the buffer must stay untouched until wait(slot).
  void post(int slot, std::vector<Piece> pieces);
  // Blocks until the slot's pieces are written; throws IoError for the first that was not
  // ("cannot write PATH: N of M bytes written from byte X: reason"), once.
  void wait(int slot);
  // Seconds the thread spent in pwrite since the start.
  double write_seconds() const;

 private:
  struct Job {
    int slot;
    std::vector<Piece> pieces;
  };
  void run();

  int fd_;
  std::string path_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Job> jobs_;
  std::vector<int> pending_;                // posted and not yet written, per slot
  std::vector<std::exception_ptr> errors_;  // per slot
  double seconds_ = 0;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace anabranch::pio
