#include "tests/s3/s3_gateway.h"

#include <regex>

#include <gtest/gtest.h>

#include "tests/s3/radosgw_environment.h"
#include "tests/support/gateway_config.h"

namespace fencegate::integration {

S3Gateway::S3Gateway(std::uint16_t backend_port, const YAML::Node& backend_options, int threads,
                     std::string endpoint) {
  if (endpoint.empty()) {
    endpoint = "http://127.0.0.1:" +
               std::to_string(backend_port != 0 ? backend_port : RadosgwEnvironment::port);
  }
  GatewayConfig config;
  config["threads"] = threads;
  config["access_log"]["path"] = "";
  YAML::Node rgw = config.Backend("rgw");
  rgw["kind"] = "s3";
  rgw["endpoint"] = endpoint;
  rgw["access_key"] = "fencegate-test";
  rgw["secret_key_file"] = dir.WriteFile("secret", "fencegate-test-secret\n");
  rgw["etag_quoting"] = "auto";
  // Small, so that the large-body tests stream without sending 64 MiB.
  rgw["max_spool_bytes"] = 1048576;
  SetKeys(rgw, backend_options);
  config.Route("awscli", "/awscli/", "rgw", "s3:{path}")["fenced_methods"] =
      YAML::Node(YAML::NodeType::Sequence);
  config.Route("s3", "/", "rgw", "s3:{path}");
  std::string error;
  instance = GatewayInstance::Start(dir.WriteFile("fencegate.yaml", config.Yaml()),
                                    dir.Join("data"), &error);
  EXPECT_NE(instance, nullptr) << error;
}

Response Put(std::uint16_t port, const std::string& target, std::uint64_t token, std::string body,
             std::initializer_list<std::pair<std::string, std::string>> extra) {
  Request request = MakeRequest(http::verb::put, target, extra, std::move(body));
  request.set("Fencing-Token", std::to_string(token));
  std::string error;
  std::optional<Response> response = Fetch(port, std::move(request), &error);
  EXPECT_TRUE(response.has_value()) << error;
  return response.value_or(Response{});
}

Response Send(std::uint16_t port, http::verb method, const std::string& target,
              std::optional<std::uint64_t> token, std::string body) {
  Request request = MakeRequest(method, target, {}, std::move(body));
  if (token) request.set("Fencing-Token", std::to_string(*token));
  std::string error;
  std::optional<Response> response = Fetch(port, std::move(request), &error);
  EXPECT_TRUE(response.has_value()) << error;
  return response.value_or(Response{});
}

std::string Reason(const Response& response) {
  std::smatch match;
  const std::string body = response.body();
  return std::regex_search(body, match, std::regex("\"reason\":\"([a-z_]+)\"")) ? match[1].str()
                                                                                : std::string();
}

void CreateBucket(std::uint16_t port, const std::string& bucket) {
  const Response created = Send(port, http::verb::put, "/" + bucket, 1);
  // 409 BucketAlreadyExists when an earlier test made it.
  ASSERT_TRUE(created.result_int() == 200 || created.result_int() == 409) << created.body();
}

}  // namespace fencegate::integration
