// A fenced CopyObject on a bucket that honours conditions on a copy's destination (AWS S3):
// the backend copies, under REPLACE with the presented token and a condition on the
// destination. radosgw 16.2 ignores those conditions (its copies go as GET + PUT, tested in
// tests/s3), so a fixture backend records what the adapter sends here.
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "resource_adapters/s3/bucket_conditions.h"
#include "resource_adapters/s3/s3_exchange.h"
#include "resource_adapters/transport/backend_servers.h"
#include "tests/resource_adapters/fake_downstream.h"
#include "tests/resource_adapters/http/fixture_http_server.h"

namespace fencegate::adapters::s3 {
namespace {

using testing::FakeDownstream;
using testing::FixtureHttpServer;
namespace http = boost::beast::http;

constexpr std::string_view kCopyResultXml =
    "<CopyObjectResult><ETag>\"c\"</ETag></CopyObjectResult>";

// The backend: the source /src/a (token 3, metadata of its own), the destination /dst/b with
// the given token (absent when 0); a copy PUT answers a CopyObjectResult.
FixtureHttpServer::Reply CopyBackend(const FixtureHttpServer::Received& received,
                                     std::uint64_t destination_token) {
  const auto& request = received.request;
  FixtureHttpServer::Reply reply = FixtureHttpServer::Ok("");
  if (request.method() == http::verb::head && request.target() == "/src/a") {
    reply.response.set(http::field::etag, "\"s1\"");
    reply.response.set(http::field::content_type, "text/plain");
    reply.response.set("x-amz-meta-colour", "blue");
    reply.response.set(kTokenMeta, "3");
  } else if (request.method() == http::verb::head && request.target() == "/dst/b") {
    if (destination_token == 0) {
      reply.response.result(http::status::not_found);
    } else {
      reply.response.set(http::field::etag, "\"d1\"");
      reply.response.set(kTokenMeta, std::to_string(destination_token));
    }
  } else if (request.method() == http::verb::put) {
    reply = FixtureHttpServer::Ok(std::string(kCopyResultXml));
  } else {
    reply.response.result(http::status::bad_request);
  }
  return reply;
}

class S3CopyExchangeTest : public ::testing::Test {
 protected:
  void Connect(std::uint16_t port) {
    S3AdapterOptions options;
    options.host = "127.0.0.1";
    options.port = port;
    options.access_key = "key";
    options.secret_key = "secret";
    options.etag_quoting = EtagQuoting::kQuoted;
    std::string error;
    servers_ = MakeBackendServers(options, &error);
    ASSERT_NE(servers_, nullptr) << error;
    backend_ = std::make_shared<Backend>();
    backend_->endpoint.servers = servers_->servers;
    backend_->endpoint.connect = servers_->connect;
    backend_->endpoint.host_headers.push_back(HostHeader("127.0.0.1", port, false));
    backend_->endpoint.region = options.region;
    backend_->endpoint.credentials = {options.access_key, options.secret_key};
    backend_->options = options;
    pools_ = std::make_shared<ServerConnectionPools>(servers_->servers, 4,
                                                     std::chrono::milliseconds(15000));
    // The destination bucket's probe found every condition honoured, copy destinations
    // included: the backend copies.
    auto conditions = std::make_shared<BucketConditions>("objects", ConditionProbeOptions{});
    BucketProbe probe;
    probe.report.scope = "dst";
    probe.report.verdict = ConditionVerdict::kEnforced;
    probe.report.probes = {{"put-if-match-wrong-etag", true, true, ""},
                           {"put-if-none-match-existing", true, true, ""},
                           {"copy-destination-if-match-wrong-etag", true, false, ""}};
    conditions->Finish("dst", std::move(probe));
    gates_ = std::make_unique<BucketGates>(std::move(conditions));
  }

  // A fenced copy of /src/a to /dst/b with token 30, the backend copying.
  ForwardOutcome Copy(RequestHeader header, FakeDownstream& downstream) {
    ForwardRequest request;
    request.header = &header;
    request.fencing_token = 30;
    request.fence_key = "s3:/dst/b";
    bool done = false;
    ForwardOutcome outcome;
    auto exchange =
        std::make_shared<S3Exchange>(ioc_, backend_, std::make_shared<VersionCache>(0), pools_,
                                     *gates_, request, downstream, [&](ForwardOutcome result) {
                                       outcome = std::move(result);
                                       done = true;
                                     });
    exchange->Start();
    EXPECT_TRUE(testing::RunUntil(ioc_, done));
    pools_->CloseAll();
    return outcome;
  }

