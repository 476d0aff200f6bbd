// The condition probes against a backend that accepts conditional headers and ignores them:
// s3rver 3.7.1 from npm (tests/support/s3rver.sh), through the real fencegate binary. Without the
// probe a fenced PUT to it answers 200 and lands although the backend never checked the
// gateway's condition; with it (conditions: verify, the default) fenced writes are refused with
// 503 backend-conditions-not-enforced and nothing lands, while reads are still served.
#include <cstdio>
#include <memory>
#include <regex>
#include <string>

#include <gtest/gtest.h>

#include "tests/s3/direct_probe.h"
#include "tests/s3/s3_requests.h"
#include "tests/support/gateway_config.h"
#include "tests/support/gateway_instance.h"
#include "tests/support/http_client.h"
#include "tests/support/temp_dir.h"

namespace fencegate::integration {
namespace {

std::string S3rverScript() {
  return std::string(FENCEGATE_SOURCE_DIR) + "/tests/support/s3rver.sh";
}

// The one s3rver of this binary, on an ephemeral port.
class S3rver : public ::testing::Environment {
 public:
  static inline std::uint16_t port = 0;

  void SetUp() override {
    dir_ = std::make_unique<TempDir>();
    const std::string command =
        "bash " + S3rverScript() + " start " + dir_->Join("s3rver") + " 2>&1";
    std::string output;
    if (FILE* pipe = popen(command.c_str(), "r")) {
      char line[512];
      while (fgets(line, sizeof line, pipe) != nullptr) output += line;
      pclose(pipe);
    }
    std::smatch match;
    if (std::regex_search(output, match, std::regex("s3rver ready port=([0-9]+)"))) {
      port = static_cast<std::uint16_t>(std::stoi(match[1]));
    }
    ASSERT_NE(port, 0) << "s3rver did not start:\n" << output;
  }

  void TearDown() override {
    const std::string command = "bash " + S3rverScript() + " stop " + dir_->Join("s3rver");
    EXPECT_EQ(std::system(command.c_str()), 0);
    dir_.reset();
  }

 private:
  std::unique_ptr<TempDir> dir_;
};

// A gateway in front of s3rver, every object path fenced. `backend_options` are extra keys of the
// s3 backend.
struct S3rverGateway {
  TempDir dir;
  std::unique_ptr<GatewayInstance> instance;

