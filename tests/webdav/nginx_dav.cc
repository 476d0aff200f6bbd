#include "tests/webdav/nginx_dav.h"

#include <chrono>
#include <filesystem>
#include <fstream>

#include "tests/support/free_port.h"

namespace fencegate::webdav_test {

namespace {

constexpr const char* kNginx = "/usr/sbin/nginx";
constexpr const char* kDavExtModule = "/usr/lib/nginx/modules/ngx_http_dav_ext_module.so";

std::string NginxDavConfig(const std::string& root, std::uint16_t port, bool with_locks) {
  std::string config = "load_module " + std::string(kDavExtModule) + ";\n";
  config += "daemon off;\nmaster_process off;\nworker_processes 1;\n";
  config += "pid " + root + "/nginx.pid;\nerror_log " + root + "/error.log warn;\n";
  config += "events { worker_connections 256; }\nhttp {\n";
  config += "  access_log " + root + "/access.log;\n";
  for (const char* temp : {"client_body", "proxy", "fastcgi", "uwsgi", "scgi"}) {
    config += "  " + std::string(temp) + "_temp_path " + root + "/tmp;\n";
  }
  if (with_locks) config += "  dav_ext_lock_zone zone=fencegate_test:1m;\n";
  config += "  server {\n    listen 127.0.0.1:" + std::to_string(port) + ";\n";
  config += "    root " + root + "/data;\n    location / {\n";
  config += "      dav_methods PUT DELETE MKCOL COPY MOVE;\n";
  config += "      create_full_put_path on;\n      dav_access user:rw group:rw all:r;\n";
  if (with_locks) {
    config += "      dav_ext_methods PROPFIND OPTIONS LOCK UNLOCK;\n";
    config += "      dav_ext_lock zone=fencegate_test;\n";
  } else {
    config += "      dav_ext_methods PROPFIND OPTIONS;\n";
  }
  config += "    }\n  }\n}\n";
  return config;
}

}  // namespace

bool NginxDavAvailable() {
  return access(kNginx, X_OK) == 0 && std::filesystem::exists(kDavExtModule);
}

std::unique_ptr<NginxDav> NginxDav::Start(std::string* error, bool with_locks) {
  std::unique_ptr<NginxDav> nginx(new NginxDav());
  const std::string root = nginx->dir_.path();
  for (const char* sub : {"data", "tmp"}) std::filesystem::create_directory(root + "/" + sub);
  nginx->data_dir_ = root + "/data";
  for (int attempt = 0; attempt < 3; ++attempt) {
    const std::uint16_t port = integration::FreeLoopbackPort();
    const std::string conf = root + "/nginx.conf";
    { std::ofstream(conf) << NginxDavConfig(root, port, with_locks); }
    nginx->process_ = integration::Process::Start(
        {kNginx, "-p", root, "-e", root + "/error.log", "-c", conf}, error);
    if (!nginx->process_) return nullptr;
    // Ready in milliseconds; bounded at 10 s.
    for (int i = 0; i < 1000; ++i) {
      if (integration::LoopbackPortAccepts(port)) {
        nginx->port_ = port;
        return nginx;
      }
      if (nginx->process_->Wait(std::chrono::milliseconds(10))) break;
    }
    nginx->process_->Stop(std::chrono::seconds(5));
  }
  *error = "nginx did not come up: " + nginx->ErrorLog();
  return nullptr;
}

NginxDav::~NginxDav() {
  if (process_) process_->Stop(std::chrono::seconds(10));
}

std::string NginxDav::ErrorLog() const {
  return integration::ReadWholeFile(dir_.path() + "/error.log");
}

}  // namespace fencegate::webdav_test
