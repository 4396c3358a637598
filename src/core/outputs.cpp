#include "core/outputs.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <set>
#include <thread>

#include "core/error.hpp"
#include "core/io.hpp"

namespace anabranch {

namespace {
std::mutex temporaries_mu;
std::condition_variable creations_cv;
int creations = 0;      // temporaries being created now
bool sweeping = false;  // a signal is removing the temporaries: no creation starts
std::multiset<std::string>& temporaries() {
  static auto* names = new std::multiset<std::string>;  // never destroyed: the signal thread may outlive statics
  return *names;
}

// Removes a temporary and the files an MPI library made beside it for its own use while it
// was open (Open MPI's shared-file-pointer lock across nodes: NAME-<job>-<pid>.lock), which
// the library itself removes only when the file is closed.
void remove_with_companions(const std::string& path) {
  ::unlink(path.c_str());
  const auto slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : path.substr(0, slash + 1);
  const std::string stem = (slash == std::string::npos ? path : path.substr(slash + 1)) + "-";
  DIR* d = ::opendir(dir.c_str());
  if (!d) return;
  while (const dirent* e = ::readdir(d)) {
    const std::string name = e->d_name;
    if (name.size() > stem.size() + 5 && name.compare(0, stem.size(), stem) == 0 &&
        name.compare(name.size() - 5, 5, ".lock") == 0)
      ::unlinkat(::dirfd(d), name.c_str(), 0);
  }
  ::closedir(d);
}

sigset_t termination_signals() {
  sigset_t set;
  sigemptyset(&set);
  for (int s : {SIGINT, SIGTERM, SIGHUP, SIGQUIT}) sigaddset(&set, s);
  return set;
}
}  // namespace

void register_temporary(const std::string& path) {
  std::lock_guard<std::mutex> lock(temporaries_mu);
  temporaries().insert(path);
}

void release_temporary(const std::string& path) {
  std::lock_guard<std::mutex> lock(temporaries_mu);
  auto it = temporaries().find(path);
  if (it != temporaries().end()) temporaries().erase(it);
}

CreatingTemporary::CreatingTemporary() {
  std::unique_lock<std::mutex> lock(temporaries_mu);
  creations_cv.wait(lock, [] { return !sweeping; });  // after a sweep: waits for the end
  ++creations;
}

CreatingTemporary::~CreatingTemporary() {
  std::unique_lock<std::mutex> lock(temporaries_mu);
  --creations;
  creations_cv.notify_all();
  // A signal came while the outputs were made: its sweep ends the process. Going on could
  // end it first (a return from main), by status 0, as if no signal had been sent.
  if (sweeping) creations_cv.wait(lock, [] { return false; });
}

void remove_temporaries_on_signals() {
  const sigset_t set = termination_signals();
  if (pthread_sigmask(SIG_BLOCK, &set, nullptr) != 0) return;
  std::thread([set] {
    int sig = 0;
    while (sigwait(&set, &sig) != 0) {
    }
    {
      std::unique_lock<std::mutex> lock(temporaries_mu);  // held to the end: none is added after
      sweeping = true;
      creations_cv.wait_for(lock, std::chrono::seconds(2), [] { return creations == 0; });
      for (const auto& t : temporaries()) remove_with_companions(t);
      // Ended by the signal itself, as its sender expects (exit status 128 + signal).
      ::signal(sig, SIG_DFL);
      sigset_t one;
      sigemptyset(&one);
      sigaddset(&one, sig);
      pthread_sigmask(SIG_UNBLOCK, &one, nullptr);
      ::raise(sig);
      ::_exit(128 + sig);
    }
  }).detach();
  // A process that ends normally takes the sweep's lock for good before exit() destroys
  // anything: a signal that comes then finds the outputs complete and waits for the end,
  // instead of sweeping while the C++ runtime is torn down under it (a crash, SIGSEGV, 1 run
  // in about 5,000 with the signal at the last moment). A sweep already under way keeps the
  // lock, and the process ends by its signal.
  static bool once = false;
  if (!once) {
    once = true;
    std::atexit(+[] { temporaries_mu.lock(); });
  }
}

void unblock_termination_signals() {
  const sigset_t set = termination_signals();
  pthread_sigmask(SIG_UNBLOCK, &set, nullptr);
}

void block_termination_signals() {
  const sigset_t set = termination_signals();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
}

ScratchFile::ScratchFile(std::string path) : path_(std::move(path)) { register_temporary(path_); }

ScratchFile::~ScratchFile() {
  ::unlink(path_.c_str());
  release_temporary(path_);
}

TempOutputs::~TempOutputs() {
  if (committed_) return;
  for (const auto& t : temp_) {
    ::unlink(t.c_str());
    release_temporary(t);
  }
}

std::size_t TempOutputs::add(const std::string& final_path) {
  refuse_open_input(final_path);
  std::string temp = final_path + ".tmp." + std::to_string(::getpid());
  const CreatingTemporary creating;
  register_temporary(temp);
  int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    release_temporary(temp);
    throw IoError::from_errno("cannot create", final_path);
  }
  ::close(fd);
  final_.push_back(final_path);
  temp_.push_back(std::move(temp));
  return final_.size() - 1;
}

int TempOutputs::open(std::size_t id) const {
  int fd = ::open(temp_[id].c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) throw IoError::from_errno("cannot open", final_[id]);
  return fd;
}

void TempOutputs::write_at(std::size_t id, const void* data, std::size_t n, std::int64_t offset) const {
  int fd = open(id);
  try {
    pwrite_all(fd, data, n, offset, final_[id]);
  } catch (...) {
    ::close(fd);
    throw;
  }
  if (::close(fd) != 0) throw IoError::from_errno("cannot write", final_[id]);
}

void TempOutputs::commit() {
  for (const auto& f : final_) refuse_open_input(f);
  const CreatingTemporary whole;  // a signal's sweep waits for the last rename
  for (std::size_t i = 0; i < final_.size(); ++i)
    if (::rename(temp_[i].c_str(), final_[i].c_str()) != 0)
      throw IoError::from_errno("cannot rename " + temp_[i] + " to", final_[i]);
  committed_ = true;
  for (const auto& t : temp_) release_temporary(t);
}

}  // namespace anabranch
