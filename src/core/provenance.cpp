#include "core/provenance.hpp"

#include <sys/utsname.h>

#include <chrono>
#include <ctime>
#include <fstream>
#include <future>
#include <tuple>
#include <mutex>
#include <vector>

#include "core/crc32.hpp"
#include "core/error.hpp"

#ifndef ANABRANCH_GIT_REVISION
#define ANABRANCH_GIT_REVISION "unknown"
#endif

namespace anabranch::provenance {
namespace {

struct Input {
  std::string path;
  std::int64_t bytes = -1;
  std::uint32_t crc = 0;
  // Size and CRC-32, computed by another thread while the command reads the file (a second
  // pass over a large input would cost as much as the conversion's own reading).
  std::shared_future<std::pair<std::int64_t, std::uint32_t>> pending;
};

struct State {
  std::mutex mutex;
  std::string command_line;
  std::vector<Input> inputs;
  std::string start_time;
};

std::string utc_now() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

State& state() {
  static State s;
  static const bool stamped = (s.start_time = utc_now(), true);
  (void)stamped;
  return s;
}

// Static initialisation records the start time as the process starts.
const bool started = (state(), true);

std::string proc_cmdline() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  for (char& c : all)
    if (c == '\0') c = ' ';
  while (!all.empty() && all.back() == ' ') all.pop_back();
  return all;
}

std::string json_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += c;
    }
  }
  return out;
}

std::string compiler() {
#if defined(__clang__)
  return std::string("clang ") + __clang_version__;
#elif defined(__GNUC__)
  return std::string("gcc ") + __VERSION__;
#else
  return "unknown";
#endif
}

}  // namespace

void set_command_line(int argc, char** argv) {
  std::string line;
  for (int i = 0; i < argc; ++i) {
    std::string a = argv[i];
    if (a.find_first_of(" \t'\"") != std::string::npos) a = "'" + a + "'";
    line += (i ? " " : "") + a;
  }
  std::lock_guard<std::mutex> lock(state().mutex);
  state().command_line = line;
}

void add_input(const std::string& path, bool here) {
  std::lock_guard<std::mutex> lock(state().mutex);
  for (const auto& in : state().inputs)
    if (in.path == path) return;
  Input in{path, -1, 0, {}};
  if (!here) {
    state().inputs.push_back(std::move(in));
    return;
  }
  in.pending = std::async(std::launch::async, [path] {
                 try {
                   std::ifstream probe(path, std::ios::binary | std::ios::ate);
                   if (!probe) return std::pair<std::int64_t, std::uint32_t>{0, 0};
                   return std::pair<std::int64_t, std::uint32_t>{static_cast<std::int64_t>(probe.tellg()), crc32_file(path)};
                 } catch (...) {
                   return std::pair<std::int64_t, std::uint32_t>{0, 0};
                 }
               }).share();
  state().inputs.push_back(std::move(in));
}

std::uint32_t crc32_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw IoError::from_errno("cannot open", path);
  std::vector<char> buf(std::size_t{1} << 20);
  std::uint32_t crc = 0;
  while (in) {
    in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
    const auto got = in.gcount();
    if (got > 0) crc = anabranch::crc32(crc, buf.data(), static_cast<std::size_t>(got));
  }
  return crc;
}

std::map<std::string, std::string> facts(bool with_inputs) {
  std::map<std::string, std::string> f;
  if (with_inputs) f["inputs"] = inputs();
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  f["program"] = "anabranch";
  f["version"] = ANABRANCH_VERSION;
  f["git_revision"] = ANABRANCH_GIT_REVISION;
  f["command_line"] = s.command_line.empty() ? proc_cmdline() : s.command_line;
  f["compiler"] = compiler();
  struct utsname u {};
  if (uname(&u) == 0) f["os"] = std::string(u.sysname) + " " + u.release + " " + u.machine;
  f["start_time"] = s.start_time;
  f["write_time"] = utc_now();
  return f;
}

std::vector<std::string> inputs_to_check() {
  std::lock_guard<std::mutex> lock(state().mutex);
  std::vector<std::string> out;
  for (const auto& in : state().inputs)
    if (in.bytes < 0 && !in.pending.valid()) out.push_back(in.path);
  return out;
}

void set_input(const std::string& path, std::int64_t bytes, std::uint32_t crc) {
  std::lock_guard<std::mutex> lock(state().mutex);
  for (auto& in : state().inputs)
    if (in.path == path) in.bytes = bytes, in.crc = crc;
}

std::string inputs() {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  std::string inputs = "[";
  for (auto& in : s.inputs) {
    if (in.bytes < 0 && in.pending.valid()) std::tie(in.bytes, in.crc) = in.pending.get();
    if (in.bytes < 0) in.bytes = 0, in.crc = 0;  // never given: unknown
    char crc[16];
    std::snprintf(crc, sizeof crc, "%08x", in.crc);
    inputs += std::string(inputs.size() > 1 ? ", " : "") + "{\"path\": \"" + json_escape(in.path) +
              "\", \"bytes\": " + std::to_string(in.bytes) + ", \"crc32\": \"" + crc + "\"}";
  }
  return inputs + "]";
}

}  // namespace anabranch::provenance
