#include "gateway/session/lock_exchange.h"

#include <algorithm>
#include <cstring>
#include <deque>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/json.hpp>

#include "lockstore/locks/lock_memory_persistence.h"
#include "lockstore/locks/lock_table.h"
#include "tests/lockstore/lock_test_support.h"

#include <gtest/gtest.h>

namespace fencegate::gateway {
namespace {

namespace net = boost::asio;
namespace http = boost::beast::http;
namespace json = boost::json;
using boost::system::error_code;

// The client side of the connection as the exchange sees it: hands out a scripted body one
// piece per read (cut to the reader's buffer), each read finishing on the io_context as a
// socket read would, never inside the call. A read can be scripted to fail instead.
class ScriptedBody final : public adapters::Downstream {
 public:
  explicit ScriptedBody(net::io_context& ioc) : ioc_(ioc) {}

  // `fail_read`: the read (counted from 1) that fails as a client gone mid-body does.
  void Script(std::vector<std::string> pieces, std::size_t fail_read = 0) {
    pieces_.assign(pieces.begin(), pieces.end());
    fail_read_ = fail_read;
    reads_ = 0;
  }
  std::size_t reads() const { return reads_; }
  std::size_t bytes_left() const {
    std::size_t left = 0;
    for (const std::string& piece : pieces_) left += piece.size();
    return left;
  }

  bool body_done() const override { return pieces_.empty(); }
  void AsyncReadBody(net::mutable_buffer buffer, ReadHandler handler) override {
    // A read for nothing would never end the body: fail it rather than loop.
    const bool fail = ++reads_ == fail_read_ || buffer.size() == 0;
    EXPECT_NE(buffer.size(), 0u) << "a body read into an empty buffer";
    net::post(ioc_, [this, buffer, fail, handler = std::move(handler)] {
      if (fail) {
        handler(http::error::partial_message, 0, false);
        return;
      }
      std::size_t bytes = 0;
      if (!pieces_.empty()) {
        std::string& piece = pieces_.front();
        bytes = std::min(buffer.size(), piece.size());
        std::memcpy(buffer.data(), piece.data(), bytes);
        piece.erase(0, bytes);
        if (piece.empty()) pieces_.pop_front();
      }
      handler(error_code{}, bytes, pieces_.empty());
    });
  }
  // The exchange never writes: the connection does.
  void AsyncWriteResponse(adapters::ResponseHeader&&, net::const_buffer, bool,
                          WriteHandler) override {
    ADD_FAILURE() << "the exchange wrote a response";
  }
  void AsyncWriteBody(net::const_buffer, bool, WriteHandler) override {
    ADD_FAILURE() << "the exchange wrote a response body";
  }

 private:
  net::io_context& ioc_;
  std::deque<std::string> pieces_;
  std::size_t fail_read_ = 0;
  std::size_t reads_ = 0;
};

// Records how the exchange ended.
class RecordingClient final : public LockExchange::Client {
 public:
  void OnLockQueued() override { ++queued; }
  void OnLockAnswer(LockHttpResponse response) override {
    ++answers;
    answer = std::move(response);
  }
  void OnLockBodyRefused(Refusal refusal, std::string_view detail) override {
    refused = refusal;
    refused_detail = detail;
  }
  void OnLockBodyLost() override { lost = true; }

  int queued = 0;
  int answers = 0;
  std::optional<LockHttpResponse> answer;
  std::optional<Refusal> refused;
  std::string refused_detail;
  bool lost = false;
};

// One client connection's lock requests, one after another, as a session makes them.
struct LockConnection {
  explicit LockConnection(net::io_context& context) : ioc(context), body(context) {}

  // Begins the request and runs its body reads until the exchange stops reading.
  void Send(LockApi& api, http::verb method, std::string target, std::vector<std::string> pieces,
            std::optional<std::uint64_t> content_length = std::nullopt, std::size_t fail_read = 0) {
    client = RecordingClient{};
    path = std::move(target);
    body.Script(std::move(pieces), fail_read);
    exchange.Begin(api, {.method = method,
                         .path = path,
                         .request_id = request_id,
                         .content_length = content_length});
    ioc.run();
    ioc.restart();
  }
  // The header the connection writes the answer with.
  adapters::ResponseHeader Finish() {
    adapters::ResponseHeader header;
    exchange.Finish(*client.answer, header);
    return header;
  }
  json::value AnswerJson() const { return json::parse(client.answer->body); }

