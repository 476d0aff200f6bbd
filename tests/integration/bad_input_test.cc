// Bad input through the real binary: each case gets a clear refusal, and nothing is applied.
// The table these rows come from is docs/BAD_INPUT.md.
#include <atomic>
#include <chrono>
#include <filesystem>
#include <string>
#include <thread>

#include <gtest/gtest.h>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read_until.hpp>
#include <boost/asio/streambuf.hpp>
#include <boost/asio/write.hpp>

#include "tests/support/admin_client.h"
#include "tests/support/gateway_config.h"
#include "tests/support/gateway_instance.h"
#include "tests/support/http_client.h"
#include "tests/support/http_gateway_fixture.h"
#include "tests/support/temp_dir.h"

namespace fencegate::integration {
namespace {

namespace fs = std::filesystem;

// --- Paths that try to leave the filesystem backend's root -------------------------------------

class PathEscapeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string error;
    gateway_ = GatewayInstance::Start(std::string(FENCEGATE_SOURCE_DIR) + "/config/fencegate.yaml",
                                      dir_.Join("data"), &error);
    ASSERT_NE(gateway_, nullptr) << error;
    fs::create_directories(dir_.Join("outside"));
    fs::create_directory_symlink(dir_.Join("outside"), dir_.Join("data/files/link"));
  }

  unsigned PutStatus(const std::string& target) {
    std::optional<Response> response =
        Fetch(gateway_->traffic_port(),
              MakeRequest(http::verb::put, target, {{"Fencing-Token", "1"}}, "escaped"));
    return response ? response->result_int() : 0;
  }

  // Every regular file below `dir`.
  std::vector<std::string> FilesUnder(const std::string& dir) {
    std::vector<std::string> files;
    for (const auto& entry : fs::recursive_directory_iterator(dir)) {
      if (entry.is_regular_file()) files.push_back(entry.path().string());
    }
    return files;
  }

  TempDir dir_;
  std::unique_ptr<GatewayInstance> gateway_;
};

TEST_F(PathEscapeTest, TraversalIsRefusedAndNothingIsWrittenOutsideTheRoot) {
  const struct {
    const char* target;
    unsigned status;
  } cases[] = {
      // Refused by the gateway before routing, on every route (gateway/http/path_canonical.h).
      {"/files/../escaped", 400},
      {"/files/%2e%2e/escaped", 400},
      {"/files/%2E%2e/escaped", 400},
      {"/files/a/..%2f..%2fescaped", 400},
      {"/files/a%2fb", 400},
      {"/files/a%00b", 400},
      {"/files/a%zzb", 400},
      {"/files/a/..%2F..%2Fescaped", 400},
      {"/files/a%2Fb", 400},
      {"/files/a%5Cb", 400},
      {"/files/a%C0%AF..%C0%AFescaped", 400},  // overlong UTF-8 for '/'
      // Canonical paths the filesystem adapter refuses itself.
      {"/files/link/escaped", 403},
      {"/files/.fencegate-tmp-x", 403},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(PutStatus(c.target), c.status) << c.target;
  }
  EXPECT_TRUE(FilesUnder(dir_.Join("outside")).empty());
  EXPECT_FALSE(fs::exists(dir_.Join("escaped")));
  EXPECT_FALSE(fs::exists(dir_.Join("data/escaped")));
  // Nothing at all was written inside the root either (the symlink is not followed).
  EXPECT_TRUE(FilesUnder(dir_.Join("data/files")).empty());
}

// --- Slow and broken clients -------------------------------------------------------------------

class SlowClientTest : public HttpGatewayTest {
 protected:
  void CustomizeConfig(GatewayConfig* config) const override {
    (*config)["timeouts"]["header_read"] = "1s";
    (*config)["timeouts"]["body_read"] = "1s";
  }

