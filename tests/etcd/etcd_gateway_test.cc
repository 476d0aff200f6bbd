// The fencegate binary with `store: {kind: etcd}` against a real 3-member etcd cluster and a
// recording HTTP backend: fences live in etcd (they survive the gateway and are shared by
// every gateway on the prefix), and without a quorum writes that need the store get 503.
#include <gtest/gtest.h>

#include <chrono>

#include "tests/etcd/etcd_cluster.h"
#include "tests/support/admin_client.h"
#include "tests/support/eventually.h"
#include "tests/support/gateway_config.h"
#include "tests/support/gateway_instance.h"
#include "tests/support/http_client.h"
#include "tests/support/recording_backend.h"
#include "tests/support/temp_dir.h"

namespace fencegate::etcdtest {
namespace {

using integration::Fetch;
using integration::GatewayInstance;
using integration::MakeRequest;
using integration::http::verb;

std::string EtcdConfig(const EtcdCluster& cluster, std::uint16_t backend_port,
                       const std::string& log_path) {
  auto config = integration::GatewayConfig::HttpBackend(backend_port, log_path);
  YAML::Node store = config["store"];
  store["kind"] = "etcd";
  store["prefix"] = "/gw/";
  store["request_timeout"] = "300ms";
  store["operation_timeout"] = "1500ms";
  for (const std::string& endpoint : cluster.endpoints()) store["endpoints"].push_back(endpoint);
  config["locks"]["enabled"] = false;
  return config.Yaml();
}

unsigned Put(std::uint16_t port, const std::string& path, const std::string& token,
             std::string* body = nullptr) {
  std::string error;
  const auto response =
      Fetch(port, MakeRequest(verb::put, path, {{"Fencing-Token", token}}, "v"), &error);
  if (!response) {
    ADD_FAILURE() << error;
    return 0;
  }
  if (body != nullptr) *body = response->body();
  return response->result_int();
}

class EtcdGatewayTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string error;
    cluster_ = EtcdCluster::Start(3, &error);
    ASSERT_NE(cluster_, nullptr) << error;
    config_ = dir_.WriteFile("fencegate.yaml",
                             EtcdConfig(*cluster_, backend_.port(), dir_.Join("access.log")));
  }

  std::unique_ptr<GatewayInstance> StartGateway(const std::string& name) {
    std::string error;
    auto gateway = GatewayInstance::Start(config_, dir_.Join(name), &error);
    EXPECT_NE(gateway, nullptr) << error;
    return gateway;
  }

  integration::TempDir dir_;
  integration::RecordingBackend backend_;
  std::unique_ptr<EtcdCluster> cluster_;
  std::string config_;
};

TEST_F(EtcdGatewayTest, FencesLiveInEtcdAcrossGatewayRestarts) {
  auto gateway = StartGateway("a");
  ASSERT_NE(gateway, nullptr);
  EXPECT_EQ(Put(gateway->traffic_port(), "/kv/doc/x", "5"), 200u);
  EXPECT_EQ(Put(gateway->traffic_port(), "/kv/doc/x", "4"), 409u);
  gateway->process().Stop(std::chrono::seconds(10));
  gateway.reset();

  // A fresh gateway with an empty data dir knows the fence only from etcd.
  auto second = StartGateway("b");
  ASSERT_NE(second, nullptr);
  std::string body;
  EXPECT_EQ(Put(second->traffic_port(), "/kv/doc/x", "4", &body), 409u);
  EXPECT_NE(body.find("\"highest_token\":5"), std::string::npos) << body;
  EXPECT_EQ(Put(second->traffic_port(), "/kv/doc/x", "6"), 200u);
  EXPECT_EQ(backend_.Requests().size(), 2u);  // only the admitted writes reached the backend

  const std::string metrics = integration::FetchMetricsText(second->admin_port());
  EXPECT_GT(integration::MetricValue(metrics, "fencegate_store_round_trips_total", "").value_or(0),
            0);
  // The advance to 6 went to etcd in a transaction of its own (nothing else was in flight).
  EXPECT_GE(integration::MetricValue(metrics, "fencegate_store_advances_total", "").value_or(0), 1);
  EXPECT_GE(integration::MetricValue(metrics, "fencegate_store_etcd_txns_total", "").value_or(0),
            1);
  const auto ready = integration::FetchAdminJson(second->admin_port(), "/readyz");
  ASSERT_TRUE(ready.has_value());
  EXPECT_TRUE(ready->at("store_ready").as_bool());
}

TEST_F(EtcdGatewayTest, NoQuorumRefusesAdvancesWith503AndReadyzSaysSo) {
  auto gateway = StartGateway("a");
  ASSERT_NE(gateway, nullptr);
  ASSERT_EQ(Put(gateway->traffic_port(), "/kv/q/x", "3"), 200u);
  cluster_->Kill(1);
  cluster_->Kill(2);
  std::string body;
  EXPECT_EQ(Put(gateway->traffic_port(), "/kv/q/x", "4", &body), 503u);
  EXPECT_NE(body.find("store-error"), std::string::npos) << body;
  EXPECT_EQ(Put(gateway->traffic_port(), "/kv/new/x", "1", &body), 503u);
  EXPECT_EQ(backend_.Requests().size(), 1u);  // nothing was forwarded without the store

  std::string error;
  std::optional<integration::Response> ready;
  integration::Eventually(  // the probe notices within its interval
      [&] {
        ready = Fetch(gateway->admin_port(), MakeRequest(verb::get, "/readyz"), &error);
        return ready && ready->result_int() == 503;
      },
      std::chrono::seconds(10));
  ASSERT_TRUE(ready.has_value()) << error;
  EXPECT_EQ(ready->result_int(), 503u);
  EXPECT_NE(ready->body().find("\"store_ready\":false"), std::string::npos) << ready->body();
  const std::string metrics = integration::FetchMetricsText(gateway->admin_port());
  EXPECT_GT(integration::MetricValue(metrics, "fencegate_store_failovers_total", "").value_or(0),
            0);
}

}  // namespace
}  // namespace fencegate::etcdtest