  static RequestHeader CopyHeader() {
    RequestHeader header;
    header.method(http::verb::put);
    header.target("/dst/b");
    header.version(11);
    header.set(http::field::content_length, "0");
    header.set("x-amz-copy-source", "/src/a");
    header.set("x-amz-copy-source-if-match", "\"s1\"");
    header.set("x-amz-meta-colour", "ignored under COPY");
    return header;
  }

  boost::asio::io_context ioc_;
  std::shared_ptr<BackendServers> servers_;
  std::shared_ptr<Backend> backend_;
  std::shared_ptr<ServerConnectionPools> pools_;
  std::unique_ptr<BucketGates> gates_;
};

TEST_F(S3CopyExchangeTest, BackendCopiesUnderReplaceWithThePresentedTokenAndADestinationCondition) {
  FixtureHttpServer server(
      [](const FixtureHttpServer::Received& received) { return CopyBackend(received, 0); });
  Connect(server.port());
  FakeDownstream downstream(ioc_, "");
  const ForwardOutcome outcome = Copy(CopyHeader(), downstream);
  EXPECT_FALSE(outcome.problem.has_value()) << outcome.problem->detail;
  ASSERT_TRUE(downstream.response_header.has_value());
  EXPECT_EQ(downstream.response_header->result_int(), 200);
  EXPECT_EQ(downstream.response_body, kCopyResultXml);

  const std::vector<FixtureHttpServer::Received> received = server.received();
  ASSERT_EQ(received.size(), 3u);
  EXPECT_EQ(received[0].request.method(), http::verb::head);
  EXPECT_EQ(received[0].request.target(), "/src/a");
  EXPECT_EQ(received[1].request.method(), http::verb::head);
  EXPECT_EQ(received[1].request.target(), "/dst/b");
  const auto& copy = received[2].request;
  EXPECT_EQ(copy.method(), http::verb::put);
  EXPECT_EQ(copy.target(), "/dst/b");
  EXPECT_EQ(copy["x-amz-copy-source"], "/src/a");
  EXPECT_EQ(copy["x-amz-metadata-directive"], "REPLACE");
  EXPECT_EQ(copy[kTokenMeta], "30");
  EXPECT_EQ(copy[http::field::if_none_match], "*");
  EXPECT_EQ(copy["x-amz-meta-colour"], "blue");
  EXPECT_EQ(copy[http::field::content_type], "text/plain");
  // Checked on the source's HEAD; a 412 of the copy must mean the destination changed.
  EXPECT_EQ(copy.count("x-amz-copy-source-if-match"), 0u);
}

TEST_F(S3CopyExchangeTest, ACopyOntoAHigherTokenIsRefusedBeforeTheBackendCopies) {
  FixtureHttpServer server(
      [](const FixtureHttpServer::Received& received) { return CopyBackend(received, 40); });
  Connect(server.port());
  FakeDownstream downstream(ioc_, "");
  const ForwardOutcome outcome = Copy(CopyHeader(), downstream);
  ASSERT_TRUE(outcome.problem.has_value());
  EXPECT_EQ(outcome.problem->status, 409u);
  EXPECT_EQ(outcome.problem->type, kStaleAtBackendProblemType);
  EXPECT_EQ(outcome.backend_stale_token, 40u);
  for (const FixtureHttpServer::Received& received : server.received()) {
    EXPECT_NE(received.request.method(), http::verb::put);
  }
}

TEST_F(S3CopyExchangeTest, AFailedCopySourceConditionIsAnsweredWithoutACopy) {
  FixtureHttpServer server(
      [](const FixtureHttpServer::Received& received) { return CopyBackend(received, 0); });
  Connect(server.port());
  RequestHeader header = CopyHeader();
  header.set("x-amz-copy-source-if-match", "\"other\"");
  FakeDownstream downstream(ioc_, "");
  Copy(std::move(header), downstream);
  ASSERT_TRUE(downstream.response_header.has_value());
  EXPECT_EQ(downstream.response_header->result_int(), 412);
  EXPECT_NE(downstream.response_body.find("PreconditionFailed"), std::string::npos);
  EXPECT_EQ(server.received().size(), 1u);
}

}  // namespace
}  // namespace fencegate::adapters::s3
