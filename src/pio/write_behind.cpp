#include "pio/write_behind.hpp"

#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

#include "core/error.hpp"
#include "pio/mpi_util.hpp"

namespace anabranch::pio {

WriteBehind::WriteBehind(int fd, std::string path, int slots)
    : fd_(fd), path_(std::move(path)), pending_(static_cast<std::size_t>(slots), 0), errors_(static_cast<std::size_t>(slots)) {
  thread_ = std::thread([this] { run(); });
}

WriteBehind::~WriteBehind() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void WriteBehind::post(int slot, std::vector<Piece> pieces) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    ++pending_[static_cast<std::size_t>(slot)];
    jobs_.push_back({slot, std::move(pieces)});
  }
  cv_.notify_all();
}

void WriteBehind::wait(int slot) {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [&] { return pending_[static_cast<std::size_t>(slot)] == 0; });
  if (auto e = errors_[static_cast<std::size_t>(slot)]) {
    errors_[static_cast<std::size_t>(slot)] = nullptr;
    std::rethrow_exception(e);
  }
}

double WriteBehind::write_seconds() const {
  std::lock_guard<std::mutex> lock(mu_);
  return seconds_;
}

void WriteBehind::run() {
  for (;;) {
    Job job;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [&] { return stop_ || !jobs_.empty(); });
      if (jobs_.empty()) return;  // stopped, everything written
      job = std::move(jobs_.front());
      jobs_.pop_front();
    }
    std::exception_ptr error;
    const auto t0 = std::chrono::steady_clock::now();
    for (const auto& p : job.pieces) {
      std::int64_t done = 0;
      while (done < p.bytes && !error) {
        const ssize_t r = ::pwrite(fd_, p.data + done, static_cast<std::size_t>(p.bytes - done), static_cast<off_t>(p.offset + done));
        if (r < 0 && errno == EINTR) continue;
        if (r > 0) {
          done += r;
          continue;
        }
        // A full disk or a file-size limit shows as a short count (0) or ENOSPC/EFBIG/EDQUOT.
        const int e = r < 0 ? errno : 0;
        const std::string why = e == 0 || e == ENOSPC || e == EFBIG || e == EDQUOT ? write_failure_reason(path_, p.offset + p.bytes)
                                                                                  : std::strerror(e);
        error = std::make_exception_ptr(IoError("cannot write " + path_ + ": " + std::to_string(done) + " of " +
                                                std::to_string(p.bytes) + " bytes written from byte " + std::to_string(p.offset) +
                                                ": " + why));
      }
      if (error) break;
    }
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    {
      std::lock_guard<std::mutex> lock(mu_);
      seconds_ += secs;
      auto& slot_error = errors_[static_cast<std::size_t>(job.slot)];
      if (error && !slot_error) slot_error = error;
      --pending_[static_cast<std::size_t>(job.slot)];
    }
    cv_.notify_all();
  }
}

}  // namespace anabranch::pio
