// The s3 adapter against a real Ceph radosgw (tests/support/radosgw.sh), through the real
// fencegate binary: conditional fenced writes, two gateways with separate fence stores racing on
// one object, tombstone deletes, fenced multipart uploads, and awscli as a real client.
// radosgw takes ~15 s to start, so one instance serves the whole binary (one ctest test).
#include <atomic>
#include <chrono>
#include <cstdio>
#include <map>
#include <memory>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "tests/s3/direct_probe.h"
#include "tests/s3/radosgw_environment.h"
#include "tests/s3/s3_gateway.h"
#include "tests/support/admin_client.h"
#include "tests/support/gateway_config.h"
#include "tests/support/gateway_instance.h"
#include "tests/support/http_client.h"
#include "tests/support/process.h"
#include "tests/support/tcp_relay.h"
#include "tests/support/temp_dir.h"

namespace fencegate::integration {
namespace {

TEST(S3Test, FencedWriteKeepsTheTokenWithTheObject) {
  S3Gateway gateway;
  ASSERT_NE(gateway.instance, nullptr);
  CreateBucket(gateway.port(), "basic");
  const Response written = Put(gateway.port(), "/basic/a%20b.txt", 5, "hello");
  ASSERT_EQ(written.result_int(), 200) << written.body();
  EXPECT_FALSE(written[http::field::etag].empty());

  const Response read = Send(gateway.port(), http::verb::get, "/basic/a%20b.txt", std::nullopt);
  EXPECT_EQ(read.result_int(), 200);
  EXPECT_EQ(read.body(), "hello");
  EXPECT_EQ(read["x-amz-meta-fencing-token"], "5");

  // A client cannot choose the token metadata: the gateway sets it from the admitted token.
  const Response forged =
      Put(gateway.port(), "/basic/a%20b.txt", 6, "v6", {{"x-amz-meta-fencing-token", "999"}});
  EXPECT_EQ(forged.result_int(), 200) << forged.body();
  // GET, not HEAD: the test client reads a HEAD response's announced body.
  const Response head = Send(gateway.port(), http::verb::get, "/basic/a%20b.txt", std::nullopt);
  EXPECT_EQ(head.result_int(), 200);
  EXPECT_EQ(head["x-amz-meta-fencing-token"], "6");

  const Response list = Send(gateway.port(), http::verb::get, "/basic?list-type=2", std::nullopt);
  EXPECT_EQ(list.result_int(), 200);
  EXPECT_NE(list.body().find("<Key>a b.txt</Key>"), std::string::npos) << list.body();
}

// The adapter keeps backend connections alive per network thread. A relay in front of radosgw
// counts the connections: sequential fenced writes and reads through a gateway with two network
// threads need at most one per thread, while without idle connections (max_idle_connections: 0)
// every backend request opens one. A connection the backend closed while idle is not reused,
// and one idle longer than idle_timeout is closed rather than reused.
TEST(S3Test, BackendConnectionsAreKeptAlivePerThread) {
  constexpr int kRounds = 25;
  TcpRelay relay(RadosgwEnvironment::port);
  {
    S3Gateway pooled(relay.port());
    ASSERT_NE(pooled.instance, nullptr);
    CreateBucket(pooled.port(), "keepalive");
    for (int i = 0; i < kRounds; ++i) {
      const std::string body = "round " + std::to_string(i);
      ASSERT_EQ(Put(pooled.port(), "/keepalive/k", 100 + i, body).result_int(), 200);
      EXPECT_EQ(Send(pooled.port(), http::verb::get, "/keepalive/k", std::nullopt).body(), body);
    }
    EXPECT_LE(relay.connections_accepted(), 2) << "backend connections for " << 2 * kRounds + 1
                                               << " sequential requests on two network threads";

    // The backend drops its idle connections: the next requests open new ones and succeed.
    relay.CloseAll();
    const int before_close = relay.connections_accepted();
    ASSERT_EQ(Put(pooled.port(), "/keepalive/k", 200, "after close").result_int(), 200);
    EXPECT_EQ(Send(pooled.port(), http::verb::get, "/keepalive/k", std::nullopt).body(),
              "after close");
    EXPECT_GE(relay.connections_accepted(), before_close + 1);
  }

  const int before_unpooled = relay.connections_accepted();
  {
    YAML::Node no_idle;
    no_idle["max_idle_connections"] = 0;
    S3Gateway unpooled(relay.port(), no_idle);
    ASSERT_NE(unpooled.instance, nullptr);
    for (int i = 0; i < kRounds; ++i) {
      ASSERT_EQ(Put(unpooled.port(), "/keepalive/k", 300 + i, "x").result_int(), 200);
      EXPECT_EQ(Send(unpooled.port(), http::verb::get, "/keepalive/k", std::nullopt).body(), "x");
    }
  }
  EXPECT_GE(relay.connections_accepted() - before_unpooled, 2 * kRounds);

  // Four reads, each after the previous connection idled past idle_timeout: four connections
  // (reused, two threads would need at most two).
  const int before_expiry = relay.connections_accepted();
  {
    YAML::Node short_idle;
    short_idle["idle_timeout"] = "50ms";
    S3Gateway expiring(relay.port(), short_idle);
    ASSERT_NE(expiring.instance, nullptr);
    for (int i = 0; i < 4; ++i) {
      // The clock is the subject: idle past idle_timeout, which the pool checks when it is
      // next used; the relay's connection count afterwards shows what it did.
      if (i > 0) std::this_thread::sleep_for(std::chrono::milliseconds(300));
      EXPECT_EQ(Send(expiring.port(), http::verb::get, "/keepalive/k", std::nullopt).result_int(),
                200);
    }
  }
  EXPECT_EQ(relay.connections_accepted() - before_expiry, 4);
}

// The second gateway never saw token 21: its own check admits 20, the backend's refuses it.
TEST(S3Test, SecondGatewayStaleWriteIsRefusedAtTheBackend) {
  S3Gateway first;
  S3Gateway second;
  ASSERT_NE(first.instance, nullptr);
  ASSERT_NE(second.instance, nullptr);
  CreateBucket(first.port(), "twogw");
  ASSERT_EQ(Put(first.port(), "/twogw/obj", 21, "from 21").result_int(), 200);

  const Response stale = Put(second.port(), "/twogw/obj", 20, "from 20");
  EXPECT_EQ(stale.result_int(), 409);
  EXPECT_EQ(stale[http::field::content_type], "application/problem+json");
  EXPECT_EQ(Reason(stale), "backend_fence") << stale.body();
  EXPECT_NE(stale.body().find("\"highest_token\":21"), std::string::npos) << stale.body();
  EXPECT_EQ(Send(first.port(), http::verb::get, "/twogw/obj", std::nullopt).body(), "from 21");

  const std::string metrics = FetchMetricsText(second.instance->admin_port());
  EXPECT_EQ(MetricValue(metrics, "fencegate_writes_rejected_total",
                        "reason=\"backend_fence\",route=\"s3\""),
            1.0)
      << metrics;
}

// ETags are content hashes: a newer holder that stores the very bytes already there leaves the
// ETag unchanged, so If-Match cannot tell its version from the one before. A zombie's write
// therefore starts from a fresh HEAD (no remembered versions by default), which shows the newer
// token: refused, and the object keeps the newer holder's token.
TEST(S3Test, ZombieIsRefusedAfterANewerHolderStoredIdenticalBytes) {
  S3Gateway zombie_side;
  S3Gateway holder_side;
  ASSERT_NE(zombie_side.instance, nullptr);
  ASSERT_NE(holder_side.instance, nullptr);
  CreateBucket(zombie_side.port(), "identical");
  const Response first = Put(zombie_side.port(), "/identical/o", 60, "same bytes");
  ASSERT_EQ(first.result_int(), 200) << first.body();
  const Response newer = Put(holder_side.port(), "/identical/o", 61, "same bytes");
  ASSERT_EQ(newer.result_int(), 200) << newer.body();
  ASSERT_EQ(newer[http::field::etag], first[http::field::etag]) << "the ETag should not change";

  for (const std::string body : {"zombie bytes", "same bytes"}) {
    const Response stale = Put(zombie_side.port(), "/identical/o", 60, body);
    EXPECT_EQ(stale.result_int(), 409) << stale.body();
    EXPECT_EQ(Reason(stale), "backend_fence") << stale.body();
  }
  const Response read = Send(holder_side.port(), http::verb::get, "/identical/o", std::nullopt);
  EXPECT_EQ(read.body(), "same bytes");
  EXPECT_EQ(read["x-amz-meta-fencing-token"], "61");
}

// The limit that keeps version_cache_entries off by default (README "S3 backends"): a gateway
// that writes on the version it remembers passes If-Match after a newer holder stored identical
// bytes, and the zombie's different body lands with its lower token.
TEST(S3Test, RememberedVersionsCannotSeeIdenticalBytesOfANewerHolder) {
  // One network thread: the versions it remembers are its own.
  YAML::Node version_cache;
  version_cache["version_cache_entries"] = 1000;
  S3Gateway zombie_side(0, version_cache, 1);
  S3Gateway holder_side;
  ASSERT_NE(zombie_side.instance, nullptr);
  ASSERT_NE(holder_side.instance, nullptr);
  CreateBucket(zombie_side.port(), "remembered");
  // Two writes, so that the zombie side has also learnt radosgw's unquoted If-Match.
  ASSERT_EQ(Put(zombie_side.port(), "/remembered/o", 69, "earlier").result_int(), 200);
  ASSERT_EQ(Put(zombie_side.port(), "/remembered/o", 70, "same bytes").result_int(), 200);
  ASSERT_EQ(Put(holder_side.port(), "/remembered/o", 71, "same bytes").result_int(), 200);
  EXPECT_EQ(Put(zombie_side.port(), "/remembered/o", 70, "zombie bytes").result_int(), 200);
  const Response read = Send(holder_side.port(), http::verb::get, "/remembered/o", std::nullopt);
  EXPECT_EQ(read.body(), "zombie bytes");
  EXPECT_EQ(read["x-amz-meta-fencing-token"], "70");
}

// A body larger than max_spool_bytes (1 MiB here) is streamed to the backend in one conditional
// attempt: stored intact with its token, and still refused at the backend when stale.
TEST(S3Test, LargeBodyIsStreamedAndStillFenced) {
  S3Gateway first;
  S3Gateway second;
  ASSERT_NE(first.instance, nullptr);
  ASSERT_NE(second.instance, nullptr);
  CreateBucket(first.port(), "large");
  std::string body(5 * 1024 * 1024 + 123, '\0');
  std::uint32_t state = 12345;
  for (char& byte : body) {
    state = state * 1664525u + 1013904223u;
    byte = static_cast<char>(state >> 24);
  }
  const Response written = Put(first.port(), "/large/big.bin", 31, body);
  ASSERT_EQ(written.result_int(), 200) << written.body();

  const Response read = Send(first.port(), http::verb::get, "/large/big.bin", std::nullopt);
  ASSERT_EQ(read.result_int(), 200);
  EXPECT_EQ(read.body().size(), body.size());
  EXPECT_TRUE(read.body() == body) << "the stored object differs from the body sent";
  EXPECT_EQ(read["x-amz-meta-fencing-token"], "31");

  // Overwriting a large object goes out with If-Match from a fresh HEAD, in one attempt. The
  // bucket's condition probe already taught this gateway (etag_quoting: auto) that radosgw
  // matches only bare ETags, so that attempt lands: no conflict, nothing to replay.
  body[0] = static_cast<char>(body[0] + 1);
  const Response overwritten = Put(first.port(), "/large/big.bin", 32, body);
  ASSERT_EQ(overwritten.result_int(), 200) << overwritten.body();
  const Response reread = Send(first.port(), http::verb::get, "/large/big.bin", std::nullopt);
  EXPECT_TRUE(reread.body() == body);
  EXPECT_EQ(reread["x-amz-meta-fencing-token"], "32");

  const Response stale = Put(second.port(), "/large/big.bin", 30, std::string(2 << 20, 'z'));
  EXPECT_EQ(stale.result_int(), 409) << stale.body();
  EXPECT_EQ(Reason(stale), "backend_fence") << stale.body();
  EXPECT_NE(stale.body().find("\"highest_token\":32"), std::string::npos) << stale.body();
  EXPECT_EQ(Send(first.port(), http::verb::get, "/large/big.bin", std::nullopt).body(), body);

  // Chunked without a length cannot be forwarded once it outgrows the spool: 411.
  // (Written raw: the test client's Fetch would add a Content-Length.)
  HttpConnection connection;
  ASSERT_TRUE(connection.Connect(first.port()));
  std::string raw =
      "PUT /large/chunked.bin HTTP/1.1\r\nHost: 127.0.0.1\r\nFencing-Token: 40\r\n"
      "Transfer-Encoding: chunked\r\n\r\n";
  for (int chunk = 0; chunk < 17; ++chunk) raw += "10000\r\n" + std::string(0x10000, 'c') + "\r\n";
  raw += "0\r\n\r\n";
  ASSERT_TRUE(connection.WriteRaw(raw));
  const std::optional<Response> refused = connection.ReadResponse();
  ASSERT_TRUE(refused.has_value()) << connection.error();
  EXPECT_EQ(refused->result_int(), 411) << refused->body();
  EXPECT_EQ((*refused)[http::field::content_type], "application/problem+json");
}

TEST(S3Test, ClientConditionsAreCombinedWithTheGatewayCondition) {
  S3Gateway gateway;
  ASSERT_NE(gateway.instance, nullptr);
  CreateBucket(gateway.port(), "conditions");
  const Response created = Put(gateway.port(), "/conditions/c", 1, "one", {{"If-None-Match", "*"}});
  ASSERT_EQ(created.result_int(), 200) << created.body();
  const std::string etag(created[http::field::etag]);

  EXPECT_EQ(Put(gateway.port(), "/conditions/c", 2, "x", {{"If-None-Match", "*"}}).result_int(),
            412);
  EXPECT_EQ(Put(gateway.port(), "/conditions/c", 2, "x", {{"If-Match", "\"nope\""}}).result_int(),
            412);
  EXPECT_EQ(Put(gateway.port(), "/conditions/c", 2, "two", {{"If-Match", etag}}).result_int(), 200);
  EXPECT_EQ(Send(gateway.port(), http::verb::get, "/conditions/c", std::nullopt).body(), "two");
}

// radosgw ignores conditions on DELETE, so a fenced DELETE is a conditional tombstone write:
// the object is gone for clients, and the tombstone keeps the token against stale writers.
TEST(S3Test, DeleteLeavesATombstoneThatKeepsTheToken) {
  S3Gateway first;
  S3Gateway second;
  ASSERT_NE(first.instance, nullptr);
  ASSERT_NE(second.instance, nullptr);
  CreateBucket(first.port(), "deletes");
  ASSERT_EQ(Put(first.port(), "/deletes/d", 30, "alive").result_int(), 200);
  const Response deleted = Send(first.port(), http::verb::delete_, "/deletes/d", 31);
  EXPECT_EQ(deleted.result_int(), 204) << deleted.body();
  EXPECT_EQ(Send(first.port(), http::verb::get, "/deletes/d", std::nullopt).result_int(), 404);
  EXPECT_EQ(Send(first.port(), http::verb::head, "/deletes/d", std::nullopt).result_int(), 404);

  // A stale writer behind the other gateway can neither recreate nor delete it again.
  const Response recreate =
      Put(second.port(), "/deletes/d", 30, "zombie", {{"If-None-Match", "*"}});
  EXPECT_EQ(recreate.result_int(), 409);
  EXPECT_EQ(Reason(recreate), "backend_fence");
  EXPECT_EQ(Send(second.port(), http::verb::delete_, "/deletes/d", 30).result_int(), 409);
  EXPECT_EQ(Send(first.port(), http::verb::get, "/deletes/d", std::nullopt).result_int(), 404);

  // A newer holder may create it again, even with If-None-Match: * (a tombstone is no object).
  EXPECT_EQ(Put(second.port(), "/deletes/d", 32, "reborn", {{"If-None-Match", "*"}}).result_int(),
            200);
  EXPECT_EQ(Send(first.port(), http::verb::get, "/deletes/d", std::nullopt).body(), "reborn");
}

// A fenced CopyObject: the destination is the fenced resource. It carries the presented token
// (not the source's, which S3 copies with the rest of the metadata), keeps the source's other
// metadata (COPY) or the client's (REPLACE), and a zombie with a lower token through a second
// gateway, whose own fence never saw the copy's token, is refused by the backend. radosgw 16.2
// ignores conditions on a copy's destination, so the copy goes as GET + conditional PUT.
TEST(S3Test, FencedCopyCarriesThePresentedTokenAgainstAZombieBehindAnotherGateway) {
  S3Gateway first;
  S3Gateway second;
  ASSERT_NE(first.instance, nullptr);
  ASSERT_NE(second.instance, nullptr);
  CreateBucket(first.port(), "copies");
  ASSERT_EQ(Put(first.port(), "/copies/src", 3, "source bytes",
                {{"Content-Type", "text/plain"}, {"x-amz-meta-colour", "blue"}})
                .result_int(),
            200);

  const Response copied =
      Put(first.port(), "/copies/dst", 30, "", {{"x-amz-copy-source", "/copies/src"}});
  ASSERT_EQ(copied.result_int(), 200) << copied.body();
  EXPECT_NE(copied.body().find("<CopyObjectResult"), std::string::npos) << copied.body();
  EXPECT_NE(copied.body().find("<ETag>"), std::string::npos) << copied.body();
  Response read = Send(first.port(), http::verb::get, "/copies/dst", std::nullopt);
  EXPECT_EQ(read.body(), "source bytes");
  EXPECT_EQ(read["x-amz-meta-fencing-token"], "30");
  EXPECT_EQ(read["x-amz-meta-colour"], "blue");
  EXPECT_EQ(read[http::field::content_type], "text/plain");

  // The zombie (25) through the other gateway: neither a PUT nor a copy of its own lands.
  const Response zombie_put = Put(second.port(), "/copies/dst", 25, "zombie");
  EXPECT_EQ(zombie_put.result_int(), 409) << zombie_put.body();
  EXPECT_EQ(Reason(zombie_put), "backend_fence") << zombie_put.body();
  const Response zombie_copy =
      Put(second.port(), "/copies/dst", 25, "", {{"x-amz-copy-source", "copies/src"}});
  EXPECT_EQ(zombie_copy.result_int(), 409) << zombie_copy.body();
  EXPECT_EQ(Reason(zombie_copy), "backend_fence") << zombie_copy.body();
  read = Send(first.port(), http::verb::get, "/copies/dst", std::nullopt);
  EXPECT_EQ(read.body(), "source bytes");
  EXPECT_EQ(read["x-amz-meta-fencing-token"], "30");

  // REPLACE: the client's metadata, still the presented token.
  const Response replaced = Put(second.port(), "/copies/dst", 31, "",
                                {{"x-amz-copy-source", "/copies/src"},
                                 {"x-amz-metadata-directive", "REPLACE"},
                                 {"x-amz-meta-colour", "red"},
                                 {"Content-Type", "application/json"}});
  ASSERT_EQ(replaced.result_int(), 200) << replaced.body();
  read = Send(first.port(), http::verb::get, "/copies/dst", std::nullopt);
  EXPECT_EQ(read["x-amz-meta-fencing-token"], "31");
  EXPECT_EQ(read["x-amz-meta-colour"], "red");
  EXPECT_EQ(read[http::field::content_type], "application/json");

  // Copy-source conditions, checked against the source.
  EXPECT_EQ(Put(first.port(), "/copies/dst", 32, "",
                {{"x-amz-copy-source", "/copies/src"}, {"x-amz-copy-source-if-match", "\"no\""}})
                .result_int(),
            412);
  // A missing or deleted (tombstoned) source is no object to copy, and nothing is written.
  EXPECT_EQ(Put(first.port(), "/copies/dst", 32, "", {{"x-amz-copy-source", "/copies/none"}})
                .result_int(),
            404);
  ASSERT_EQ(Send(first.port(), http::verb::delete_, "/copies/src", 4).result_int(), 204);
  const Response of_tombstone =
      Put(first.port(), "/copies/dst", 32, "", {{"x-amz-copy-source", "/copies/src"}});
  EXPECT_EQ(of_tombstone.result_int(), 404);
  EXPECT_NE(of_tombstone.body().find("<Key>src</Key>"), std::string::npos) << of_tombstone.body();
  EXPECT_EQ(
      Send(first.port(), http::verb::get, "/copies/dst", std::nullopt)["x-amz-meta-fencing-token"],
      "31");

  // A source larger than max_spool_bytes (1 MiB here) cannot be copied as GET + PUT: refused.
  ASSERT_EQ(Put(first.port(), "/copies/big", 5, std::string(1536 * 1024, 'b')).result_int(), 200);
  const Response too_large =
      Put(first.port(), "/copies/dst", 33, "", {{"x-amz-copy-source", "/copies/big"}});
  EXPECT_EQ(too_large.result_int(), 413) << too_large.body();
  EXPECT_NE(too_large.body().find("s3-copy-source-too-large"), std::string::npos)
      << too_large.body();
  EXPECT_EQ(
      Send(first.port(), http::verb::get, "/copies/dst", std::nullopt)["x-amz-meta-fencing-token"],
      "31");
}

// The key is decoded from the path: the NoSuchKey body of its tombstone escapes its markup.
TEST(S3Test, TombstoneNoSuchKeyBodyEscapesTheKey) {
  S3Gateway gateway;
  ASSERT_NE(gateway.instance, nullptr);
  CreateBucket(gateway.port(), "escapes");
  const std::string target = "/escapes/a%3C%26%22%27%3Eb";
  ASSERT_EQ(Put(gateway.port(), target, 40, "doomed").result_int(), 200);
  ASSERT_EQ(Send(gateway.port(), http::verb::delete_, target, 41).result_int(), 204);
  const Response gone = Send(gateway.port(), http::verb::get, target, std::nullopt);
  EXPECT_EQ(gone.result_int(), 404);
  EXPECT_NE(gone.body().find("<Key>a&lt;&amp;&quot;&apos;&gt;b</Key><BucketName>escapes<"),
            std::string::npos)
      << gone.body();
}

std::string UploadIdOf(const std::string& xml) {
  std::smatch match;
  return std::regex_search(xml, match, std::regex("<UploadId>([^<]+)</UploadId>")) ? match[1].str()
                                                                                   : std::string();
}

std::string CompleteXml(const std::string& part_etag) {
  return "<CompleteMultipartUpload><Part><PartNumber>1</PartNumber><ETag>" + part_etag +
         "</ETag></Part></CompleteMultipartUpload>";
}

TEST(S3Test, MultipartUploadIsFencedAtCreatePartsAndComplete) {
  S3Gateway first;
  S3Gateway second;
  ASSERT_NE(first.instance, nullptr);
  ASSERT_NE(second.instance, nullptr);
  CreateBucket(first.port(), "multipart");

  // Under one holder the upload completes and the object carries the upload's token.
  Response created = Send(first.port(), http::verb::post, "/multipart/m?uploads", 40);
  ASSERT_EQ(created.result_int(), 200) << created.body();
  std::string upload = UploadIdOf(created.body());
  Response part = Send(first.port(), http::verb::put,
                       "/multipart/m?partNumber=1&uploadId=" + upload, 40, "part one");
  ASSERT_EQ(part.result_int(), 200) << part.body();
  Response completed = Send(first.port(), http::verb::post, "/multipart/m?uploadId=" + upload, 40,
                            CompleteXml(std::string(part[http::field::etag])));
  ASSERT_EQ(completed.result_int(), 200) << completed.body();
  Response read = Send(first.port(), http::verb::get, "/multipart/m", std::nullopt);
  EXPECT_EQ(read.body(), "part one");
  EXPECT_EQ(read["x-amz-meta-fencing-token"], "40");

  // An upload begun under 41 gets no more parts and cannot complete once 42 wrote the object
  // through the other gateway.
  created = Send(first.port(), http::verb::post, "/multipart/m?uploads", 41);
  upload = UploadIdOf(created.body());
  part = Send(first.port(), http::verb::put, "/multipart/m?partNumber=1&uploadId=" + upload, 41,
              "late part");
  ASSERT_EQ(part.result_int(), 200);
  ASSERT_EQ(Put(second.port(), "/multipart/m", 42, "newer").result_int(), 200);
  const Response late_part = Send(first.port(), http::verb::put,
                                  "/multipart/m?partNumber=2&uploadId=" + upload, 41, "more");
  EXPECT_EQ(late_part.result_int(), 409);
  EXPECT_EQ(Reason(late_part), "backend_fence");
  const Response late_complete =
      Send(first.port(), http::verb::post, "/multipart/m?uploadId=" + upload, 41,
           CompleteXml(std::string(part[http::field::etag])));
  EXPECT_EQ(late_complete.result_int(), 409);
  EXPECT_EQ(Reason(late_complete), "backend_fence");
  EXPECT_EQ(Send(first.port(), http::verb::get, "/multipart/m", std::nullopt).body(), "newer");
  // Nor can a stale holder start a new upload.
  EXPECT_EQ(Send(first.port(), http::verb::post, "/multipart/m?uploads", 41).result_int(), 409);
}

// Two gateways with separate fence stores, W writers each, all writing one object with tokens
// from one increasing counter, so writes arrive out of token order at both gateways and at the
// backend. A checker reads the object throughout: its token must never be lower than the
// highest token already acknowledged, nor than the token it read before.
TEST(S3Test, TwoGatewaysRacingWritersNeverOverwriteAHigherToken) {
  constexpr int kWritersPerGateway = 4;
  constexpr int kWritesPerWriter = 40;
  S3Gateway gateways[2];
  ASSERT_NE(gateways[0].instance, nullptr);
  ASSERT_NE(gateways[1].instance, nullptr);
  CreateBucket(gateways[0].port(), "race");

  std::atomic<std::uint64_t> next_token{1000};
  std::atomic<std::uint64_t> max_acked{0};
  std::atomic<int> acked{0}, stale_gateway{0}, stale_backend{0}, conflicts{0}, other{0};
  std::atomic<int> writers_left{2 * kWritersPerGateway};
  std::vector<std::thread> writers;
  for (int g = 0; g < 2; ++g) {
    for (int w = 0; w < kWritersPerGateway; ++w) {
      writers.emplace_back([&, g, w] {
        for (int i = 0; i < kWritesPerWriter; ++i) {
          const std::uint64_t token = next_token.fetch_add(1);
          const Response response =
              Put(gateways[g].port(), "/race/obj", token,
                  "token " + std::to_string(token) + " gateway " + std::to_string(g) + " writer " +
                      std::to_string(w) + " write " + std::to_string(i));
          if (response.result_int() == 200) {
            ++acked;
            std::uint64_t seen = max_acked.load();
            while (seen < token && !max_acked.compare_exchange_weak(seen, token)) {
            }
          } else if (response.result_int() == 409 && Reason(response) == "stale_token") {
            ++stale_gateway;
          } else if (response.result_int() == 409 && Reason(response) == "backend_fence") {
            ++stale_backend;
          } else if (response.result_int() == 503) {
            ++conflicts;
          } else {
            ++other;
            ADD_FAILURE() << response.result_int() << " " << response.body();
          }
        }
        --writers_left;
      });
    }
  }
  int lower_token_overwrites = 0;
  int polls = 0;
  std::uint64_t last_read = 0;
  // GET (the test client has no HEAD support). Bounded by the writers' end (each request has a
  // client deadline) and a poll count.
  while (writers_left.load() > 0 && polls < 100000) {
    const std::uint64_t floor = max_acked.load();
    const Response read =
        Send(gateways[polls % 2].port(), http::verb::get, "/race/obj", std::nullopt);
    ++polls;
    if (read.result_int() != 200) continue;
    const std::string text(read["x-amz-meta-fencing-token"]);
    if (text.empty()) {
      ADD_FAILURE() << "the object has no token";
      continue;
    }
    const std::uint64_t token = std::stoull(text);
    if (token < floor || token < last_read) ++lower_token_overwrites;
    last_read = std::max(last_read, token);
  }
  for (auto& writer : writers) writer.join();

  const Response final_read = Send(gateways[0].port(), http::verb::get, "/race/obj", std::nullopt);
  EXPECT_EQ(final_read["x-amz-meta-fencing-token"], std::to_string(max_acked.load()));
  EXPECT_TRUE(final_read.body().starts_with("token " + std::to_string(max_acked.load()) + " "))
      << final_read.body();
  EXPECT_EQ(lower_token_overwrites, 0);
  EXPECT_EQ(other.load(), 0);
  EXPECT_EQ(acked + stale_gateway + stale_backend + conflicts,
            2 * kWritersPerGateway * kWritesPerWriter);
  EXPECT_GT(acked.load(), 0);
  std::printf(
      "2 gateways x %d writers x %d writes: %d lower-token overwrites (%d acknowledged, %d stale "
      "at the gateway, %d stale at the backend (backend_fence), %d retries exhausted, %d reads)\n",
      kWritersPerGateway, kWritesPerWriter, lower_token_overwrites, acked.load(),
      stale_gateway.load(), stale_backend.load(), conflicts.load(), polls);
}

// awscli as a real client. It cannot send Fencing-Token, so it writes through the unfenced
// "awscli" route (any client signature, or none, is accepted and replaced by the gateway's) and
// is refused by the fenced ones; it reads fenced objects and their token metadata.
TEST(S3Test, AwscliThroughTheGateway) {
  S3Gateway gateway;
  ASSERT_NE(gateway.instance, nullptr);
  CreateBucket(gateway.port(), "awscli");
  CreateBucket(gateway.port(), "fenced");
  ASSERT_EQ(Put(gateway.port(), "/fenced/by-token", 50, "fenced data").result_int(), 200);

  TempDir dir;
  const auto aws = [&](std::vector<std::string> args, std::vector<std::string>* out) {
    std::vector<std::string> argv = {"/usr/bin/env",
                                     "AWS_ACCESS_KEY_ID=client-key-the-gateway-ignores",
                                     "AWS_SECRET_ACCESS_KEY=client-secret",
                                     "AWS_DEFAULT_REGION=us-east-1",
                                     "AWS_CONFIG_FILE=" + dir.Join("none"),
                                     "AWS_SHARED_CREDENTIALS_FILE=" + dir.Join("none"),
                                     "AWS_EC2_METADATA_DISABLED=true",
                                     "AWS_PAGER=",
                                     "HOME=" + dir.path(),
                                     "/usr/bin/aws",
                                     "--endpoint-url",
                                     "http://127.0.0.1:" + std::to_string(gateway.port())};
    argv.insert(argv.end(), args.begin(), args.end());
    std::string error;
    std::unique_ptr<Process> process = Process::Start(argv, &error);
    if (!process) return -1;
    const std::optional<int> status = process->Wait(std::chrono::seconds(60));
    process->WaitForOutputEnd(std::chrono::seconds(5));
    if (out) *out = process->StdoutLines();
    if (status != 0) std::printf("aws %s: %s\n", args[1].c_str(), process->Stderr().c_str());
    return status.value_or(-1);
  };

  const std::string small = dir.WriteFile("small.txt", "from awscli\n");
  EXPECT_EQ(
      aws({"s3api", "put-object", "--bucket", "awscli", "--key", "small.txt", "--body", small},
          nullptr),
      0);
  // Above awscli's 8 MiB threshold: a multipart upload through the gateway.
  const std::string big = dir.WriteFile("big.bin", std::string(9 << 20, 'x') + "end");
  EXPECT_EQ(aws({"s3", "cp", big, "s3://awscli/big.bin"}, nullptr), 0);
  EXPECT_EQ(aws({"s3", "cp", "s3://awscli/big.bin", dir.Join("big.copy")}, nullptr), 0);
  EXPECT_EQ(ReadWholeFile(dir.Join("big.copy")), ReadWholeFile(big));

  std::vector<std::string> out;
  EXPECT_EQ(aws({"s3api", "list-objects-v2", "--bucket", "awscli"}, &out), 0);
  std::string listing;
  for (const auto& line : out) listing += line + "\n";
  EXPECT_NE(listing.find("\"Key\": \"small.txt\""), std::string::npos) << listing;
  EXPECT_NE(listing.find("\"Key\": \"big.bin\""), std::string::npos) << listing;

  EXPECT_EQ(aws({"s3api", "get-object", "--bucket", "awscli", "--key", "small.txt",
                 dir.Join("small.copy")},
                nullptr),
            0);
  EXPECT_EQ(ReadWholeFile(dir.Join("small.copy")), "from awscli\n");

  EXPECT_EQ(aws({"s3api", "head-object", "--bucket", "fenced", "--key", "by-token"}, &out), 0);
  std::string head;
  for (const auto& line : out) head += line + "\n";
  EXPECT_NE(head.find("\"fencing-token\": \"50\""), std::string::npos) << head;

  // Without a token, writes to a fenced bucket are refused (428) and change nothing.
  EXPECT_NE(aws({"s3api", "put-object", "--bucket", "fenced", "--key", "by-token", "--body", small},
                nullptr),
            0);
  EXPECT_EQ(Send(gateway.port(), http::verb::get, "/fenced/by-token", std::nullopt).body(),
            "fenced data");
}

// ---- https endpoints: the same radosgw on its TLS port ----

std::string HttpsEndpoint(std::uint16_t port = 0) {
  return "https://127.0.0.1:" + std::to_string(port != 0 ? port : RadosgwEnvironment::ssl_port);
}

// The s3 backend's key trusting `ca` from the test certificates.
YAML::Node TrustTestCa(const std::string& ca = "ca.pem") {
  YAML::Node keys;
  keys["tls_ca_file"] = RadosgwEnvironment::certs + "/" + ca;
  return keys;
}

double ConnectErrors(const S3Gateway& gateway) {
  return MetricValue(FetchMetricsText(gateway.instance->admin_port()),
                     "fencegate_upstream_errors_total", "kind=\"connect\",route=\"s3\"")
      .value_or(0);
}

// Fenced writes over https land in radosgw (read back through a plain-HTTP gateway), a stale
// token is refused by the gateway, and a second gateway with its own fence store is refused by
// the backend's condition, which travels over TLS too. Keep-alive holds over TLS: a relay in
// front of the TLS port sees at most one connection per network thread.
TEST(S3TlsTest, FencedWritesOverHttpsLandInRadosgw) {
  TcpRelay relay(RadosgwEnvironment::ssl_port);
  S3Gateway tls(0, TrustTestCa(), 2, HttpsEndpoint(relay.port()));
  ASSERT_NE(tls.instance, nullptr);
  CreateBucket(tls.port(), "overtls");
  constexpr int kRounds = 10;
  for (int i = 0; i < kRounds; ++i) {
    const std::string body = "tls round " + std::to_string(i);
    const Response written = Put(tls.port(), "/overtls/doc", 10 + i, body);
    ASSERT_EQ(written.result_int(), 200) << written.body();
    EXPECT_EQ(Send(tls.port(), http::verb::get, "/overtls/doc", std::nullopt).body(), body);
  }
  EXPECT_LE(relay.connections_accepted(), 2)
      << "TLS connections for " << 2 * kRounds + 1 << " sequential requests on two network threads";

  const Response stale = Put(tls.port(), "/overtls/doc", 3, "zombie");
  EXPECT_EQ(stale.result_int(), 409) << stale.body();
  EXPECT_EQ(Reason(stale), "stale_token");

  S3Gateway plain;
  ASSERT_NE(plain.instance, nullptr);
  const Response read = Send(plain.port(), http::verb::get, "/overtls/doc", std::nullopt);
  EXPECT_EQ(read.result_int(), 200);
  EXPECT_EQ(read.body(), "tls round " + std::to_string(kRounds - 1));
  EXPECT_EQ(read["x-amz-meta-fencing-token"], std::to_string(10 + kRounds - 1));

  // A second gateway over TLS never saw these tokens: radosgw refuses its older one.
  S3Gateway other(0, TrustTestCa(), 2, HttpsEndpoint());
  ASSERT_NE(other.instance, nullptr);
  const Response refused = Put(other.port(), "/overtls/doc", 10, "late");
  EXPECT_EQ(refused.result_int(), 409) << refused.body();
  EXPECT_EQ(Reason(refused), "backend_fence") << refused.body();
  EXPECT_EQ(Send(plain.port(), http::verb::get, "/overtls/doc", std::nullopt).body(),
            "tls round " + std::to_string(kRounds - 1));
  EXPECT_EQ(ConnectErrors(tls), 0);
}

// A certificate that does not chain to the configured CA (another CA, or the system store that
// does not hold the test CA) or does not carry the name asked for: 502 problem+json, counted as a
// connect error, nothing written. tls_verify_hostname: false accepts the name and says so loudly.
TEST(S3TlsTest, BackendCertificateIsVerified) {
  S3Gateway plain;
  ASSERT_NE(plain.instance, nullptr);
  CreateBucket(plain.port(), "verified");

  const auto expect_refused = [](const S3Gateway& gateway, const std::string& what) {
    const Response refused = Put(gateway.port(), "/verified/" + what, 1, "must not land");
    EXPECT_EQ(refused.result_int(), 502) << what;
    EXPECT_EQ(refused[http::field::content_type], "application/problem+json") << what;
    EXPECT_NE(refused.body().find("upstream-tls-failed"), std::string::npos)
        << what << ": " << refused.body();
    EXPECT_GE(ConnectErrors(gateway), 1) << what;
  };
  {
    S3Gateway wrong_ca(0, TrustTestCa("other_ca.pem"), 1, HttpsEndpoint());
    ASSERT_NE(wrong_ca.instance, nullptr);
    expect_refused(wrong_ca, "wrong-ca");
  }
  {
    S3Gateway system_store(0, YAML::Node(), 1, HttpsEndpoint());
    ASSERT_NE(system_store.instance, nullptr);
    expect_refused(system_store, "system-store");
  }
  {
    YAML::Node other_name = TrustTestCa();
    other_name["tls_server_name"] = "elsewhere.example";
    S3Gateway mismatch(0, other_name, 1, HttpsEndpoint());
    ASSERT_NE(mismatch.instance, nullptr);
    expect_refused(mismatch, "mismatch");
  }
  for (const std::string what : {"wrong-ca", "system-store", "mismatch"}) {
    EXPECT_EQ(Send(plain.port(), http::verb::get, "/verified/" + what, std::nullopt).result_int(),
              404)
        << what;
  }

  YAML::Node name_unchecked = TrustTestCa();
  name_unchecked["tls_server_name"] = "elsewhere.example";
  name_unchecked["tls_verify_hostname"] = false;
  S3Gateway unverified(0, name_unchecked, 1, HttpsEndpoint());
  ASSERT_NE(unverified.instance, nullptr);
  const Response accepted = Put(unverified.port(), "/verified/unverified", 1, "name unchecked");
  EXPECT_EQ(accepted.result_int(), 200) << accepted.body();
  EXPECT_NE(unverified.instance->process().Stderr().find(
                "WARNING: backend 'rgw': tls_verify_hostname is off"),
            std::string::npos)
      << unverified.instance->process().Stderr();
  EXPECT_EQ(Send(plain.port(), http::verb::get, "/verified/unverified", std::nullopt).body(),
            "name unchecked");
}

// A CA file that does not exist stops the start: a configuration error naming the key and the
// file (exit 1, as for http backends; --check-config finds it too).
TEST(S3TlsTest, UnreadableCaFileStopsTheStart) {
  TempDir dir;
  const std::string missing = dir.Join("absent-ca.pem");
  GatewayConfig built;
  YAML::Node rgw = built.Backend("rgw");
  rgw["kind"] = "s3";
  rgw["endpoint"] = HttpsEndpoint();
  rgw["tls_ca_file"] = missing;
  rgw["access_key"] = "a";
  rgw["secret_key"] = "b";
  built.Route("s3", "/", "rgw", "s3:{path}");
  const std::string config = dir.WriteFile("fencegate.yaml", built.Yaml());
  std::string error;
  auto start = Process::Start({FencegateBinary(), "--config", config, "--listen", "127.0.0.1:0",
                               "--admin-listen", "127.0.0.1:0", "--data-dir", dir.Join("data")},
                              &error);
  ASSERT_NE(start, nullptr) << error;
  EXPECT_EQ(start->Wait(std::chrono::seconds(30)), 1);
  ASSERT_TRUE(start->WaitForOutputEnd(std::chrono::seconds(30)));
  EXPECT_NE(start->Stderr().find("backends.rgw.tls_ca_file: cannot read '" + missing + "'"),
            std::string::npos)
      << start->Stderr();
}

// What radosgw 16.2 (Debian 12) does with the conditions the adapter relies on, found by the
// adapter's own probe: PUT conditions enforced, DELETE and the copy destination's If-Match
// ignored, so the verdict is "partial" (docs/BACKEND_TRUST.md).
TEST(S3ProbeTest, RadosgwEnforcesPutConditionsOnly) {
  {
    S3Gateway gateway;
    ASSERT_NE(gateway.instance, nullptr);
    CreateBucket(gateway.port(), "probed");
  }
  const adapters::ConditionReport report = ProbeBucketDirectly(
      RadosgwEnvironment::port, "fencegate-test", "fencegate-test-secret", "probed");
  std::printf("radosgw probe: %s\n", DescribeReport(report).c_str());
  EXPECT_EQ(report.verdict, adapters::ConditionVerdict::kPartial) << DescribeReport(report);
  std::map<std::string, bool> holds;
  for (const adapters::ConditionProbeResult& probe : report.probes) holds[probe.name] = probe.holds;
  EXPECT_EQ(holds, (std::map<std::string, bool>{{"put-if-none-match-existing", true},
                                                {"put-if-match-wrong-etag", true},
                                                {"delete-if-match-wrong-etag", false},
                                                {"copy-destination-if-match-wrong-etag", false}}))
      << DescribeReport(report);
}

// Through the binary: the first fenced write to a bucket waits for its probe, goes on under the
// partial verdict, and the probe leaves no scratch object behind.
TEST(S3ProbeTest, FencedWritesGoOnUnderAPartialVerdict) {
  S3Gateway gateway;
  ASSERT_NE(gateway.instance, nullptr);
  CreateBucket(gateway.port(), "partial");
  const Response written = Put(gateway.port(), "/partial/doc", 4, "four");
  ASSERT_EQ(written.result_int(), 200) << written.body();
  EXPECT_EQ(Send(gateway.port(), http::verb::delete_, "/partial/doc", 5).result_int(), 204);
  // A write with a token older than the delete's is refused.
  EXPECT_EQ(Put(gateway.port(), "/partial/doc", 3, "three").result_int(), 409);
  const Response list = Send(gateway.port(), http::verb::get,
                             "/partial?list-type=2&prefix=.fencegate-probe/", std::nullopt);
  EXPECT_EQ(list.result_int(), 200);
  EXPECT_EQ(list.body().find("<Key>"), std::string::npos) << list.body();
}

}  // namespace
}  // namespace fencegate::integration

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  ::testing::AddGlobalTestEnvironment(new fencegate::integration::RadosgwEnvironment);
  return RUN_ALL_TESTS();
}
