#include "tests/support/lock_test_support.h"

#include <thread>

#include <boost/json/parse.hpp>

#include "tests/support/admin_client.h"

namespace fencegate::integration {

std::string KvRouteConfig(std::uint16_t backend_port, const std::string& access_log) {
  return "access_log:\n"
         "  path: \"" +
         access_log +
         "\"\n"
         "backends:\n"
         "  api:\n"
         "    kind: http\n"
         "    url: http://127.0.0.1:" +
         std::to_string(backend_port) +
         "\n"
         "routes:\n"
         "  - name: kv\n"
         "    prefix: /kv/\n"
         "    backend: api\n"
         "    fence_key: \"kv:{segment:2}\"\n";
}

std::string LockGatewayConfig(std::uint16_t backend_port, const std::string& access_log,
                              const std::string& store) {
  return store + KvRouteConfig(backend_port, access_log) +
         "locks:\n"
         "  prefix: /locks/\n"
         "  min_ttl: 50ms\n"
         "  rules:\n"
         "    - match: \"orders-*\"\n"
         "      fence_keys: [\"kv:{name}\"]\n" +
         (store.empty() ? "    - match: \"delayed-*\"\n      quarantine: 1s\n" : "");
}

void LockGatewayTest::SetUp() {
  config_path_ = dir_.WriteFile(
      "fencegate.yaml", LockGatewayConfig(backend_.port(), dir_.Join("access.log"), StoreConfig()));
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

bool Eventually(const std::function<bool()>& condition, std::chrono::milliseconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < deadline) {
    if (condition()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return condition();
}

}  // namespace fencegate::integration
