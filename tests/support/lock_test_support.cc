#include "tests/support/lock_test_support.h"

#include <boost/json/parse.hpp>

#include "tests/support/admin_client.h"

namespace fencegate::integration {

GatewayConfig LockGatewayConfig(std::uint16_t backend_port, const std::string& access_log,
                                const YAML::Node& store) {
  GatewayConfig config = GatewayConfig::HttpBackend(backend_port, access_log);
  if (!store.IsNull()) config["store"] = store;
  YAML::Node locks = config["locks"];
  locks["prefix"] = "/locks/";
  locks["min_ttl"] = "50ms";
  YAML::Node orders;
  orders["match"] = "orders-*";
  orders["fence_keys"] = Sequence({"kv:{name}"});
  locks["rules"].push_back(orders);
  if (store.IsNull()) {
    YAML::Node delayed;
    delayed["match"] = "delayed-*";
    delayed["quarantine"] = "1s";
    locks["rules"].push_back(delayed);
  }
  return config;
}

void LockGatewayTest::SetUp() {
  config_path_ = dir_.WriteFile(
      "fencegate.yaml",
      LockGatewayConfig(backend_.port(), dir_.Join("access.log"), StoreConfig()).Yaml());
  StartGateway();
}

void LockGatewayTest::StartGateway() {
  gateway_.reset();
  std::string error;
  gateway_ = GatewayInstance::Start(config_path_, dir_.Join("data"), &error);
  ASSERT_NE(gateway_, nullptr) << error;
}

Response LockGatewayTest::Post(std::uint16_t port, const std::string& target,
                               const std::string& body) {
  std::string error;
  auto response = Fetch(port, MakeRequest(http::verb::post, target, {}, body), &error);
  if (!response) {
    ADD_FAILURE() << "POST " << target << " failed: " << error;
    Response failed;
    failed.result(0);
    return failed;
  }
  return *response;
}

Response LockGatewayTest::Acquire(const std::string& name, std::int64_t ttl_ms,
                                  std::int64_t wait_ms, std::chrono::milliseconds client_timeout) {
  HttpConnection connection(client_timeout);
  std::optional<Response> response;
  if (connection.Connect(gateway_->traffic_port())) {
    response = connection.RoundTrip(MakeRequest(
        http::verb::post, "/locks/" + name, {},
        "{\"ttl_ms\":" + std::to_string(ttl_ms) + ",\"wait_ms\":" + std::to_string(wait_ms) + "}"));
  }
  if (!response) {
    ADD_FAILURE() << "acquire " << name << " failed: " << connection.error();
    Response failed;
    failed.result(0);
    return failed;
  }
  return *response;
}

Response LockGatewayTest::Renew(const std::string& name, const std::string& owner_token) {
  return Post(gateway_->traffic_port(), "/locks/" + name + "/renew",
              "{\"owner_token\":\"" + owner_token + "\"}");
}

Response LockGatewayTest::Release(const std::string& name, const std::string& owner_token) {
  return Post(gateway_->traffic_port(), "/locks/" + name + "/release",
              "{\"owner_token\":\"" + owner_token + "\"}");
}

Response LockGatewayTest::ForceRelease(const std::string& name, const std::string& body) {
  return Post(gateway_->admin_port(), "/admin/locks/" + name + "/force-release", body);
}

Response LockGatewayTest::Write(const std::string& item, std::uint64_t token) {
  std::string error;
  auto response = Fetch(gateway_->traffic_port(),
                        MakeRequest(http::verb::put, "/kv/" + item + "/x",
                                    {{"Fencing-Token", std::to_string(token)}}, "data"),
                        &error);
  if (!response) {
    ADD_FAILURE() << "PUT failed: " << error;
    Response failed;
    failed.result(0);
    return failed;
  }
  return *response;
}

boost::json::value LockGatewayTest::AdminLock(const std::string& name) {
  auto value = FetchAdminJson(gateway_->admin_port(), "/admin/locks/" + name);
  return value ? *value : boost::json::value(nullptr);
}

boost::json::object JsonBody(const Response& response) {
  boost::system::error_code ec;
  boost::json::value value = boost::json::parse(response.body(), ec);
  if (ec || !value.is_object()) {
    ADD_FAILURE() << "not a JSON object: " << response.body();
    return {};
  }
  return value.as_object();
}

std::string OwnerTokenOf(const Response& response) {
  const auto body = JsonBody(response);
  const auto* token = body.if_contains("owner_token");
  return token && token->is_string() ? std::string(token->as_string()) : std::string();
}

std::uint64_t FencingTokenOf(const Response& response) {
  const auto body = JsonBody(response);
  const auto* token = body.if_contains("fencing_token");
  return token ? token->to_number<std::uint64_t>() : 0;
}

}  // namespace fencegate::integration
