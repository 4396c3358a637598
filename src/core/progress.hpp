// Progress of long work, on stderr: a self-updating line on a terminal, a line every 10%
// otherwise when enabled (ANABRANCH_PROGRESS=1), nothing when disabled (--quiet).
#pragma once
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>

namespace anabranch {

class Progress {
 public:
  Progress(std::string label, std::int64_t total);
  ~Progress();
  void update(std::int64_t done);
  void finish();

  // Global switch, set by the command line (--quiet) and the environment.
  static void set_enabled(bool on);
  static bool enabled();

 private:
  std::string label_;
  std::int64_t total_;
  int last_decile_ = -1;
  bool tty_ = false, done_ = false;
  std::chrono::steady_clock::time_point start_, last_;
};

// Work that cannot say how far it is (a library call: METIS, SCOTCH): while it lives, a
// line with the seconds so far, updated twice a second on a terminal (one line at the end
// otherwise, when enabled); "done" when it ends. Nothing when progress is disabled.
class Busy {
 public:
  explicit Busy(std::string label);
  ~Busy();
  Busy(const Busy&) = delete;
  Busy& operator=(const Busy&) = delete;

 private:
  std::string label_;
  std::chrono::steady_clock::time_point start_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false, on_ = false, tty_ = false;
  std::thread ticker_;
};

// Peak resident memory of this process in bytes (VmHWM).
std::int64_t peak_rss_bytes();
std::string human_bytes(double bytes);

}  // namespace anabranch
