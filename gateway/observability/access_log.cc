#include "gateway/observability/access_log.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <utility>

#include "base/encoding/json_escape.h"
#include "base/log/event_log.h"
#include "gateway/http/time_format.h"

namespace fencegate::gateway {
namespace {

void AppendUnsigned(std::uint64_t value, std::string* out) {
  char text[24];
  const auto result = std::to_chars(text, text + sizeof(text), value);
  out->append(text, result.ptr);
}

void AppendOptionalToken(const std::optional<lockstore::Token>& token, std::string* out) {
  if (token) {
    AppendUnsigned(*token, out);
  } else {
    out->append("null");
  }
}

// Milliseconds with microsecond precision, e.g. 12.345.
void AppendMillis(double ms, std::string* out) {
  char text[32];
  const auto result =
      std::to_chars(text, text + sizeof(text), ms < 0 ? 0.0 : ms, std::chars_format::fixed, 3);
  out->append(text, result.ptr);
}

int OpenForAppend(const std::string& path) {
  return ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
}

}  // namespace

void FormatAccessLogLine(const AccessLogEntry& entry, std::string* out) {
  out->push_back('{');
  AppendJsonKey("time", out);
  out->push_back('"');
  AppendRfc3339Ms(entry.time_ms, out);
  out->push_back('"');
  AppendJsonKey("request_id", out);
  AppendJsonString(entry.request_id, out);
  AppendJsonKey("route", out);
  AppendJsonString(entry.route, out);
  AppendJsonKey("method", out);
  AppendJsonString(entry.method, out);
  AppendJsonKey("path", out);
  AppendJsonString(entry.path, out);
  AppendJsonKey("status", out);
  AppendUnsigned(entry.status, out);
  AppendJsonKey("fence_key", out);
  AppendJsonString(entry.fence_key, out);
  AppendJsonKey("presented_token", out);
  AppendOptionalToken(entry.presented_token, out);
  AppendJsonKey("highest_token", out);
  AppendOptionalToken(entry.highest_token, out);
  AppendJsonKey("outcome", out);
  AppendJsonString(entry.outcome, out);
  AppendJsonKey("upstream_status", out);
  AppendUnsigned(entry.upstream_status, out);
  AppendJsonKey("duration_ms", out);
  AppendMillis(entry.duration_ms, out);
  AppendJsonKey("barrier_wait_ms", out);
  AppendMillis(entry.barrier_wait_ms, out);
  AppendJsonKey("bytes_in", out);
  AppendUnsigned(entry.bytes_in, out);
  AppendJsonKey("bytes_out", out);
  AppendUnsigned(entry.bytes_out, out);
  AppendJsonKey("client", out);
  AppendJsonString(entry.client, out);
  AppendJsonKey("user_agent", out);
  AppendJsonString(entry.user_agent, out);
  AppendJsonKey("principal", out);
  AppendJsonString(entry.principal, out);
  AppendJsonKey("refusal", out);
  AppendJsonString(entry.refusal, out);
  AppendJsonKey("trace_id", out);
  AppendJsonString(entry.trace_id, out);
  if (!entry.stale_reason.empty()) {
    AppendJsonKey("stale_reason", out);
    AppendJsonString(entry.stale_reason, out);
  }
  if (entry.suppressed != 0) {
    AppendJsonKey("suppressed", out);
    AppendUnsigned(entry.suppressed, out);
  }
  out->append("}\n");
}

lockstore::Status AccessLog::Open(const std::string& path, std::unique_ptr<AccessLog>* out) {
  if (path.empty()) {
    out->reset(new AccessLog(-1, false));
  } else if (path == "-") {
    out->reset(new AccessLog(STDOUT_FILENO, false));
  } else {
    const int fd = OpenForAppend(path);
    if (fd < 0) {
      return lockstore::Status::IOError("cannot open access log " + path + ": " +
                                        std::strerror(errno));
    }
    out->reset(new AccessLog(fd, true, path));
  }
  return lockstore::Status::Ok();
}

lockstore::Status AccessLog::Reopen() {
  if (!owned_) return lockstore::Status::Ok();
  const int fd = OpenForAppend(path_);
  if (fd < 0) {
    return lockstore::Status::IOError("cannot reopen access log " + path_ + ": " +
                                      std::strerror(errno));
  }
  const bool swapped = ::dup3(fd, fd_, O_CLOEXEC) >= 0;
  const int dup_errno = errno;
  ::close(fd);
  if (!swapped) {
    return lockstore::Status::IOError("cannot reopen access log " + path_ + ": " +
                                      std::strerror(dup_errno));
  }
  return lockstore::Status::Ok();
}

lockstore::Status AccessLog::Retarget(const std::string& path) {
  if (!owned_ || path.empty() || path == "-") {
    return lockstore::Status::InvalidArgument("only a file's access log can move to another file");
  }
  const std::string previous = std::exchange(path_, path);
  const lockstore::Status moved = Reopen();
  if (!moved.ok()) path_ = previous;
  return moved;
}

AccessLog::~AccessLog() {
  if (owned_) ::close(fd_);
}

void AccessLog::Write(const AccessLogEntry& entry) {
  if (fd_ < 0) return;
  // One buffer per thread, reused: no allocation per line once it has grown.
  thread_local std::string line;
  line.clear();
  FormatAccessLogLine(entry, &line);
  // A failed write is dropped: logging never fails a request.
  log::WriteWhole(fd_, line);
}

}  // namespace fencegate::gateway
