#include "tests/webdav/apache_dav.h"

#include <pwd.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "tests/support/free_port.h"

namespace fencegate::webdav_test {

namespace {

constexpr const char* kApache = "/usr/sbin/apache2";
constexpr const char* kModules = "/usr/lib/apache2/modules";

// Apache's children run as www-data when started as root; they must own what they write.
bool GiveToWwwData(const std::string& path) {
  if (geteuid() != 0) return true;
  const passwd* user = getpwnam("www-data");
  return user != nullptr && chown(path.c_str(), user->pw_uid, user->pw_gid) == 0;
}

std::string Config(const std::string& root, std::uint16_t port, const std::string& extra) {
  std::string config;
  config += "ServerRoot " + root + "\n";
  config += "ServerName 127.0.0.1\n";
  config += "Listen 127.0.0.1:" + std::to_string(port) + "\n";
  config += "PidFile " + root + "/httpd.pid\n";
  config += "ErrorLog " + root + "/error.log\n";
  config += "LogLevel warn\n";
  for (const char* module : {"mpm_event", "authz_core", "alias", "dav", "dav_fs"}) {
    config +=
        "LoadModule " + std::string(module) + "_module " + kModules + "/mod_" + module + ".so\n";
  }
  if (geteuid() == 0) config += "User www-data\nGroup www-data\n";
  // Enough workers for the race tests' concurrent clients, whatever the gateways hold open.
  config += "StartServers 2\nThreadsPerChild 64\nMaxRequestWorkers 256\n";
  config += "DAVLockDB " + root + "/lock/DAVLock\n";
  config += "LogFormat \"%m %U %>s %{X-Write-Token}i %{begin:usec}t %{remote}p %k\" dav\n";
  config += "CustomLog " + root + "/access.log dav\n";
  config += "Alias /dav " + root + "/data\n";
  config += "<Directory " + root + "/data>\n  Dav On\n  Require all granted\n</Directory>\n";
  return config + extra;
}

}  // namespace

bool ApacheAvailable() {
  return access(kApache, X_OK) == 0 &&
         std::filesystem::exists(std::string(kModules) + "/mod_dav_fs.so");
}

std::unique_ptr<ApacheDav> ApacheDav::Start(std::string* error, const std::string& extra_config) {
  std::unique_ptr<ApacheDav> apache(new ApacheDav());
  const std::string root = apache->dir_.path();
  // www-data must reach the data and lock directories inside the (0700) temp dir.
  std::filesystem::permissions(root, std::filesystem::perms::owner_all |
                                         std::filesystem::perms::group_exec |
                                         std::filesystem::perms::others_exec);
  for (const char* sub : {"data", "lock"}) {
    std::filesystem::create_directory(root + "/" + sub);
    if (!GiveToWwwData(root + "/" + sub)) {
      *error = "cannot give " + root + "/" + sub + " to www-data";
      return nullptr;
    }
  }
  apache->data_dir_ = root + "/data";
  apache->access_log_ = root + "/access.log";
  apache->error_log_ = root + "/error.log";
  for (int attempt = 0; attempt < 3; ++attempt) {
    const std::uint16_t port = integration::FreeLoopbackPort();
    { std::ofstream(root + "/httpd.conf") << Config(root, port, extra_config); }
    apache->process_ =
        integration::Process::Start({kApache, "-f", root + "/httpd.conf", "-DFOREGROUND"}, error);
    if (!apache->process_) return nullptr;
    // Ready in about 0.05 s; bounded at 10 s.
    for (int i = 0; i < 1000; ++i) {
      if (integration::LoopbackPortAccepts(port)) {
        apache->port_ = port;
        return apache;
      }
      if (apache->process_->Wait(std::chrono::milliseconds(10))) break;
    }
    apache->process_->Stop(std::chrono::seconds(5));
  }
  *error = "apache2 did not come up: " + apache->ErrorLog();
  return nullptr;
}

ApacheDav::~ApacheDav() {
  if (process_) process_->Stop(std::chrono::seconds(10));
}

std::string ApacheDav::ErrorLog() const { return integration::ReadWholeFile(error_log_); }

}  // namespace fencegate::webdav_test
