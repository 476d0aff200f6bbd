#include "gateway/server/service_notify.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <string>

namespace fencegate::gateway {
namespace {

// What systemd does for Type=notify: a datagram socket named by NOTIFY_SOCKET.
class ServiceNotifyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char dir[] = "/tmp/fg-notify-XXXXXX";
    ASSERT_NE(::mkdtemp(dir), nullptr);
    dir_ = dir;
    path_ = dir_ / "notify";
    socket_ = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    ASSERT_GE(socket_, 0);
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    ASSERT_LT(path_.string().size(), sizeof(address.sun_path));
    path_.string().copy(address.sun_path, sizeof(address.sun_path) - 1);
    ASSERT_EQ(::bind(socket_, reinterpret_cast<const sockaddr*>(&address), sizeof(address)), 0);
  }
  void TearDown() override {
    ::unsetenv("NOTIFY_SOCKET");
    if (socket_ >= 0) ::close(socket_);
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }

  // The next datagram, or "" when none is waiting (never blocks: the notification is sent
  // before the call returns).
  std::string Received() {
    char buffer[512];
    const ssize_t n = ::recv(socket_, buffer, sizeof(buffer), MSG_DONTWAIT);
    return n > 0 ? std::string(buffer, static_cast<std::size_t>(n)) : "";
  }

  std::filesystem::path dir_;
  std::filesystem::path path_;
  int socket_ = -1;
};

TEST_F(ServiceNotifyTest, SendsEachStateToTheManager) {
  ASSERT_EQ(::setenv("NOTIFY_SOCKET", path_.c_str(), 1), 0);
  NotifyReady();
  EXPECT_EQ(Received(), "READY=1");
  NotifyReloading();
  const std::string reloading = Received();
  EXPECT_EQ(reloading.rfind("RELOADING=1\nMONOTONIC_USEC=", 0), 0u) << reloading;
  EXPECT_GT(std::stoll(reloading.substr(reloading.find('=', 12) + 1)), 0);
  NotifyStopping();
  EXPECT_EQ(Received(), "STOPPING=1");
}

TEST_F(ServiceNotifyTest, WithoutNotifySocketNothingIsSent) {
  ::unsetenv("NOTIFY_SOCKET");
  NotifyReady();
  NotifyReloading();
  NotifyStopping();
  EXPECT_EQ(Received(), "");
  // The socket itself works: the calls above had nowhere to send.
  ASSERT_EQ(::setenv("NOTIFY_SOCKET", path_.c_str(), 1), 0);
  NotifyReady();
  EXPECT_EQ(Received(), "READY=1");
}

}  // namespace
}  // namespace fencegate::gateway
