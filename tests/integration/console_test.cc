// The browser console's server side against the real binary: the files and their headers, the
// login cookie, the CSRF token on cookie POSTs, and GET /admin/events read as a stream.
#include <sys/socket.h>
#include <sys/time.h>

#include <string>

#include <gtest/gtest.h>
#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>
#include <boost/json.hpp>

#include "base/encoding/sha256.h"
#include "tests/support/http_gateway_fixture.h"

namespace fencegate::integration {
namespace {

namespace net = boost::asio;
constexpr const char* kConsoleAdminKey = "console-admin-7d1f3a9e";

// An open GET /admin/events: the raw bytes as they arrive (chunk framing included, which the
// checks below do not mind: every event is within one chunk).
class EventStreamReader {
 public:
  EventStreamReader(std::uint16_t port, const std::string& fields) : socket_(io_) {
    socket_.connect({net::ip::make_address("127.0.0.1"), port});
    // A bound on each read, so a stream that never delivers fails the test instead of hanging.
    timeval timeout{10, 0};
    setsockopt(socket_.native_handle(), SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
    net::write(socket_,
               net::buffer("GET /admin/events HTTP/1.1\r\nHost: admin\r\n" + fields + "\r\n"));
  }

  // Reads until `text` has arrived; false when the stream ended or stalled first.
  bool ReadUntil(const std::string& text) {
    while (received_.find(text) == std::string::npos) {
      char chunk[4096];
      boost::system::error_code ec;
      const std::size_t n = socket_.read_some(net::buffer(chunk), ec);
      if (ec) return false;
      received_.append(chunk, n);
    }
    return true;
  }
  const std::string& received() const { return received_; }

 private:
  net::io_context io_;
  net::ip::tcp::socket socket_;
  std::string received_;
};

class ConsoleTest : public HttpGatewayTest {
 protected:
  void CustomizeConfig(GatewayConfig* config) const override {
    YAML::Node admin;
    admin["name"] = "ops";
    admin["api_key_sha256"] = Sequence({encoding::Sha256Hex(kConsoleAdminKey)});
    (*config)["admin"]["principals"].push_back(admin);
    (*config)["locks"]["enabled"] = true;
  }

  Response AdminCall(Request request) {
    std::string error;
    std::optional<Response> response = Fetch(gateway_->admin_port(), std::move(request), &error);
    if (!response) {
      ADD_FAILURE() << error;
      return {};
    }
    return *response;
  }

