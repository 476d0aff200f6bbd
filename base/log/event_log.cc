#include "base/log/event_log.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>

#include "base/encoding/json_escape.h"
#include "base/encoding/rfc3339.h"

namespace fencegate::log {
namespace {

using gateway::AppendJsonKey;
using gateway::AppendJsonString;

template <typename T>
void AppendNumber(T value, std::string* out) {
  char text[32];
  const auto result = std::to_chars(text, text + sizeof(text), value);
  out->append(text, result.ptr);
}

void AppendTime(std::int64_t unix_ms, std::string* out) {
  *out += '"';
  encoding::AppendRfc3339Ms(unix_ms, out);
  *out += '"';
}

std::int64_t NowUnixMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

int OpenForAppend(const std::string& path) {
  return ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
}

}  // namespace

std::string_view LevelName(Level level) {
  switch (level) {
    case Level::kInfo:
      return "info";
    case Level::kWarn:
      return "warn";
    case Level::kError:
      return "error";
  }
  return "error";
}

bool ParseLevel(std::string_view name, Level* level) {
  for (const Level candidate : {Level::kInfo, Level::kWarn, Level::kError}) {
    if (name == LevelName(candidate)) {
      *level = candidate;
      return true;
    }
  }
  return false;
}

void Field::AppendTo(std::string* out) const {
  AppendJsonKey(key_, out);
  switch (kind_) {
    case Kind::kString:
      AppendJsonString(text_, out);
      return;
    case Kind::kSigned:
      AppendNumber(signed_, out);
      return;
    case Kind::kUnsigned:
      AppendNumber(unsigned_, out);
      return;
    case Kind::kDouble:
      // JSON has no NaN or infinity.
      if (std::isfinite(real_)) {
        AppendNumber(real_, out);
      } else {
        out->append("null");
      }
      return;
    case Kind::kBool:
      out->append(unsigned_ != 0 ? "true" : "false");
      return;
  }
}

void FormatEventLine(std::int64_t unix_ms, Level level, std::string_view msg,
                     std::initializer_list<Field> fields, std::string* out) {
  out->push_back('{');
  AppendJsonKey("time", out);
  AppendTime(unix_ms, out);
  AppendJsonKey("level", out);
  AppendJsonString(LevelName(level), out);
  AppendJsonKey("msg", out);
  AppendJsonString(msg, out);
  for (const Field& field : fields) field.AppendTo(out);
  out->append("}\n");
}

EventLog::~EventLog() {
  if (owned_fd_ >= 0) ::close(owned_fd_);
}

bool EventLog::Open(const std::string& path, std::string* error) {
  std::lock_guard lock(switch_mutex_);
  if (path.empty() || path == "-") {
    path_.clear();
    return SwitchTo(STDERR_FILENO, false, error);
  }
  path_ = path;
  const int fd = OpenForAppend(path_);
  if (fd < 0) {
    *error = "cannot open the event log " + path_ + ": " + std::strerror(errno);
    return false;
  }
  return SwitchTo(fd, true, error);
}

bool EventLog::Reopen(std::string* error) {
  std::lock_guard lock(switch_mutex_);
  if (path_.empty()) return true;
  const int fd = OpenForAppend(path_);
  if (fd < 0) {
    *error = "cannot reopen the event log " + path_ + ": " + std::strerror(errno);
    return false;
  }
  return SwitchTo(fd, true, error);
}

// Writers may hold the current descriptor number at any moment, so a number once used for a
// file is never closed while the log lives: the first file keeps its own number, later
// destinations are dup3'd onto it (atomically, for a write in progress).
bool EventLog::SwitchTo(int fd, bool file, std::string* error) {
  if (owned_fd_ < 0) {
    if (file) {
      owned_fd_ = fd;
      fd_.store(fd, std::memory_order_release);
    }
    return true;
  }
  const bool swapped = ::dup3(fd, owned_fd_, O_CLOEXEC) >= 0;
  const int dup_errno = errno;
  if (file) ::close(fd);
  if (!swapped) {
    *error = "cannot switch the event log: " + std::string(std::strerror(dup_errno));
    return false;
  }
  return true;
}

void EventLog::Write(Level level, std::string_view msg, std::initializer_list<Field> fields) {
  if (!Enabled(level)) return;
  // One buffer per thread, reused: no allocation per line once it has grown.
  thread_local std::string line;
  line.clear();
  FormatEventLine(NowUnixMs(), level, msg, fields, &line);
  WriteWhole(fd_.load(std::memory_order_acquire), line);
}

bool WriteWhole(int fd, std::string_view text) {
  std::size_t written = 0;
  while (written < text.size()) {
    const ssize_t n = ::write(fd, text.data() + written, text.size() - written);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    written += static_cast<std::size_t>(n);
  }
  return true;
}

EventLog& ProcessLog() {
  static EventLog log(STDERR_FILENO);
  return log;
}

}  // namespace fencegate::log