  // Waits until the gateway reports the request over (no connection, nothing in flight) and
  // every connection it opened to the backend is closed: by then whatever it sent the backend
  // is in backend_.Requests().
  void WaitUntilTheBackendSawEverything() {
    ASSERT_TRUE(GatewayIdle(gateway_->admin_port()));
    ASSERT_TRUE(backend_.WaitForConnectionsClosed(std::chrono::seconds(10)));
  }
};

// Slowloris: a header trickled in slower than header_read allows is cut off, and the gateway
// keeps serving everyone else meanwhile.
TEST_F(SlowClientTest, TrickledHeaderIsCutOffAtTheHeaderDeadline) {
  HttpConnection slow(std::chrono::seconds(5));
  ASSERT_TRUE(slow.Connect(gateway_->traffic_port())) << slow.error();
  const auto started = std::chrono::steady_clock::now();
  const std::string header = "GET /kv/a/x HTTP/1.1\r\nHost: t\r\nX-Slow: ";
  bool cut_off = false;
  for (int i = 0; i < 40 && !cut_off; ++i) {  // at most ~4 s of trickling
    cut_off = !slow.WriteRaw(i < static_cast<int>(header.size()) ? header.substr(i, 1) : "x");
    // The trickle is the subject: one byte per 100 ms, slower than header_read allows.
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    if (i == 3) {
      EXPECT_EQ(Send(MakeRequest(http::verb::get, "/kv/b/x")).result_int(), 200);
    }
  }
  if (!cut_off) slow.ReadUntilClose();
  const auto elapsed = std::chrono::steady_clock::now() - started;
  EXPECT_LT(elapsed, std::chrono::seconds(4)) << "the trickling client was never cut off";
  ASSERT_EQ(backend_.Requests().size(), 1u);
  EXPECT_EQ(backend_.Requests()[0].target, "/kv/b/x");
}

// A body that stops arriving is cut off after body_read (an idle timeout), and the write is
// never completed at the backend.
TEST_F(SlowClientTest, StalledBodyIsCutOffAfterTheBodyReadTimeout) {
  HttpConnection stalled(std::chrono::seconds(5));
  ASSERT_TRUE(stalled.Connect(gateway_->traffic_port())) << stalled.error();
  const auto started = std::chrono::steady_clock::now();
  ASSERT_TRUE(stalled.WriteRaw(
      "PUT /kv/d/x HTTP/1.1\r\nHost: t\r\nFencing-Token: 1\r\nContent-Length: 10\r\n\r\nabc"));
  stalled.ReadUntilClose();
  const auto elapsed = std::chrono::steady_clock::now() - started;
  EXPECT_GE(elapsed, std::chrono::milliseconds(900));
  EXPECT_LT(elapsed, std::chrono::seconds(4)) << "the stalled body was never cut off";
  WaitUntilTheBackendSawEverything();
  for (const RecordedRequest& seen : backend_.Requests()) {
    EXPECT_EQ(seen.completion, 0u) << "a request with a stalled body completed at the backend";
  }
}

// body_read bounds each pause, not the whole body: a body trickled in for longer than that,
// with shorter pauses, goes through.
TEST_F(SlowClientTest, TrickledBodyWithShortPausesGoesThrough) {
  HttpConnection slow(std::chrono::seconds(5));
  ASSERT_TRUE(slow.Connect(gateway_->traffic_port())) << slow.error();
  const std::string body = "trickled";
  ASSERT_TRUE(
      slow.WriteRaw("PUT /kv/e/x HTTP/1.1\r\nHost: t\r\nFencing-Token: 1\r\n"
                    "Content-Length: " +
                    std::to_string(body.size()) + "\r\n\r\n"));
  // The pauses are the subject: each shorter than body_read, all of them longer.
  for (const char byte : body) {  // ~2.4 s in all, 300 ms pauses
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    ASSERT_TRUE(slow.WriteRaw(std::string(1, byte))) << slow.error();
  }
  std::optional<Response> response = slow.ReadResponse();
  ASSERT_TRUE(response.has_value()) << slow.error();
  EXPECT_LT(response->result_int(), 300u) << response->body();
  ASSERT_EQ(backend_.Requests().size(), 1u);
  EXPECT_EQ(backend_.Requests()[0].body_prefix, body);
}

