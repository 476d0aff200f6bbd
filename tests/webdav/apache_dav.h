#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "tests/support/process.h"
#include "tests/support/temp_dir.h"

namespace fencegate::webdav_test {

// A real Apache 2.4 with mod_dav_fs (Debian's apache2) on 127.0.0.1 and an ephemeral port,
// serving a fresh data directory under /dav/ from a temp dir: a standalone config (nothing of
// /etc/apache2 is read), DAVLockDB and data owned by www-data when run as root. Started with
// `apache2 -f CONF -DFOREGROUND` and stopped (SIGTERM, then SIGKILL) by its PID on destruction.
// The access log has one line per request: method, path, status, the request's X-Write-Token
// header, the time the request was received (microseconds since the epoch), the client's port
// and how many requests the connection carried before this one (%k: 0 on a new connection).
class ApacheDav {
 public:
  // nullptr and `error` (with Apache's error log) if it did not come up. `extra_config` is
  // appended to the config (e.g. "KeepAliveTimeout 1\n").
  static std::unique_ptr<ApacheDav> Start(std::string* error, const std::string& extra_config = "");
  ~ApacheDav();

  std::uint16_t port() const { return port_; }
  const std::string& data_dir() const { return data_dir_; }
  const std::string& access_log() const { return access_log_; }
  std::string ErrorLog() const;

 private:
  ApacheDav() = default;

  integration::TempDir dir_;
  std::unique_ptr<integration::Process> process_;
  std::uint16_t port_ = 0;
  std::string data_dir_;
  std::string access_log_;
  std::string error_log_;
};

// True when apache2 and mod_dav_fs are installed (scripts/install-deps.sh installs them).
bool ApacheAvailable();

}  // namespace fencegate::webdav_test
