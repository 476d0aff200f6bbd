#include "resource_adapters/http/http_adapter.h"

#include <chrono>
#include <string>

#include <gtest/gtest.h>
#include <boost/asio/ip/tcp.hpp>

#include "tests/resource_adapters/fake_downstream.h"
#include "tests/resource_adapters/http/fixture_http_server.h"
#include "tests/support/eventually.h"

namespace fencegate::adapters {
namespace {

using testing::FakeDownstream;
using testing::FixtureHttpServer;
using testing::ForwardAndWait;
using testing::PatternByte;
using Failure = ForwardOutcome::Failure;

class HttpAdapterTest : public ::testing::Test {
 protected:
  void Connect(std::uint16_t port, HttpAdapterOptions options = {}) {
    options.host = "127.0.0.1";
    options.port = port;
    factory_ = MakeHttpAdapterFactory(options);
    adapter_ = factory_->CreateForThread(ioc_);
  }

  static RequestHeader Header(http::verb method, std::string target) {
    RequestHeader header;
    header.method(method);
    header.target(target);
    header.version(11);
    header.set(http::field::host, "client.example");
    return header;
  }

  ForwardOutcome Forward(RequestHeader& header, FakeDownstream& downstream,
                         std::optional<std::uint64_t> token = std::nullopt) {
    ForwardRequest request;
    request.header = &header;
    request.route_prefix = "/api/";
    request.fencing_token = token;
    auto outcome = ForwardAndWait(ioc_, *adapter_, request, downstream);
    EXPECT_EQ(downstream.violations, 0);
    return outcome;
  }

  ForwardOutcome Get(std::string target, FakeDownstream* recorded = nullptr) {
    auto header = Header(http::verb::get, std::move(target));
    FakeDownstream downstream(ioc_, "");
    auto outcome = Forward(header, downstream);
    if (recorded != nullptr) {
      recorded->response_header = downstream.response_header;
      recorded->response_body = downstream.response_body;
    }
    return outcome;
  }

