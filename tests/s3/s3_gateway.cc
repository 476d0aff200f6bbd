#include "tests/s3/s3_gateway.h"

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

}  // namespace fencegate::integration