  explicit S3rverGateway(const YAML::Node& backend_options = YAML::Node()) {
    GatewayConfig config;
    config["access_log"]["path"] = "";
    YAML::Node backend = config.Backend("s3rver");
    backend["kind"] = "s3";
    backend["endpoint"] = "http://127.0.0.1:" + std::to_string(S3rver::port);
    backend["access_key"] = "S3RVER";
    backend["secret_key_file"] = dir.WriteFile("secret", "S3RVER\n");
    for (const auto& option : backend_options)
      backend[option.first.as<std::string>()] = option.second;
    config.Route("s3", "/", "s3rver", "s3:{path}");
    std::string error;
    instance = GatewayInstance::Start(dir.WriteFile("fencegate.yaml", config.Yaml()),
                                      dir.Join("data"), &error);
    EXPECT_NE(instance, nullptr) << error;
  }
  std::uint16_t port() const { return instance->traffic_port(); }
};

TEST(S3rverTest, ProbeFindsEveryConditionIgnored) {
  {
    S3rverGateway gateway;
    ASSERT_NE(gateway.instance, nullptr);
    CreateBucket(gateway.port(), "measured");
  }
  const adapters::ConditionReport report =
      ProbeBucketDirectly(S3rver::port, "S3RVER", "S3RVER", "measured");
  std::printf("s3rver 3.7.1 probe: %s\n", DescribeReport(report).c_str());
  EXPECT_EQ(report.verdict, adapters::ConditionVerdict::kIgnored) << DescribeReport(report);
  ASSERT_EQ(report.probes.size(), 4u) << DescribeReport(report);
  for (const adapters::ConditionProbeResult& probe : report.probes) {
    EXPECT_FALSE(probe.holds) << probe.name << ": " << probe.detail;
  }
}

TEST(S3rverTest, FencedWritesAreRefusedNothingLandsAndReadsAreServed) {
  // An object to read back, written through a gateway that trusts s3rver.
  {
    YAML::Node trust;
    trust["conditions"] = "trust";
    S3rverGateway trusting(trust);
    ASSERT_NE(trusting.instance, nullptr);
    CreateBucket(trusting.port(), "lying");
    ASSERT_EQ(Send(trusting.port(), http::verb::put, "/lying/readable", 3, "old").result_int(),
              200);
  }
  S3rverGateway gateway;
  ASSERT_NE(gateway.instance, nullptr);
  const Response refused = Send(gateway.port(), http::verb::put, "/lying/fenced", 5, "new");
  EXPECT_EQ(refused.result_int(), 503) << refused.body();
  EXPECT_EQ(refused[http::field::content_type], "application/problem+json");
  EXPECT_NE(refused.body().find("backend-conditions-not-enforced"), std::string::npos)
      << refused.body();
  EXPECT_NE(refused.body().find("put-if-match-wrong-etag"), std::string::npos) << refused.body();
  const Response refused_delete = Send(gateway.port(), http::verb::delete_, "/lying/readable", 6);
  EXPECT_EQ(refused_delete.result_int(), 503) << refused_delete.body();
  const Response refused_overwrite =
      Send(gateway.port(), http::verb::put, "/lying/readable", 7, "overwritten");
  EXPECT_EQ(refused_overwrite.result_int(), 503) << refused_overwrite.body();

  // Nothing landed, nothing was deleted or overwritten, and reads go through.
  EXPECT_EQ(Send(gateway.port(), http::verb::get, "/lying/fenced", std::nullopt).result_int(), 404);
  const Response read = Send(gateway.port(), http::verb::get, "/lying/readable", std::nullopt);
  EXPECT_EQ(read.result_int(), 200);
  EXPECT_EQ(read.body(), "old");
  EXPECT_EQ(read["x-amz-meta-fencing-token"], "3");
  // The probe's scratch objects were removed.
  const Response list = Send(gateway.port(), http::verb::get,
                             "/lying?list-type=2&prefix=.fencegate-probe/", std::nullopt);
  EXPECT_EQ(list.result_int(), 200);
  EXPECT_EQ(list.body().find("<Key>"), std::string::npos) << list.body();

  // Operators see the verdict: /readyz is 503 naming the bucket, the metric's ignored series is 1.
  const std::uint16_t admin = gateway.instance->admin_port();
  const Response ready = Send(admin, http::verb::get, "/readyz", std::nullopt);
  EXPECT_EQ(ready.result_int(), 503) << ready.body();
  EXPECT_NE(ready.body().find("lying"), std::string::npos) << ready.body();
  const Response metrics = Send(admin, http::verb::get, "/metrics", std::nullopt);
  EXPECT_NE(metrics.body().find("fencegate_backend_conditions{backend=\"s3rver\",scope=\"lying\","
                                "verdict=\"ignored\"} 1"),
            std::string::npos);
}

// conditions: trust sends fenced writes to s3rver as before the probes existed (they land: the
// backend checks nothing), and the probe never runs.
TEST(S3rverTest, TrustLetsFencedWritesThroughWithoutProbing) {
  YAML::Node trust;
  trust["conditions"] = "trust";
  S3rverGateway gateway(trust);
  ASSERT_NE(gateway.instance, nullptr);
  CreateBucket(gateway.port(), "trusted");
  const Response written = Send(gateway.port(), http::verb::put, "/trusted/doc", 4, "four");
  EXPECT_EQ(written.result_int(), 200) << written.body();
  const Response read = Send(gateway.port(), http::verb::get, "/trusted/doc", std::nullopt);
  EXPECT_EQ(read.body(), "four");
  EXPECT_EQ(read["x-amz-meta-fencing-token"], "4");
  const Response list = Send(gateway.port(), http::verb::get,
                             "/trusted?list-type=2&prefix=.fencegate-probe/", std::nullopt);
  EXPECT_EQ(list.body().find("<Key>"), std::string::npos) << list.body();
}

// probe_buckets are probed at start; a fenced write to one finds its verdict there.
TEST(S3rverTest, ConfiguredBucketIsProbedAtStart) {
  {
    S3rverGateway setup;
    ASSERT_NE(setup.instance, nullptr);
    CreateBucket(setup.port(), "configured");
  }
  YAML::Node options;
  options["probe_buckets"].push_back("configured");
  options["probe_prefix"] = "custom-probe/";
  S3rverGateway gateway(options);
  ASSERT_NE(gateway.instance, nullptr);
  const Response refused = Send(gateway.port(), http::verb::put, "/configured/doc", 4, "four");
  EXPECT_EQ(refused.result_int(), 503) << refused.body();
  EXPECT_NE(refused.body().find("backend-conditions-not-enforced"), std::string::npos);
  const Response list = Send(gateway.port(), http::verb::get,
                             "/configured?list-type=2&prefix=custom-probe/", std::nullopt);
  EXPECT_EQ(list.body().find("<Key>"), std::string::npos) << list.body();
}

}  // namespace
}  // namespace fencegate::integration

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  ::testing::AddGlobalTestEnvironment(new fencegate::integration::S3rver);
  return RUN_ALL_TESTS();
}
