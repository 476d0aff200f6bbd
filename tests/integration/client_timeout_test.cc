// The client connection's idle timeout through the real binary. Header reads and response
// writes share one lazily re-armed deadline timer per connection
// (gateway/session/client_deadline.h): these cases check that a keep-alive connection is still
// closed after timeouts.idle whether the pending wait was set by a longer or a shorter timeout, and
// that the deadline moves on with each request rather than staying at the first one's.
#include <chrono>
#include <string>
#include <thread>

#include <gtest/gtest.h>
#include <boost/asio/error.hpp>
#include <boost/system/error_code.hpp>

#include "tests/support/http_client.h"
#include "tests/support/http_gateway_fixture.h"

namespace fencegate::integration {
namespace {

// What ReadUntilClose leaves in error() when the gateway closed the connection (not the
// client's own generous read deadline).
std::string ClosedByPeer() { return boost::system::error_code(boost::asio::error::eof).message(); }

// Bounds the wait for the gateway to close: far above every timeout configured below.
constexpr auto kClientPatience = std::chrono::seconds(60);

// timeouts.idle shorter than response_write: after a response the pending wait is the
// write's, later than the next read's deadline, so the read re-arms it. response_write is far
// beyond the client's patience: a close that waited for it would not come in time.
class ShortIdleTest : public HttpGatewayTest {
 protected:
  void CustomizeConfig(GatewayConfig* config) const override {
    (*config)["timeouts"]["idle"] = "1s";
    (*config)["timeouts"]["response_write"] = "10m";
  }
};

TEST_F(ShortIdleTest, SilentNewConnectionIsClosedAfterTheIdleTimeout) {
  HttpConnection silent(kClientPatience);
  ASSERT_TRUE(silent.Connect(gateway_->traffic_port())) << silent.error();
  EXPECT_EQ(silent.ReadUntilClose(), "");
  EXPECT_EQ(silent.error(), ClosedByPeer());
}

TEST_F(ShortIdleTest, KeepAliveConnectionIsClosedAfterTheIdleTimeoutFollowingAResponse) {
  HttpConnection connection(kClientPatience);
  ASSERT_TRUE(connection.Connect(gateway_->traffic_port())) << connection.error();
  for (int i = 0; i < 3; ++i) {
    const auto response = connection.RoundTrip(MakeRequest(http::verb::get, "/kv/a/x"));
    ASSERT_TRUE(response) << connection.error();
    EXPECT_EQ(response->result_int(), 200u);
    EXPECT_TRUE(response->keep_alive());
  }
  EXPECT_EQ(connection.ReadUntilClose(), "");
  EXPECT_EQ(connection.error(), ClosedByPeer());
  EXPECT_EQ(backend_.Requests().size(), 3u);
}

// timeouts.idle longer than response_write: the pending wait (the write's) expires before the
// idle read's deadline and must wait on until that deadline, then close the connection.
class LongIdleTest : public HttpGatewayTest {
 protected:
  void CustomizeConfig(GatewayConfig* config) const override {
    (*config)["timeouts"]["idle"] = "3s";
    (*config)["timeouts"]["response_write"] = "1s";
  }
};

TEST_F(LongIdleTest, IdleReadOutlivesAnEarlierWriteDeadlineAndIsThenClosed) {
  HttpConnection connection(kClientPatience);
  ASSERT_TRUE(connection.Connect(gateway_->traffic_port())) << connection.error();
  const auto response = connection.RoundTrip(MakeRequest(http::verb::get, "/kv/a/x"));
  ASSERT_TRUE(response) << connection.error();
  EXPECT_EQ(response->result_int(), 200u);
  EXPECT_EQ(connection.ReadUntilClose(), "");
  EXPECT_EQ(connection.error(), ClosedByPeer());
}

// Requests spaced well inside timeouts.idle keep one connection open for longer than
// timeouts.idle in total: each request's read gets its own deadline.
TEST_F(LongIdleTest, EachRequestMovesTheIdleDeadline) {
  HttpConnection connection(kClientPatience);
  ASSERT_TRUE(connection.Connect(gateway_->traffic_port())) << connection.error();
  constexpr int kRequests = 16;  // 16 x 250 ms: longer than the 3 s idle timeout
  for (int i = 0; i < kRequests; ++i) {
    const auto response = connection.RoundTrip(MakeRequest(http::verb::get, "/kv/a/x"));
    ASSERT_TRUE(response) << "request " << i << ": " << connection.error();
    EXPECT_EQ(response->result_int(), 200u);
    // The spacing is the subject: each pause well inside the idle timeout, all of them past it.
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
  }
  EXPECT_EQ(backend_.Requests().size(), static_cast<std::size_t>(kRequests));
}

}  // namespace
}  // namespace fencegate::integration
