#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "lockstore/status.h"
#include "lockstore/tokens/token.h"

namespace fencegate::gateway {

// One request, as the access log records it. Views: valid for the duration of Write().
struct AccessLogEntry {
  std::int64_t time_ms = 0;  // Unix milliseconds when the request arrived
  std::string_view request_id;
  std::string_view route;  // empty: no route
  std::string_view method;
  std::string_view path;
  unsigned status = 0;
  std::string_view fence_key;
  std::optional<lockstore::Token> presented_token;
  std::optional<lockstore::Token> highest_token;
  std::string_view outcome;  // admitted, stale_token, ..., unfenced, no_route, upstream_error
  unsigned upstream_status = 0;
  double duration_ms = 0;
  double barrier_wait_ms = 0;
  std::uint64_t bytes_in = 0;   // request body bytes
  std::uint64_t bytes_out = 0;  // response body bytes
  std::string_view client;
  std::string_view user_agent;
  std::string_view principal;  // the authenticated principal; empty on open routes
  // The slug of the problem document the gateway answered with (gateway/http/refusal.h, or a
  // backend adapter's problem type); empty when the answer was not the gateway's refusal.
  std::string_view refusal;
  std::string_view trace_id;  // W3C trace id; empty when the request has none
  // A stale-token refusal: why the token is stale ("superseded", "lease-expired", ...); written
  // only when set.
  std::string_view stale_reason;
  // Lines of this client and fence key held back by the cap since its previous line
  // (ErrorLogCap); written as "suppressed" only when not zero.
  std::uint64_t suppressed = 0;
};

// Appends `entry` as one JSON object and a newline to `out`.
void FormatAccessLogLine(const AccessLogEntry& entry, std::string* out);

// Writes access-log lines. Each line goes out in a single write(2) on an O_APPEND descriptor,
// so lines from different network threads never interleave and no lock is needed.
class AccessLog {
 public:
  // path: "-" standard output, "" off, anything else a file opened for appending.
  static lockstore::Status Open(const std::string& path, std::unique_ptr<AccessLog>* out);
  ~AccessLog();
  AccessLog(const AccessLog&) = delete;
  AccessLog& operator=(const AccessLog&) = delete;

  bool enabled() const { return fd_ >= 0; }
  // Opens the configured file again and puts it in place of the current one (logrotate
  // renames the file, then signals). Lines go whole to the old file or to the new one: the
  // descriptor number stays the same, dup3(2) swaps what it refers to atomically. A failure
  // keeps the current file. No-op for standard output or when off. Not on a network thread.
  lockstore::Status Reopen();
  // A reload's new access_log.path, from a file to another file: opened, then put in place of
  // the current one as Reopen does. A failure keeps the current file. False (nothing done) when
  // this log or `path` is not a file: that change needs a restart. Not on a network thread, nor
  // at the same time as Reopen.
  lockstore::Status Retarget(const std::string& path);
  // Formats and writes one line. Write errors are dropped: logging never fails a request.
  void Write(const AccessLogEntry& entry);
  // The file's path; empty for standard output or off. Where Reopen and Retarget run.
  const std::string& path() const { return path_; }

 private:
  AccessLog(int fd, bool owned, std::string path = {})
      : fd_(fd), owned_(owned), path_(std::move(path)) {}
  int fd_ = -1;
  bool owned_ = false;
  std::string path_;  // the file's configured path; empty for standard output or off
};

}  // namespace fencegate::gateway
