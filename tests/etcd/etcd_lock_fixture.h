#pragma once

#include <memory>
#include <string>

#include "tests/etcd/etcd_cluster.h"
#include "tests/support/lock_test_support.h"

namespace fencegate::etcdtest {

// The `store:` section for `cluster` (short timeouts: the cluster is on loopback).
inline YAML::Node EtcdStoreSection(const EtcdCluster& cluster) {
  YAML::Node store;
  store["kind"] = "etcd";
  store["prefix"] = "/gw/";
  store["request_timeout"] = "1s";
  store["operation_timeout"] = "5s";
  for (const std::string& endpoint : cluster.endpoints()) store["endpoints"].push_back(endpoint);
  return store;
}

// The lock API fixture with the locks in a real one-member etcd (started per test): the lock
// API tests of tests/integration run against it unchanged (built again into etcd_lock_api_test).
class EtcdLockGatewayTest : public integration::LockGatewayTest {
 protected:
  void SetUp() override {
    std::string error;
    cluster_ = EtcdCluster::Start(1, &error);
    ASSERT_NE(cluster_, nullptr) << error;
    LockGatewayTest::SetUp();
  }
  // The gateway stops while etcd still answers.
  void TearDown() override { gateway_.reset(); }
  YAML::Node StoreConfig() override { return EtcdStoreSection(*cluster_); }

  std::unique_ptr<EtcdCluster> cluster_;
};

}  // namespace fencegate::etcdtest
