#pragma once

#include <cstdint>
#include <mutex>

#include <prometheus/counter.h>
#include <prometheus/registry.h>

#include "lockstore/etcd/etcd_fence_store.h"

namespace fencegate::gateway {

// The etcd store's counters as Prometheus counters, brought up to date when /metrics is read:
//   fencegate_store_round_trips_total    answered HTTP exchanges with etcd members
//   fencegate_store_failovers_total      switches to another member after a failed attempt
//   fencegate_store_errors_total         failed attempts (refused, timed out, 5xx)
//   fencegate_store_tls_failures_total   TLS handshakes with a member refused (CA, name, expiry)
//   fencegate_store_txn_conflicts_total  fence keys whose compare failed (written elsewhere)
//   fencegate_store_advances_total       fence advances handed to the store
//   fencegate_store_etcd_txns_total      etcd transactions that carried them (retries too);
//                                        advances / txns is the group-commit factor
class EtcdStoreMetrics {
 public:
  EtcdStoreMetrics(prometheus::Registry& registry, const lockstore::etcd::EtcdFenceStore& store);

  // Called by the admin thread before it renders the exposition.
  void Refresh();

 private:
  const lockstore::etcd::EtcdFenceStore& store_;
  std::mutex mu_;
  lockstore::etcd::EtcdFenceStore::Stats last_;
  prometheus::Counter* round_trips_;
  prometheus::Counter* failovers_;
  prometheus::Counter* errors_;
  prometheus::Counter* tls_failures_;
  prometheus::Counter* txn_conflicts_;
  prometheus::Counter* advances_;
  prometheus::Counter* txns_;
};

}  // namespace fencegate::gateway