  // Logs in through the form; the cookie's name=value.
  std::string LogIn() {
    Request login = MakeRequest(http::verb::post, "/ui/login",
                                {{"Content-Type", "application/x-www-form-urlencoded"}},
                                std::string("key=") + kConsoleAdminKey);
    const Response answer = AdminCall(std::move(login));
    EXPECT_EQ(answer.result_int(), 303);
    EXPECT_EQ(answer[http::field::location], "/ui/");
    const std::string cookie(answer[http::field::set_cookie]);
    EXPECT_NE(cookie.find("HttpOnly"), std::string::npos) << cookie;
    EXPECT_NE(cookie.find("SameSite=Strict"), std::string::npos) << cookie;
    EXPECT_NE(cookie.find("Max-Age="), std::string::npos) << cookie;
    EXPECT_EQ(cookie.find("Secure"), std::string::npos) << "a plain listener: " << cookie;
    return cookie.substr(0, cookie.find(';'));
  }
};

TEST_F(ConsoleTest, TheConsoleIsServedFromTheBinaryWithAStrictPolicy) {
  Response root = AdminCall(MakeRequest(http::verb::get, "/"));
  EXPECT_EQ(root.result_int(), 302);
  EXPECT_EQ(root[http::field::location], "/ui/");

  Response bare = AdminCall(MakeRequest(http::verb::get, "/ui"));
  EXPECT_EQ(bare.result_int(), 302);
  EXPECT_EQ(bare[http::field::location], "/ui/");

  Response page = AdminCall(MakeRequest(http::verb::get, "/ui/"));
  ASSERT_EQ(page.result_int(), 200) << "the page loads without a login";
  EXPECT_EQ(page[http::field::content_type], "text/html; charset=utf-8");
  EXPECT_NE(page.body().find("/ui/console.js"), std::string::npos);
  const std::string policy(page["Content-Security-Policy"]);
  EXPECT_NE(policy.find("default-src 'self'"), std::string::npos) << policy;
  EXPECT_NE(policy.find("frame-ancestors 'none'"), std::string::npos) << policy;
  EXPECT_EQ(policy.find("unsafe-inline"), std::string::npos) << policy;
  EXPECT_EQ(page["X-Content-Type-Options"], "nosniff");

  Response chart = AdminCall(MakeRequest(http::verb::get, "/ui/chart.min.js"));
  EXPECT_EQ(chart.result_int(), 200);
  EXPECT_EQ(chart[http::field::content_type], "text/javascript; charset=utf-8");
  EXPECT_NE(chart.body().find("Chart.js"), std::string::npos);
  const std::string etag(chart[http::field::etag]);
  ASSERT_FALSE(etag.empty());
  Response again =
      AdminCall(MakeRequest(http::verb::get, "/ui/chart.min.js", {{"If-None-Match", etag}}));
  EXPECT_EQ(again.result_int(), 304);
  EXPECT_TRUE(again.body().empty());

  EXPECT_EQ(AdminCall(MakeRequest(http::verb::get, "/ui/nothing.js")).result_int(), 404);
  EXPECT_EQ(AdminCall(MakeRequest(http::verb::post, "/ui/console.js")).result_int(), 405);
}

TEST_F(ConsoleTest, ALoginCookieOpensTheAdminApiAndItsPostsNeedTheCsrfToken) {
  Response logged_out = AdminCall(MakeRequest(http::verb::get, "/ui/session"));
  ASSERT_EQ(logged_out.result_int(), 200);
  EXPECT_EQ(boost::json::parse(logged_out.body()).at("auth"), "none");
  EXPECT_EQ(AdminCall(MakeRequest(http::verb::get, "/admin/locks")).result_int(), 401);

  Response wrong =
      AdminCall(MakeRequest(http::verb::post, "/ui/login",
                            {{"Content-Type", "application/x-www-form-urlencoded"}}, "key=guess"));
  EXPECT_EQ(wrong.result_int(), 303);
  EXPECT_EQ(wrong[http::field::location], "/ui/?login=failed");
  EXPECT_EQ(wrong.count(http::field::set_cookie), 0u);

  const std::string cookie = LogIn();
  Response session = AdminCall(MakeRequest(http::verb::get, "/ui/session", {{"Cookie", cookie}}));
  ASSERT_EQ(session.result_int(), 200);
  const boost::json::value who = boost::json::parse(session.body());
  EXPECT_EQ(who.at("principal"), "ops");
  EXPECT_EQ(who.at("auth"), "cookie");
  const std::string csrf(who.at("csrf_token").as_string());
  ASSERT_EQ(csrf.size(), 32u);

  EXPECT_EQ(
      AdminCall(MakeRequest(http::verb::get, "/admin/locks", {{"Cookie", cookie}})).result_int(),
      200);
  const std::string release_body = R"({"reason":"console test"})";
  Response no_token = AdminCall(MakeRequest(http::verb::post, "/admin/locks/job/force-release",
                                            {{"Cookie", cookie}}, release_body));
  EXPECT_EQ(no_token.result_int(), 403);
  Response bad_token = AdminCall(
      MakeRequest(http::verb::post, "/admin/locks/job/force-release",
                  {{"Cookie", cookie}, {"X-CSRF-Token", std::string(32, 'a')}}, release_body));
  EXPECT_EQ(bad_token.result_int(), 403);
  Response with_token =
      AdminCall(MakeRequest(http::verb::post, "/admin/locks/job/force-release",
                            {{"Cookie", cookie}, {"X-CSRF-Token", csrf}}, release_body));
  EXPECT_EQ(with_token.result_int(), 404)
      << "past the CSRF check: the lock is simply not held " << with_token.body();
  Response bearer = AdminCall(
      MakeRequest(http::verb::post, "/admin/locks/job/force-release",
                  {{"Authorization", std::string("Bearer ") + kConsoleAdminKey}}, release_body));
  EXPECT_EQ(bearer.result_int(), 404) << "a bearer key needs no CSRF token";

  Response logout = AdminCall(
      MakeRequest(http::verb::post, "/ui/logout", {{"Cookie", cookie}, {"X-CSRF-Token", csrf}}));
  EXPECT_EQ(logout.result_int(), 204);
  EXPECT_NE(std::string(logout[http::field::set_cookie]).find("Max-Age=0"), std::string::npos);
  EXPECT_EQ(
      AdminCall(MakeRequest(http::verb::get, "/admin/locks", {{"Cookie", cookie}})).result_int(),
      401);
}

TEST_F(ConsoleTest, TheEventStreamDeliversRejectionsAndLockGrantsAndReplaysAfterLastEventId) {
  EXPECT_EQ(AdminCall(MakeRequest(http::verb::get, "/admin/events")).result_int(), 401);
  const std::string cookie = LogIn();
  EventStreamReader stream(gateway_->admin_port(), "Cookie: " + cookie + "\r\n");
  ASSERT_TRUE(stream.ReadUntil("\r\n\r\n"));
  EXPECT_TRUE(stream.received().starts_with("HTTP/1.1 200")) << stream.received();
  EXPECT_NE(stream.received().find("Content-Type: text/event-stream"), std::string::npos);

  ASSERT_EQ(Put("/kv/zombie/x", "5").result_int(), 200);
  ASSERT_EQ(Put("/kv/zombie/x", "3").result_int(), 409);
  ASSERT_TRUE(stream.ReadUntil("\"presented_token\":3")) << stream.received();
  EXPECT_NE(stream.received().find("id: 1\nevent: rejection\ndata: {"), std::string::npos);
  EXPECT_NE(stream.received().find("\"reason\":\"stale_token\""), std::string::npos);
  EXPECT_NE(stream.received().find("\"fence_key\":\"kv:zombie\""), std::string::npos);
  EXPECT_NE(stream.received().find("\"highest_token\":5"), std::string::npos);
  EXPECT_NE(stream.received().find("\"client\":\"127.0.0.1\""), std::string::npos);

  const Response grant = Send(MakeRequest(http::verb::post, "/locks/job", {}, "{}"));
  ASSERT_EQ(grant.result_int(), 200) << grant.body();
  ASSERT_TRUE(stream.ReadUntil("event: lock_grant")) << stream.received();
  ASSERT_TRUE(stream.ReadUntil("\"lock\":\"job\"")) << stream.received();
  EXPECT_EQ(stream.received().find("owner_token"), std::string::npos);

  // A reconnect that saw event 1 gets event 2 again, and not event 1.
  EventStreamReader replay(
      gateway_->admin_port(),
      "Authorization: Bearer " + std::string(kConsoleAdminKey) + "\r\nLast-Event-ID: 1\r\n");
  ASSERT_TRUE(replay.ReadUntil("id: 2\nevent: lock_grant")) << replay.received();
  EXPECT_EQ(replay.received().find("id: 1\n"), std::string::npos);
}

}  // namespace
}  // namespace fencegate::integration
