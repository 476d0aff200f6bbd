#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "tests/support/process.h"
#include "tests/support/temp_dir.h"

namespace fencegate::webdav_test {

// A real nginx (Debian's, with the core dav module and libnginx-mod-http-dav-ext) on 127.0.0.1
// and an ephemeral port, serving a fresh data directory at / with PUT DELETE MKCOL COPY MOVE
// and PROPFIND OPTIONS (and, `with_locks`, LOCK UNLOCK from a dav_ext_lock zone): the WebDAV
// server that accepts conditions and ignores them. One process (master_process off), its own
// prefix, pid, temp paths and logs; stopped by its PID on destruction.
class NginxDav {
 public:
  static std::unique_ptr<NginxDav> Start(std::string* error, bool with_locks = true);
  ~NginxDav();

  std::uint16_t port() const { return port_; }
  const std::string& data_dir() const { return data_dir_; }
  std::string ErrorLog() const;

 private:
  NginxDav() = default;

  integration::TempDir dir_;
  std::unique_ptr<integration::Process> process_;
  std::uint16_t port_ = 0;
  std::string data_dir_;
};

// True when nginx and the dav-ext module are installed (scripts/install-deps.sh installs them).
bool NginxDavAvailable();

}  // namespace fencegate::webdav_test
