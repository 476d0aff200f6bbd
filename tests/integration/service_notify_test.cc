// The systemd readiness protocol through the real binary (Type=notify of
// deploy/systemd/fencegate.service): READY=1 once it listens, STOPPING=1 when the drain starts.
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <chrono>
#include <string>

#include <gtest/gtest.h>

#include "tests/support/gateway_instance.h"
#include "tests/support/temp_dir.h"

namespace fencegate::integration {
namespace {

// systemd's side: a datagram socket named by NOTIFY_SOCKET in the service's environment.
class NotifySocket {
 public:
  explicit NotifySocket(const std::string& path) : path_(path) {
    fd_ = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    path.copy(address.sun_path, sizeof(address.sun_path) - 1);
    bound_ = fd_ >= 0 && path.size() < sizeof(address.sun_path) &&
             ::bind(fd_, reinterpret_cast<const sockaddr*>(&address), sizeof(address)) == 0;
  }
  ~NotifySocket() {
    if (fd_ >= 0) ::close(fd_);
  }
  bool bound() const { return bound_; }

  // The next notification, waiting up to `timeout` for the gateway to send it; "" if none came.
  std::string Next(std::chrono::milliseconds timeout) {
    pollfd readable{fd_, POLLIN, 0};
    if (::poll(&readable, 1, static_cast<int>(timeout.count())) != 1) return "";
    char buffer[512];
    const ssize_t n = ::recv(fd_, buffer, sizeof(buffer), 0);
    return n > 0 ? std::string(buffer, static_cast<std::size_t>(n)) : "";
  }

 private:
  std::string path_;
  int fd_ = -1;
  bool bound_ = false;
};

TEST(ServiceNotifyTest, ReadyOnceListeningStoppingWhenTheDrainStarts) {
  TempDir dir;
  NotifySocket manager(dir.Join("notify"));
  ASSERT_TRUE(manager.bound());
  // The child inherits the environment it is started with; the test's own stays clean.
  ASSERT_EQ(::setenv("NOTIFY_SOCKET", dir.Join("notify").c_str(), 1), 0);
  std::string error;
  std::unique_ptr<GatewayInstance> gateway = GatewayInstance::Start(
      std::string(FENCEGATE_SOURCE_DIR) + "/config/fencegate.yaml", dir.Join("data"), &error);
  ::unsetenv("NOTIFY_SOCKET");
  ASSERT_NE(gateway, nullptr) << error;

  EXPECT_EQ(manager.Next(std::chrono::seconds(10)), "READY=1") << gateway->process().Stderr();
  gateway->process().Signal(SIGTERM);
  EXPECT_EQ(manager.Next(std::chrono::seconds(10)), "STOPPING=1");
  EXPECT_EQ(gateway->process().Wait(std::chrono::seconds(20)), 0) << gateway->process().Stderr();
}

}  // namespace
}  // namespace fencegate::integration