  boost::asio::io_context ioc_;
  std::unique_ptr<AdapterFactory> factory_;
  std::unique_ptr<ResourceAdapter> adapter_;
};

TEST_F(HttpAdapterTest, ForwardsMethodTargetHeadersAndSizedBody) {
  FixtureHttpServer server([](const FixtureHttpServer::Received&) {
    auto reply = FixtureHttpServer::Ok("stored");
    reply.response.set(http::field::etag, "\"v7\"");
    return reply;
  });
  Connect(server.port());
  auto header = Header(http::verb::put, "/api/items/1?mode=x");
  header.set("X-Custom", "yes");
  header.set(http::field::content_length, "11");
  FakeDownstream downstream(ioc_, "hello world", 4);
  auto outcome = Forward(header, downstream);

  EXPECT_EQ(outcome.failure, Failure::kNone);
  EXPECT_TRUE(outcome.response_complete);
  EXPECT_TRUE(outcome.backend_reached);
  EXPECT_EQ(outcome.upstream_status, 200u);
  EXPECT_EQ(outcome.status, 200u);
  EXPECT_EQ(outcome.etag, "\"v7\"");
  EXPECT_EQ(outcome.request_body_bytes, 11u);
  EXPECT_EQ(outcome.response_body_bytes, 6u);
  EXPECT_EQ(downstream.response_body, "stored");
  EXPECT_TRUE(downstream.response_ended);
  EXPECT_EQ((*downstream.response_header)[http::field::content_length], "6");

  auto received = server.received();
  ASSERT_EQ(received.size(), 1u);
  const auto& request = received[0].request;
  EXPECT_EQ(request.method(), http::verb::put);
  EXPECT_EQ(request.target(), "/api/items/1?mode=x");
  EXPECT_EQ(request["X-Custom"], "yes");
  EXPECT_EQ(request[http::field::host], "client.example");
  EXPECT_EQ(request[http::field::content_length], "11");
  EXPECT_FALSE(request.chunked());
  EXPECT_EQ(request.body(), "hello world");
}

TEST_F(HttpAdapterTest, ChunkedClientBodyIsSentChunked) {
  FixtureHttpServer server([](const auto&) { return FixtureHttpServer::Ok("ok"); });
  HttpAdapterOptions options;
  options.host_header = "backend.internal";
  Connect(server.port(), options);
  auto header = Header(http::verb::post, "/api/stream");
  header.set(http::field::transfer_encoding, "chunked");
  FakeDownstream downstream(ioc_, "a body of unknown length", 5);
  auto outcome = Forward(header, downstream);
  EXPECT_EQ(outcome.status, 200u);
  auto received = server.received();
  ASSERT_EQ(received.size(), 1u);
  EXPECT_TRUE(received[0].request.chunked());
  EXPECT_EQ(received[0].request.body(), "a body of unknown length");
  EXPECT_EQ(received[0].request[http::field::host], "backend.internal");
}

TEST_F(HttpAdapterTest, ClientFencingTokenIsNotForwardedByDefault) {
  FixtureHttpServer server([](const auto&) { return FixtureHttpServer::Ok(""); });
  Connect(server.port());
  auto header = Header(http::verb::delete_, "/api/x");
  header.set("Fencing-Token", "99");
  FakeDownstream downstream(ioc_, "");
  Forward(header, downstream, 5);
  auto received = server.received();
  ASSERT_EQ(received.size(), 1u);
  EXPECT_EQ(received[0].request.find("Fencing-Token"), received[0].request.end());
}

TEST_F(HttpAdapterTest, AdmittedTokenIsForwardedUnderTheConfiguredHeader) {
  FixtureHttpServer server([](const auto&) { return FixtureHttpServer::Ok(""); });
  HttpAdapterOptions options;
  options.forward_token_header = "Fencing-Token";
  Connect(server.port(), options);
  auto header = Header(http::verb::delete_, "/api/x");
  header.set("Fencing-Token", "99");  // what the client sent; the admitted token wins
  FakeDownstream downstream(ioc_, "");
  Forward(header, downstream, 5);
  auto received = server.received();
  ASSERT_EQ(received.size(), 1u);
  EXPECT_EQ(received[0].request["Fencing-Token"], "5");
}

TEST_F(HttpAdapterTest, HopByHopFieldsAreStrippedFromTheResponse) {
  FixtureHttpServer server([](const auto&) {
    FixtureHttpServer::Reply reply;
    auto& response = reply.response;
    response.result(http::status::ok);
    response.version(11);
    response.set(http::field::connection, "X-Hop");
    response.set("X-Hop", "per-connection");
    response.set(http::field::keep_alive, "timeout=5");
    response.set(http::field::proxy_connection, "keep-alive");
    response.set(http::field::upgrade, "h2c");
    response.set(http::field::te, "trailers");
    response.set(http::field::trailer, "X-Checksum");
    response.set("X-End-To-End", "kept");
    response.body() = "chunked body";
    response.chunked(true);
    return reply;
  });
  Connect(server.port());
  FakeDownstream recorded(ioc_, "");
  auto outcome = Get("/api/hop", &recorded);
  ASSERT_EQ(outcome.status, 200u);
  const auto& header = *recorded.response_header;
  for (std::string_view name : {"Connection", "X-Hop", "Keep-Alive", "Proxy-Connection", "Upgrade",
                                "TE", "Trailer", "Transfer-Encoding"}) {
    EXPECT_EQ(header.find(name), header.end()) << name;
  }
  EXPECT_EQ(header["X-End-To-End"], "kept");
  // The upstream was chunked: the gateway chooses the framing, so no Content-Length either.
  EXPECT_EQ(header.find(http::field::content_length), header.end());
  EXPECT_EQ(recorded.response_body, "chunked body");
}

TEST_F(HttpAdapterTest, LargeBodiesStreamBothWays) {
  constexpr std::uint64_t kSize = 32ull * 1024 * 1024;
  FixtureHttpServer server([](const FixtureHttpServer::Received& received) {
    std::string body(received.request.body().size(), '\0');
    for (std::size_t i = 0; i < body.size(); ++i) body[i] = PatternByte(i);
    return FixtureHttpServer::Ok(std::move(body));
  });
  HttpAdapterOptions options;
  options.buffer_bytes = 64 * 1024;
  Connect(server.port(), options);
  auto header = Header(http::verb::put, "/api/blob");
  header.set(http::field::content_length, std::to_string(kSize));
  FakeDownstream downstream = FakeDownstream::Generated(ioc_, kSize, 32 * 1024);
  auto outcome = Forward(header, downstream);
  EXPECT_EQ(outcome.status, 200u);
  EXPECT_TRUE(outcome.response_complete);
  EXPECT_EQ(outcome.request_body_bytes, kSize);
  EXPECT_EQ(outcome.response_body_bytes, kSize);
  EXPECT_LE(downstream.largest_read_buffer, options.buffer_bytes);

  auto received = server.received();
  ASSERT_EQ(received.size(), 1u);
  const std::string& sent = received[0].request.body();
  ASSERT_EQ(sent.size(), kSize);
  ASSERT_EQ(downstream.response_body.size(), kSize);
  std::uint64_t mismatches = 0;
  for (std::uint64_t i = 0; i < kSize; ++i) {
    if (sent[i] != PatternByte(i) || downstream.response_body[i] != PatternByte(i)) ++mismatches;
  }
  EXPECT_EQ(mismatches, 0u);
}

TEST_F(HttpAdapterTest, SequentialRequestsReuseOneConnection) {
  FixtureHttpServer server([](const auto&) { return FixtureHttpServer::Ok("pong"); });
  Connect(server.port());
  for (int i = 0; i < 10; ++i) {
    EXPECT_EQ(Get("/api/ping").status, 200u);
  }
  EXPECT_EQ(server.accepted_connections(), 1);
  EXPECT_EQ(server.received().size(), 10u);
}

TEST_F(HttpAdapterTest, HeadAndNoContentResponsesHaveNoBody) {
  FixtureHttpServer server([](const FixtureHttpServer::Received& received) {
    if (received.request.method() == http::verb::head) {
      auto reply = FixtureHttpServer::Ok("");
      reply.response.set(http::field::content_length, "1234");
      return reply;
    }
    FixtureHttpServer::Reply reply;
    reply.response.result(http::status::no_content);
    reply.response.version(11);
    return reply;
  });
  Connect(server.port());
  auto head = Header(http::verb::head, "/api/h");
  FakeDownstream head_downstream(ioc_, "");
  auto head_outcome = Forward(head, head_downstream);
  EXPECT_TRUE(head_outcome.response_complete);
  EXPECT_EQ((*head_downstream.response_header)[http::field::content_length], "1234");
  EXPECT_TRUE(head_downstream.response_body.empty());

  auto put = Header(http::verb::put, "/api/n");
  put.set(http::field::content_length, "1");
  FakeDownstream put_downstream(ioc_, "x");
  EXPECT_EQ(Forward(put, put_downstream).status, 204u);
  // Both answers were complete, so the one connection served both.
  EXPECT_EQ(server.accepted_connections(), 1);
}

// The backend reads the second request on each connection and closes without answering:
// the keep-alive race where a pooled connection dies under a request.
FixtureHttpServer::Reply CloseOnSecondRequest(const FixtureHttpServer::Received& received) {
  if (received.index_on_connection == 2) {
    return {FixtureHttpServer::Action::kCloseWithoutAnswer, {}, {}};
  }
  return FixtureHttpServer::Ok("fine");
}

TEST_F(HttpAdapterTest, IdempotentRequestIsRetriedOnceAfterStalePooledConnection) {
  FixtureHttpServer server(CloseOnSecondRequest);
  Connect(server.port());
  ASSERT_EQ(Get("/api/first").status, 200u);
  FakeDownstream recorded(ioc_, "");
  auto outcome = Get("/api/second", &recorded);
  EXPECT_EQ(outcome.status, 200u);
  EXPECT_EQ(outcome.failure, Failure::kNone);
  EXPECT_EQ(recorded.response_body, "fine");
  EXPECT_EQ(server.accepted_connections(), 2);
  EXPECT_EQ(server.received().size(), 3u);
}

TEST_F(HttpAdapterTest, NonIdempotentRequestIsNeverRetried) {
  FixtureHttpServer server(CloseOnSecondRequest);
  Connect(server.port());
  ASSERT_EQ(Get("/api/first").status, 200u);
  auto put = Header(http::verb::put, "/api/write");
  put.set(http::field::content_length, "4");
  FakeDownstream downstream(ioc_, "data");
  auto outcome = Forward(put, downstream, 3);
  EXPECT_EQ(outcome.failure, Failure::kUpstreamProtocol);
  EXPECT_TRUE(outcome.backend_reached);
  ASSERT_TRUE(outcome.problem.has_value());
  EXPECT_EQ(outcome.problem->status, 502u);
  EXPECT_FALSE(outcome.response_started);
  int puts = 0;
  for (const auto& received : server.received()) {
    if (received.request.method() == http::verb::put) ++puts;
  }
  EXPECT_EQ(puts, 1);
  EXPECT_EQ(server.accepted_connections(), 1);
}

// The first connection answers in keep-alive form, then the backend closes it while it is idle
// in the pool (its own idle timeout, a restart); later connections stay open.
FixtureHttpServer::Reply AnswerThenCloseWhileIdle(const FixtureHttpServer::Received& received) {
  if (received.connection == 1) {
    FixtureHttpServer::Reply reply;
    reply.action = FixtureHttpServer::Action::kRawThenClose;
    reply.raw = {"HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nfine"};
    return reply;
  }
  return FixtureHttpServer::Ok("fine");
}

// Waits until the backend closed the idle connection (20 ms after its answer); on loopback its
// FIN has then arrived.
void WaitForIdleClose(const FixtureHttpServer& server) {
  ASSERT_TRUE(integration::Eventually([&] { return server.closed_connections() == 1; }));
}

TEST_F(HttpAdapterTest, WriteIsNeverSentOnAnIdleConnectionTheBackendClosed) {
  FixtureHttpServer server(AnswerThenCloseWhileIdle);
  Connect(server.port());
  ASSERT_EQ(Get("/api/first").status, 200u);
  WaitForIdleClose(server);
  // A write cannot be sent twice, so the pooled connection is looked at first and the closed
  // one never carries it.
  auto put = Header(http::verb::put, "/api/write");
  put.set(http::field::content_length, "4");
  FakeDownstream downstream(ioc_, "data");
  auto outcome = Forward(put, downstream, 3);
  EXPECT_EQ(outcome.failure, Failure::kNone);
  EXPECT_EQ(outcome.status, 200u);
  EXPECT_EQ(server.accepted_connections(), 2);
  ASSERT_EQ(server.received().size(), 2u);
  EXPECT_EQ(server.received()[1].request.method(), http::verb::put);
  EXPECT_EQ(server.received()[1].connection, 2);
}

TEST_F(HttpAdapterTest, ReadOnAnIdleConnectionTheBackendClosedIsSentAgain) {
  FixtureHttpServer server(AnswerThenCloseWhileIdle);
  Connect(server.port());
  ASSERT_EQ(Get("/api/first").status, 200u);
  WaitForIdleClose(server);
  // A GET takes the pooled connection unlooked-at, finds it closed, and goes out again on a
  // fresh one: the client sees only the answer.
  FakeDownstream recorded(ioc_, "");
  auto outcome = Get("/api/second", &recorded);
  EXPECT_EQ(outcome.failure, Failure::kNone);
  EXPECT_EQ(outcome.status, 200u);
  EXPECT_EQ(recorded.response_body, "fine");
  EXPECT_EQ(server.accepted_connections(), 2);
  ASSERT_EQ(server.received().size(), 2u);
  EXPECT_EQ(server.received()[1].connection, 2);
}

// The backend's only server refuses: nothing was sent, and no server is left to try (issue 27:
// never 502 for an unavailable backend).
TEST_F(HttpAdapterTest, RefusedConnectionIsA503NoHealthyBackendProblem) {
  std::uint16_t closed_port;
  {
    boost::asio::io_context probe;
    boost::asio::ip::tcp::acceptor acceptor(probe, {boost::asio::ip::make_address("127.0.0.1"), 0});
    closed_port = acceptor.local_endpoint().port();
  }
  Connect(closed_port);
  auto outcome = Get("/api/x");
  EXPECT_EQ(outcome.failure, Failure::kUpstreamConnect);
  EXPECT_FALSE(outcome.backend_reached);
  ASSERT_TRUE(outcome.problem.has_value());
  EXPECT_EQ(outcome.problem->status, 503u);
  EXPECT_EQ(outcome.problem->type, "no-healthy-backend");
  EXPECT_TRUE(outcome.problem->retry_after);
}

TEST_F(HttpAdapterTest, SilentBackendIsA504ProblemAfterResponseTimeout) {
  FixtureHttpServer server([](const auto&) {
    return FixtureHttpServer::Reply{FixtureHttpServer::Action::kNeverAnswer, {}, {}};
  });
  HttpAdapterOptions options;
  options.response_timeout = std::chrono::milliseconds(300);
  Connect(server.port(), options);
  const auto start = std::chrono::steady_clock::now();
  auto outcome = Get("/api/slow");
  const auto elapsed = std::chrono::steady_clock::now() - start;
  EXPECT_EQ(outcome.failure, Failure::kUpstreamTimeout);
  ASSERT_TRUE(outcome.problem.has_value());
  EXPECT_EQ(outcome.problem->status, 504u);
  EXPECT_GE(elapsed, std::chrono::milliseconds(250));
  EXPECT_LT(elapsed, std::chrono::seconds(3));
  // A timeout is not retried: the backend has the request.
  EXPECT_EQ(server.received().size(), 1u);
}

FixtureHttpServer::Reply Raw(std::vector<std::string> pieces) {
  FixtureHttpServer::Reply reply;
  reply.action = FixtureHttpServer::Action::kRawThenClose;
  reply.raw = std::move(pieces);
  return reply;
}

TEST_F(HttpAdapterTest, ResponseHeaderSplitAcrossReadsIsReassembled) {
  FixtureHttpServer server([](const auto&) {
    return Raw({"HTTP/1.1 200 OK\r\nContent-Le", "ngth: 3\r\nX-Split: ye", "s\r\n\r\nabc"});
  });
  Connect(server.port());
  FakeDownstream recorded(ioc_, "");
  auto outcome = Get("/api/split", &recorded);
  EXPECT_EQ(outcome.failure, Failure::kNone);
  ASSERT_EQ(outcome.status, 200u);
  EXPECT_EQ((*recorded.response_header)["X-Split"], "yes");
  EXPECT_EQ(recorded.response_body, "abc");
}

TEST_F(HttpAdapterTest, InterimResponsesAreSkippedForTheFinalOne) {
  FixtureHttpServer server([](const auto& received) {
    if (received.connection == 1) {
      // The interim and the final response in one read.
      return Raw({"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"});
    }
    // In separate reads, two interim responses first.
    return Raw({"HTTP/1.1 103 Early Hints\r\nLink: </s.css>\r\n\r\n",
                "HTTP/1.1 102 Processing\r\n\r\n",
                "HTTP/1.1 201 Created\r\nContent-Length: 4\r\n\r\ndone"});
  });
  Connect(server.port());
  FakeDownstream first(ioc_, "");
  auto outcome = Get("/api/one", &first);
  ASSERT_EQ(outcome.status, 200u);
  EXPECT_EQ(first.response_body, "ok");
  FakeDownstream second(ioc_, "");
  outcome = Get("/api/two", &second);
  ASSERT_EQ(outcome.status, 201u);
  EXPECT_EQ(second.response_header->find(http::field::link), second.response_header->end());
  EXPECT_EQ(second.response_body, "done");
}

TEST_F(HttpAdapterTest, BackendClosingWithinTheResponseHeaderIsA502Problem) {
  FixtureHttpServer server([](const auto&) {
    return Raw({"HTTP/1.1 200 OK\r\n", "Content-Length: 3\r\n"});
  });
  Connect(server.port());
  auto outcome = Get("/api/cut");
  EXPECT_EQ(outcome.failure, Failure::kUpstreamProtocol);
  EXPECT_EQ(outcome.error, http::error::partial_message);
  ASSERT_TRUE(outcome.problem.has_value());
  EXPECT_EQ(outcome.problem->status, 502u);
  EXPECT_EQ(outcome.problem->type, "upstream-protocol-error");
  EXPECT_FALSE(outcome.response_started);
}

TEST_F(HttpAdapterTest, MalformedOrOversizedResponseHeaderIsA502Problem) {
  const std::string huge(16 * 1024, 'x');
  FixtureHttpServer server([&huge](const auto& received) {
    if (received.connection == 1) return Raw({"HTTP/1.1 2OO OK\r\n\r\n"});
    return Raw({"HTTP/1.1 200 OK\r\nX-Huge: " + huge + "\r\nContent-Length: 0\r\n\r\n"});
  });
  Connect(server.port());
  auto malformed = Get("/api/bad");
  EXPECT_EQ(malformed.failure, Failure::kUpstreamProtocol);
  ASSERT_TRUE(malformed.problem.has_value());
  EXPECT_EQ(malformed.problem->status, 502u);
  auto oversized = Get("/api/huge");
  EXPECT_EQ(oversized.failure, Failure::kUpstreamProtocol);
  EXPECT_EQ(oversized.error, http::error::header_limit);
  ASSERT_TRUE(oversized.problem.has_value());
  EXPECT_EQ(oversized.problem->status, 502u);
}

TEST_F(HttpAdapterTest, TooManyInterimResponsesAreA502Problem) {
  FixtureHttpServer server([](const auto&) {
    std::string interims;
    for (int i = 0; i < 12; ++i) interims += "HTTP/1.1 102 Processing\r\n\r\n";
    return Raw({interims});
  });
  Connect(server.port());
  auto outcome = Get("/api/chatty");
  EXPECT_EQ(outcome.failure, Failure::kUpstreamProtocol);
  ASSERT_TRUE(outcome.problem.has_value());
  EXPECT_EQ(outcome.problem->status, 502u);
  EXPECT_EQ(outcome.problem->type, "upstream-protocol-error");
}

TEST_F(HttpAdapterTest, ClientBodyErrorClosesUpstreamAndReportsTheClient) {
  FixtureHttpServer server([](const auto&) { return FixtureHttpServer::Ok("never used"); });
  Connect(server.port());
  auto header = Header(http::verb::put, "/api/upload");
  header.set(http::field::content_length, std::to_string(1 << 20));
  FakeDownstream downstream = FakeDownstream::Generated(ioc_, 1 << 20, 16 * 1024);
  downstream.FailBodyAt(100 * 1024, http::error::body_limit);
  auto outcome = Forward(header, downstream);
  EXPECT_EQ(outcome.failure, Failure::kClient);
  EXPECT_EQ(outcome.error, http::error::body_limit);
  EXPECT_FALSE(outcome.response_started);
  EXPECT_TRUE(server.received().empty());  // the backend never saw a complete request
}

}  // namespace
}  // namespace fencegate::adapters