  net::io_context& ioc;
  std::string path;
  std::string request_id = "req-1";
  RecordingClient client;
  ScriptedBody body;
  LockExchange exchange{client, body};
};

class LockExchangeTest : public ::testing::Test {
 protected:
  LockExchangeTest() : table_(persistence_, clock_, nullptr, nullptr, Options()) {
    EXPECT_TRUE(table_.Load().ok());
  }
  static lockstore::LockTableOptions Options() {
    lockstore::LockTableOptions options;
    options.now_unix_ms = [] { return std::int64_t{1'700'000'000'000}; };
    return options;
  }
  // Acquires `lock` for a test's setup through its own connection; returns the owner token.
  std::string Hold(std::string_view lock, std::string_view body = "{}") {
    LockConnection holder(ioc_);
    holder.Send(api_, http::verb::post, "/locks/" + std::string(lock), {std::string(body)});
    EXPECT_EQ(holder.client.answers, 1);
    if (!holder.client.answer || holder.client.answer->status != 200) return {};
    return std::string(holder.AnswerJson().at("owner_token").as_string());
  }
  std::optional<lockstore::LockView> View(std::string_view lock) { return table_.Inspect(lock); }

  net::io_context ioc_;
  lockstore::MemoryLockPersistence persistence_;
  lockstore::testing::ManualLockClock clock_;
  lockstore::LockTable table_;
  LocksConfig config_;
  LockApi api_{table_, config_, nullptr};
};

TEST_F(LockExchangeTest, AcquireReadsTheBodyInPiecesAndIsGrantedAFencingToken) {
  LockConnection connection(ioc_);
  connection.Send(api_, http::verb::post, "/locks/job", {"{\"ttl_", "ms\":5000}"});
  EXPECT_EQ(connection.body.reads(), 2u);
  ASSERT_EQ(connection.client.answers, 1);
  EXPECT_EQ(connection.client.queued, 0);
  EXPECT_FALSE(connection.exchange.queued());
  const json::value granted = connection.AnswerJson();
  EXPECT_EQ(granted.at("lock").as_string(), "job");
  EXPECT_EQ(granted.at("fencing_token").as_int64(), 1);
  EXPECT_EQ(granted.at("ttl_ms").as_int64(), 5000);
  EXPECT_FALSE(granted.at("owner_token").as_string().empty());

  const adapters::ResponseHeader header = connection.Finish();
  EXPECT_EQ(header.result_int(), 200u);
  EXPECT_EQ(header[http::field::content_type], "application/json");
  EXPECT_EQ(header[http::field::content_length],
            std::to_string(connection.client.answer->body.size()));
  EXPECT_EQ(header.count(http::field::retry_after), 0u);
  EXPECT_EQ(header.count(http::field::allow), 0u);

  const auto view = View("job");
  ASSERT_TRUE(view.has_value());
  EXPECT_TRUE(view->held);
  EXPECT_EQ(view->holder_token, 1u);
}

TEST_F(LockExchangeTest, HeldLockIsAnsweredWithRetryAfterInWholeSeconds) {
  ASSERT_FALSE(Hold("job", "{\"ttl_ms\":2500}").empty());
  LockConnection connection(ioc_);
  connection.Send(api_, http::verb::post, "/locks/job", {"{}"});
  ASSERT_EQ(connection.client.answers, 1);
  EXPECT_EQ(connection.client.answer->status, 409u);
  const adapters::ResponseHeader header = connection.Finish();
  EXPECT_EQ(header.result_int(), 409u);
  EXPECT_EQ(header[http::field::content_type], "application/problem+json");
  EXPECT_EQ(header[http::field::retry_after], "3");  // 2.5 s left, rounded up
}

TEST_F(LockExchangeTest, LongPollIsGrantedOnceTheHolderReleases) {
  const std::string owner = Hold("job");
  ASSERT_FALSE(owner.empty());

  LockConnection waiter(ioc_);
  waiter.Send(api_, http::verb::post, "/locks/job", {"{\"wait_ms\":60000}"});
  EXPECT_EQ(waiter.client.answers, 0);
  EXPECT_EQ(waiter.client.queued, 1);  // the connection is asked to watch its client
  EXPECT_TRUE(waiter.exchange.queued());
  LockConnection state(ioc_);
  state.Send(api_, http::verb::get, "/locks/job", {});
  EXPECT_EQ(state.body.reads(), 0u);  // no body to read
  ASSERT_EQ(state.client.answers, 1);
  EXPECT_EQ(state.AnswerJson().at("waiters").as_int64(), 1);

  LockConnection releaser(ioc_);
  releaser.Send(api_, http::verb::post, "/locks/job/release",
                {"{\"owner_token\":\"" + owner + "\"}"});
  ASSERT_EQ(releaser.client.answers, 1);
  EXPECT_TRUE(releaser.AnswerJson().at("released").as_bool());

  ASSERT_EQ(waiter.client.answers, 1);
  EXPECT_EQ(waiter.client.answer->status, 200u);
  EXPECT_EQ(waiter.AnswerJson().at("fencing_token").as_int64(), 2);
  EXPECT_EQ(waiter.Finish().result_int(), 200u);
  EXPECT_FALSE(waiter.exchange.queued());
  // The client leaving after its answer takes nothing back.
  waiter.exchange.ClientGone();
  const auto view = View("job");
  ASSERT_TRUE(view.has_value());
  EXPECT_TRUE(view->held);
  EXPECT_EQ(view->holder_token, 2u);
  EXPECT_EQ(view->waiters, 0u);
}

TEST_F(LockExchangeTest, ClientGoneWithdrawsTheLongPollAndTheLockGoesToNobody) {
  const std::string owner = Hold("job");
  ASSERT_FALSE(owner.empty());
  LockConnection waiter(ioc_);
  waiter.Send(api_, http::verb::post, "/locks/job", {"{\"wait_ms\":60000}"});
  ASSERT_TRUE(waiter.exchange.queued());
  ASSERT_EQ(View("job")->waiters, 1u);

  waiter.exchange.ClientGone();
  EXPECT_EQ(View("job")->waiters, 0u);
  ASSERT_EQ(waiter.client.answers, 1);
  EXPECT_EQ(waiter.client.answer->status, 503u);
  EXPECT_EQ(json::parse(waiter.client.answer->body).at("type").as_string(),
            "https://fencegate.dev/problems/lock-wait-cancelled");
  const adapters::ResponseHeader header = waiter.Finish();
  EXPECT_EQ(header.result_int(), 503u);
  EXPECT_EQ(header[http::field::retry_after], "1");
  EXPECT_FALSE(waiter.exchange.queued());

  LockConnection releaser(ioc_);
  releaser.Send(api_, http::verb::post, "/locks/job/release",
                {"{\"owner_token\":\"" + owner + "\"}"});
  ASSERT_EQ(releaser.client.answers, 1);
  const auto view = View("job");
  ASSERT_TRUE(view.has_value());
  EXPECT_FALSE(view->held);
  EXPECT_EQ(view->last_token, 1u);  // nobody was granted it
}

TEST_F(LockExchangeTest, ContentLengthOverTheLimitIsRefusedUnread) {
  LockConnection connection(ioc_);
  connection.Send(api_, http::verb::post, "/locks/job",
                  {std::string(LockExchange::kMaxBody + 1, ' ')}, LockExchange::kMaxBody + 1);
  ASSERT_TRUE(connection.client.refused.has_value());
  EXPECT_EQ(*connection.client.refused, Refusal::kBodyTooLarge);
  EXPECT_EQ(RefusalText(*connection.client.refused).status, 413u);
  EXPECT_EQ(connection.client.refused_detail, "a lock request body is at most 4096 bytes");
  EXPECT_EQ(connection.body.reads(), 0u);
  EXPECT_EQ(connection.client.answers, 0);
  EXPECT_FALSE(View("job").has_value());  // the lock service never heard of it

  // At the limit: read whole and handed over (blanks are an empty body).
  connection.Send(api_, http::verb::post, "/locks/job",
                  {std::string(3000, ' '), std::string(LockExchange::kMaxBody - 3000, ' ')},
                  LockExchange::kMaxBody);
  EXPECT_FALSE(connection.client.refused.has_value());
  ASSERT_EQ(connection.client.answers, 1);
  EXPECT_EQ(connection.client.answer->status, 200u);
}

TEST_F(LockExchangeTest, StreamedBodyOverTheLimitIsRefusedWithoutReadingTheRest) {
  LockConnection connection(ioc_);
  // 10000 bytes in pieces of 1000: four whole pieces and 97 bytes of the fifth are read.
  connection.Send(api_, http::verb::post, "/locks/job",
                  std::vector<std::string>(10, std::string(1000, ' ')));
  ASSERT_TRUE(connection.client.refused.has_value());
  EXPECT_EQ(*connection.client.refused, Refusal::kBodyTooLarge);
  EXPECT_EQ(RefusalText(*connection.client.refused).status, 413u);
  EXPECT_EQ(connection.body.reads(), 5u);
  EXPECT_EQ(connection.body.bytes_left(), 10000u - (LockExchange::kMaxBody + 1));
  EXPECT_EQ(connection.client.answers, 0);
  EXPECT_FALSE(View("job").has_value());

  // A whole body one byte over the limit is refused too, though nothing is left to read.
  connection.Send(api_, http::verb::post, "/locks/job",
                  {std::string(LockExchange::kMaxBody + 1, ' ')});
  ASSERT_TRUE(connection.client.refused.has_value());
  EXPECT_EQ(connection.body.bytes_left(), 0u);
  EXPECT_FALSE(View("job").has_value());

  // The same exchange serves the connection's next request from an empty body buffer.
  connection.Send(api_, http::verb::post, "/locks/job", {"{\"ttl_ms\":", "4000}"});
  EXPECT_FALSE(connection.client.refused.has_value());
  ASSERT_EQ(connection.client.answers, 1);
  EXPECT_EQ(connection.AnswerJson().at("ttl_ms").as_int64(), 4000);
}

TEST_F(LockExchangeTest, BodyReadErrorEndsWithoutAnAnswer) {
  LockConnection connection(ioc_);
  connection.Send(api_, http::verb::post, "/locks/job", {"{\"ttl_ms\":", "5000}"}, std::nullopt,
                  /*fail_read=*/2);
  EXPECT_TRUE(connection.client.lost);  // the connection closes
  EXPECT_EQ(connection.client.answers, 0);
  EXPECT_FALSE(connection.client.refused.has_value());
  EXPECT_FALSE(connection.exchange.queued());
  EXPECT_FALSE(View("job").has_value());
}

TEST_F(LockExchangeTest, MethodNotAllowedNamesWhatTheResourceAllows) {
  LockConnection connection(ioc_);
  connection.Send(api_, http::verb::put, "/locks/job", {"{}"});
  ASSERT_EQ(connection.client.answers, 1);
  adapters::ResponseHeader header = connection.Finish();
  EXPECT_EQ(header.result_int(), 405u);
  EXPECT_EQ(header[http::field::allow], "GET, HEAD, POST");
  EXPECT_EQ(header[http::field::content_type], "application/problem+json");

  connection.Send(api_, http::verb::get, "/locks/job/renew", {});
  ASSERT_EQ(connection.client.answers, 1);
  header = connection.Finish();
  EXPECT_EQ(header.result_int(), 405u);
  EXPECT_EQ(header[http::field::allow], "POST");

  // The resource is what follows the prefix, whatever slashes the prefix has.
  LocksConfig nested;
  nested.prefix = "/api/locks/";
  LockApi nested_api(table_, nested, nullptr);
  connection.Send(nested_api, http::verb::delete_, "/api/locks/job", {});
  ASSERT_EQ(connection.client.answers, 1);
  EXPECT_EQ(connection.Finish()[http::field::allow], "GET, HEAD, POST");
  connection.Send(nested_api, http::verb::put, "/api/locks/job/release", {});
  ASSERT_EQ(connection.client.answers, 1);
  EXPECT_EQ(connection.Finish()[http::field::allow], "POST");
}

}  // namespace
}  // namespace fencegate::gateway
