#pragma once

#include <atomic>
#include <concepts>
#include <cstdint>
#include <initializer_list>
#include <mutex>
#include <string>
#include <string_view>

namespace fencegate::log {

enum class Level { kInfo = 0, kWarn = 1, kError = 2 };

// "info", "warn", "error".
std::string_view LevelName(Level level);
// False for anything but the three names.
bool ParseLevel(std::string_view name, Level* level);

// One member of an event line besides time, level and msg. Holds views: valid for the call
// that writes the line.
class Field {
 public:
  Field(std::string_view key, std::string_view value)
      : key_(key), kind_(Kind::kString), text_(value) {}
  Field(std::string_view key, const char* value) : Field(key, std::string_view(value)) {}
  Field(std::string_view key, const std::string& value) : Field(key, std::string_view(value)) {}
  Field(std::string_view key, bool value) : key_(key), kind_(Kind::kBool), unsigned_(value) {}
  Field(std::string_view key, double value) : key_(key), kind_(Kind::kDouble), real_(value) {}
  template <std::signed_integral T>
  Field(std::string_view key, T value) : key_(key), kind_(Kind::kSigned), signed_(value) {}
  template <std::unsigned_integral T>
  requires(!std::same_as<T, bool>) Field(std::string_view key, T value)
      : key_(key), kind_(Kind::kUnsigned), unsigned_(value) {}

  // Appends ,"key":value (the key as given: a name the caller spells, never input).
  void AppendTo(std::string* out) const;

 private:
  enum class Kind { kString, kSigned, kUnsigned, kDouble, kBool };
  std::string_view key_;
  Kind kind_;
  std::string_view text_;
  std::int64_t signed_ = 0;
  std::uint64_t unsigned_ = 0;
  double real_ = 0;
};

// Appends one event line, newline included:
// {"time":"2026-12-06T06:30:00.123Z","level":"info","msg":"...",<fields>}
void FormatEventLine(std::int64_t unix_ms, Level level, std::string_view msg,
                     std::initializer_list<Field> fields, std::string* out);

// Writes event lines to standard error or a file. Each line goes out in one write(2), so lines
// of different threads never interleave (a file is opened O_APPEND; on a pipe, lines up to
// PIPE_BUF are atomic). Writing takes no lock: the descriptor and the level are atomics, and a
// file is swapped for another with dup3(2) under the same descriptor number.
class EventLog {
 public:
  // Writes to `fd` (not owned) from lines of `min_level` up.
  explicit EventLog(int fd, Level min_level = Level::kInfo) : fd_(fd), level_(int(min_level)) {}
  ~EventLog();
  EventLog(const EventLog&) = delete;
  EventLog& operator=(const EventLog&) = delete;

  // Sends the lines to `path` from now on: "-" or "" standard error, anything else a file opened
  // for appending. False (and the destination unchanged) when the file cannot be opened.
  bool Open(const std::string& path, std::string* error);
  // Opens the configured file again in place of the current one (logrotate renamed it). No-op
  // for standard error. Blocks: never on a network thread.
  bool Reopen(std::string* error);

  void set_level(Level level) { level_.store(int(level), std::memory_order_relaxed); }
  bool Enabled(Level level) const { return int(level) >= level_.load(std::memory_order_relaxed); }

  // Write errors are dropped: logging never fails what it reports on.
  void Write(Level level, std::string_view msg, std::initializer_list<Field> fields = {});
  void Info(std::string_view msg, std::initializer_list<Field> fields = {}) {
    Write(Level::kInfo, msg, fields);
  }
  void Warn(std::string_view msg, std::initializer_list<Field> fields = {}) {
    Write(Level::kWarn, msg, fields);
  }
  void Error(std::string_view msg, std::initializer_list<Field> fields = {}) {
    Write(Level::kError, msg, fields);
  }

 private:
  bool SwitchTo(int fd, bool file, std::string* error);

  std::atomic<int> fd_;
  std::atomic<int> level_;
  // Open and Reopen (start-up, SIGUSR1, reload) among themselves; writers never take it.
  std::mutex switch_mutex_;
  int owned_fd_ = -1;  // the descriptor number kept for files, once one was opened
  std::string path_;   // the configured file; empty for standard error
};

// The process's event log: standard error at level info until the configuration says
// otherwise (Server::Start).
EventLog& ProcessLog();

// Writes all of `text` to `fd` (short writes and EINTR retried): one log line. False on an error,
// which a logger drops (logging never fails what it logs).
bool WriteWhole(int fd, std::string_view text);

inline void Info(std::string_view msg, std::initializer_list<Field> fields = {}) {
  ProcessLog().Write(Level::kInfo, msg, fields);
}
inline void Warn(std::string_view msg, std::initializer_list<Field> fields = {}) {
  ProcessLog().Write(Level::kWarn, msg, fields);
}
inline void Error(std::string_view msg, std::initializer_list<Field> fields = {}) {
  ProcessLog().Write(Level::kError, msg, fields);
}

}  // namespace fencegate::log
