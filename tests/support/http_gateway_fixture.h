#pragma once

#include <memory>
#include <optional>
#include <string>

#include <gtest/gtest.h>

#include "tests/support/gateway_config.h"
#include "tests/support/gateway_instance.h"
#include "tests/support/http_client.h"
#include "tests/support/recording_backend.h"
#include "tests/support/temp_dir.h"

namespace fencegate::integration {

// A fencegate in front of a RecordingBackend, configured by GatewayConfig::HttpBackend: route
// "kv", prefix /kv/, fence key "kv:<first segment after /kv/>". Access log in dir_/access.log.
class HttpGatewayTest : public ::testing::Test {
 protected:
  void SetUp() override {
    GatewayConfig config = GatewayConfig::HttpBackend(backend_.port(), dir_.Join("access.log"));
    CustomizeConfig(&config);
    config_path_ = dir_.WriteFile("fencegate.yaml", config.Yaml());
    std::string error;
    gateway_ = GatewayInstance::Start(config_path_, dir_.Join("data"), &error);
    ASSERT_NE(gateway_, nullptr) << error;
  }

  // Lets a test suite change the configuration before the gateway starts.
  virtual void CustomizeConfig(GatewayConfig*) const {}

  // Sends `request` on a new connection to the traffic port; a failed exchange fails the test
  // and yields a response with status 0.
  Response Send(Request request) {
    std::string error;
    std::optional<Response> response = Fetch(gateway_->traffic_port(), std::move(request), &error);
    if (!response) {
      ADD_FAILURE() << "request failed: " << error;
      Response failed;
      failed.result(0);
      return failed;
    }
    return *response;
  }

  // PUT `target` with a Fencing-Token field of `token` (none if nullopt).
  Response Put(const std::string& target, std::optional<std::string> token,
               std::string body = "data") {
    Request request = MakeRequest(http::verb::put, target, {}, std::move(body));
    if (token) request.set("Fencing-Token", *token);
    return Send(std::move(request));
  }

  TempDir dir_;
  RecordingBackend backend_;
  std::string config_path_;
  std::unique_ptr<GatewayInstance> gateway_;  // declared last: stops before the backend
};

}  // namespace fencegate::integration
