#include "cli/cgns_helper.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>

#include "core/error.hpp"
#include "core/io.hpp"
#include "core/outputs.hpp"

namespace anabranch::cli {
namespace {

std::string helper_path() {
  if (const char* env = std::getenv("ANABRANCH_CGNS")) return env;
  char self[4096];
  const ssize_t n = ::readlink("/proc/self/exe", self, sizeof self - 1);
  if (n > 0) {
    std::string dir(self, static_cast<std::size_t>(n));
    dir = dir.substr(0, dir.find_last_of('/'));
    const std::string beside = dir + "/anabranch-cgns";
    if (::access(beside.c_str(), X_OK) == 0) return beside;
  }
  return "anabranch-cgns";
}

}  // namespace

void write_fd(int fd, const void* data, std::size_t n) {
  const auto* p = static_cast<const char*>(data);
  while (n > 0) {
    const ssize_t w = ::write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) throw IoError(std::string("cannot send the blocks to anabranch-cgns: ") + std::strerror(errno));
    p += w;
    n -= static_cast<std::size_t>(w);
  }
}

void read_fd(int fd, void* data, std::size_t n) {
  auto* p = static_cast<char*>(data);
  while (n > 0) {
    const ssize_t r = ::read(fd, p, n);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) throw FormatError("anabranch-cgns: its block stream ends early");
    p += r;
    n -= static_cast<std::size_t>(r);
  }
}

void run_cgns_helper(const std::vector<std::string>& args, const std::function<void(int fd)>& feed,
                     const std::function<void(int fd)>& drain) {
  const std::string exe = helper_path();
  char err_name[] = "/tmp/anabranch-cgns-XXXXXX";
  const int err_fd = ::mkstemp(err_name);
  if (err_fd < 0) throw IoError::from_errno("cannot create", err_name);
  ::unlink(err_name);
  int in[2] = {-1, -1}, out[2] = {-1, -1};
  if ((feed && ::pipe(in) != 0) || (drain && ::pipe(out) != 0)) throw IoError::from_errno("cannot make a pipe for", exe);
  const pid_t pid = ::fork();
  if (pid < 0) throw IoError::from_errno("cannot run", exe);
  if (pid == 0) {
    if (feed) ::dup2(in[0], 0);
    if (drain) ::dup2(out[1], 1);
    ::dup2(err_fd, 2);
    for (int fd : {in[0], in[1], out[0], out[1]})
      if (fd >= 0) ::close(fd);
    std::vector<std::string> all = {exe};
    all.insert(all.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (auto& a : all) argv.push_back(a.data());
    argv.push_back(nullptr);
    unblock_termination_signals();
    ::execvp(argv[0], argv.data());
    const std::string msg = "anabranch-cgns: error: cannot run " + exe + ": " + std::strerror(errno) +
                            " (this anabranch was built without CGNS, or set ANABRANCH_CGNS)\n";
    (void)!::write(2, msg.data(), msg.size());
    ::_exit(127);
  }
  if (feed) ::close(in[0]);
  if (drain) ::close(out[1]);
  // A helper that dies while we write must not kill us with SIGPIPE.
  struct sigaction ignore {}, old {};
  ignore.sa_handler = SIG_IGN;
  ::sigaction(SIGPIPE, &ignore, &old);
  std::exception_ptr failure;
  try {
    if (feed) feed(in[1]);
  } catch (...) {
    failure = std::current_exception();
  }
  if (feed) ::close(in[1]);
  try {
    if (drain && !failure) drain(out[0]);
  } catch (...) {
    failure = std::current_exception();
  }
  if (drain) ::close(out[0]);
  ::sigaction(SIGPIPE, &old, nullptr);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  std::string said;
  {
    ::lseek(err_fd, 0, SEEK_SET);
    char buf[4096];
    ssize_t r;
    while ((r = ::read(err_fd, buf, sizeof buf)) > 0) said.append(buf, static_cast<std::size_t>(r));
    ::close(err_fd);
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::string line = said.substr(0, said.find('\n'));
    const std::string prefix = "anabranch-cgns: error: ";
    if (line.rfind(prefix, 0) == 0) line = line.substr(prefix.size());
    if (line.empty()) line = exe + " failed (" + (WIFSIGNALED(status) ? "signal " + std::to_string(WTERMSIG(status)) : "exit " + std::to_string(WEXITSTATUS(status))) + ")";
    throw IoError(line);
  }
  if (failure) std::rethrow_exception(failure);
}

}  // namespace anabranch::cli
