#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include <gtest/gtest.h>
#include <boost/json/value.hpp>

#include "tests/support/eventually.h"
#include "tests/support/gateway_config.h"
#include "tests/support/gateway_instance.h"
#include "tests/support/http_client.h"
#include "tests/support/recording_backend.h"
#include "tests/support/temp_dir.h"

namespace fencegate::integration {

// A gateway with the fenced route "kv" (/kv/<item>/... -> fence key "kv:<item>") in front of a
// RecordingBackend (GatewayConfig::HttpBackend), and the built-in locks under /locks/ with two
// rules: locks "orders-*" are bound to fence key "kv:{name}" (eager fencing), locks "delayed-*"
// have a 1 s lock-delay. `store` (the `store:` section) replaces the embedded store; then there
// is no lock-delay rule (etcd has none).
GatewayConfig LockGatewayConfig(std::uint16_t backend_port, const std::string& access_log,
                                const YAML::Node& store = YAML::Node());

// The lock API tests run against the embedded store with this fixture, and against etcd with
// tests/etcd/etcd_lock_fixture.h's subclass (the same test files, built twice).
class LockGatewayTest : public ::testing::Test {
 protected:
  void SetUp() override;
  // The `store:` section of the configuration (null for the embedded store).
  virtual YAML::Node StoreConfig() { return YAML::Node(); }
  bool SharedStore() { return !StoreConfig().IsNull(); }
  // Starts (or restarts) the gateway on the same data directory.
  void StartGateway();

  // POST /locks/NAME with {"ttl_ms": ttl, "wait_ms": wait}.
  Response Acquire(const std::string& name, std::int64_t ttl_ms, std::int64_t wait_ms = 0,
                   std::chrono::milliseconds client_timeout = std::chrono::seconds(10));
  Response Renew(const std::string& name, const std::string& owner_token);
  Response Release(const std::string& name, const std::string& owner_token);
  // POST /admin/locks/NAME/force-release with `body`.
  Response ForceRelease(const std::string& name, const std::string& body);
  // PUT /kv/ITEM/x with Fencing-Token: token.
  Response Write(const std::string& item, std::uint64_t token);
  Response Post(std::uint16_t port, const std::string& target, const std::string& body);
  // GET /admin/locks/NAME as JSON (null if the request failed).
  boost::json::value AdminLock(const std::string& name);

  TempDir dir_;
  RecordingBackend backend_;
  std::string config_path_;
  std::unique_ptr<GatewayInstance> gateway_;
};

// The body parsed as a JSON object; fails the test (and returns {}) if it is not one.
boost::json::object JsonBody(const Response& response);
std::string OwnerTokenOf(const Response& response);
std::uint64_t FencingTokenOf(const Response& response);

}  // namespace fencegate::integration
