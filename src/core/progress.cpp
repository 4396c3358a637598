#include "core/progress.hpp"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>

namespace anabranch {
namespace {
int g_enabled = -1;  // -1: decide from the environment and the terminal
}

void Progress::set_enabled(bool on) { g_enabled = on ? 1 : 0; }

bool Progress::enabled() {
  if (g_enabled >= 0) return g_enabled == 1;
  const char* env = std::getenv("ANABRANCH_PROGRESS");
  if (env) return std::strcmp(env, "0") != 0;
  return ::isatty(STDERR_FILENO) == 1;
}

Progress::Progress(std::string label, std::int64_t total)
    : label_(std::move(label)), total_(total > 0 ? total : 1) {
  tty_ = ::isatty(STDERR_FILENO) == 1;
  start_ = last_ = std::chrono::steady_clock::now();
}

Progress::~Progress() { finish(); }

void Progress::update(std::int64_t done) {
  if (done_ || !enabled()) return;
  auto now = std::chrono::steady_clock::now();
  int pct = static_cast<int>(100.0 * static_cast<double>(done) / static_cast<double>(total_));
  double secs = std::chrono::duration<double>(now - start_).count();
  if (tty_) {
    if (now - last_ < std::chrono::milliseconds(200) && done < total_) return;
    last_ = now;
    std::fprintf(stderr, "\r%s: %3d%% (%.1f s)", label_.c_str(), pct, secs);
    std::fflush(stderr);
  } else {
    int decile = pct / 10;
    if (decile == last_decile_) return;
    last_decile_ = decile;
    std::fprintf(stderr, "%s: %d%% (%.1f s)\n", label_.c_str(), decile * 10, secs);
  }
}

void Progress::finish() {
  if (done_) return;
  done_ = true;
  if (enabled() && tty_ && last_ != start_) {
    double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    std::fprintf(stderr, "\r%s: done (%.1f s)   \n", label_.c_str(), secs);
  }
}

Busy::Busy(std::string label) : label_(std::move(label)), start_(std::chrono::steady_clock::now()) {
  on_ = Progress::enabled();
  tty_ = ::isatty(STDERR_FILENO) == 1;
  if (!on_ || !tty_) return;
  ticker_ = std::thread([this] {
    std::unique_lock<std::mutex> lock(mu_);
    while (!cv_.wait_for(lock, std::chrono::milliseconds(500), [this] { return stop_; })) {
      const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
      std::fprintf(stderr, "\r%s: %.1f s", label_.c_str(), secs);
      std::fflush(stderr);
    }
  });
}

Busy::~Busy() {
  if (!on_) return;
  if (ticker_.joinable()) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    ticker_.join();
  }
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  std::fprintf(stderr, tty_ ? "\r%s: done (%.1f s)   \n" : "%s: done (%.1f s)\n", label_.c_str(), secs);
}

std::int64_t peak_rss_bytes() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmHWM:", 0) == 0) return std::atoll(line.c_str() + 6) * 1024;
  }
  return 0;
}

std::string human_bytes(double b) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (b >= 1024.0 && u < 4) {
    b /= 1024.0;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, u == 0 ? "%.0f %s" : "%.1f %s", b, units[u]);
  return buf;
}

}  // namespace anabranch