// A chunk size that overflows is a framing error: the write never completes at the backend.
TEST_F(SlowClientTest, OverflowingChunkSizeIsNeverApplied) {
  HttpConnection connection;
  ASSERT_TRUE(connection.Connect(gateway_->traffic_port())) << connection.error();
  ASSERT_TRUE(connection.WriteRaw(
      "PUT /kv/c/x HTTP/1.1\r\nHost: t\r\nFencing-Token: 1\r\nTransfer-Encoding: chunked\r\n\r\n"
      "fffffffffffffffffffff\r\nxx\r\n0\r\n\r\n"));
  std::optional<Response> response = connection.ReadResponse();
  if (response) {
    EXPECT_EQ(response->result_int(), 400) << response->body();
  }
  WaitUntilTheBackendSawEverything();
  for (const RecordedRequest& seen : backend_.Requests()) {
    EXPECT_EQ(seen.completion, 0u) << "a request with a broken body completed at the backend";
  }
}

// --- Broken backends ---------------------------------------------------------------------------

// A backend that answers every request with bytes that are not HTTP.
class GarbageBackend {
 public:
  GarbageBackend() : acceptor_(io_, {boost::asio::ip::make_address("127.0.0.1"), 0}) {
    thread_ = std::thread([this] {
      for (int served = 0; served < 8; ++served) {
        boost::system::error_code ec;
        boost::asio::ip::tcp::socket socket(io_);
        acceptor_.accept(socket, ec);
        if (ec || stopping_) return;
        boost::asio::streambuf request;
        boost::asio::read_until(socket, request, "\r\n\r\n", ec);
        boost::asio::write(socket, boost::asio::buffer(std::string("HTTP/1.1 2x0 what\r\n\r\n")),
                           ec);
      }
    });
  }
  ~GarbageBackend() {
    // A blocking accept() is not woken by close() from another thread: connect to wake it.
    stopping_ = true;
    boost::system::error_code ec;
    boost::asio::ip::tcp::socket wake(io_);
    wake.connect(acceptor_.local_endpoint(), ec);
    thread_.join();
  }
  std::uint16_t port() const { return acceptor_.local_endpoint().port(); }

 private:
  boost::asio::io_context io_;
  boost::asio::ip::tcp::acceptor acceptor_;
  std::atomic<bool> stopping_{false};
  std::thread thread_;
};

TEST(BrokenBackendTest, MalformedBackendResponseIs502Problem) {
  GarbageBackend backend;
  TempDir dir;
  std::string error;
  auto gateway = GatewayInstance::Start(
      dir.WriteFile("fencegate.yaml", GatewayConfig::HttpBackend(backend.port()).Yaml()),
      dir.Join("data"), &error);
  ASSERT_NE(gateway, nullptr) << error;
  std::optional<Response> response =
      Fetch(gateway->traffic_port(), MakeRequest(http::verb::get, "/kv/a/x"), &error);
  ASSERT_TRUE(response.has_value()) << error;
  EXPECT_EQ(response->result_int(), 502);
  EXPECT_EQ((*response)[http::field::content_type], "application/problem+json");
}

class SilentBackendTest : public HttpGatewayTest {
 protected:
  void CustomizeConfig(GatewayConfig* config) const override {
    config->Backend("api")["response_timeout"] = "300ms";
  }
};

TEST_F(SilentBackendTest, BackendThatNeverAnswersIs504Problem) {
  const auto started = std::chrono::steady_clock::now();
  Response response = Send(MakeRequest(http::verb::get, "/kv/a/x", {{"X-Test-Delay-Ms", "2000"}}));
  EXPECT_EQ(response.result_int(), 504);
  EXPECT_EQ(response[http::field::content_type], "application/problem+json");
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::milliseconds(1500));
}

}  // namespace
}  // namespace fencegate::integration
