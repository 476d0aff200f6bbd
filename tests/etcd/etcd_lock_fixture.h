#pragma once

#include <memory>
#include <string>

#include "tests/etcd/etcd_cluster.h"
#include "tests/support/lock_test_support.h"

namespace fencegate::etcdtest {

// The `store:` section for `cluster` (short timeouts: the cluster is on loopback).
inline std::string EtcdStoreSection(const EtcdCluster& cluster) {
  std::string store =
      "store:\n  kind: etcd\n  prefix: /gw/\n  request_timeout: 1s\n  operation_timeout: 5s\n"
      "  endpoints:\n";
  for (const std::string& endpoint : cluster.endpoints()) store += "    - " + endpoint + "\n";
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
  std::string StoreConfig() override { return EtcdStoreSection(*cluster_); }

  std::unique_ptr<EtcdCluster> cluster_;
};

}  // namespace fencegate::etcdtest
