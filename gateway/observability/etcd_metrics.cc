#include "gateway/observability/etcd_metrics.h"

#include "gateway/observability/store_counters.h"

namespace fencegate::gateway {

EtcdStoreMetrics::EtcdStoreMetrics(prometheus::Registry& registry,
                                   const lockstore::etcd::EtcdFenceStore& store)
    : store_(store),
      round_trips_(MakeStoreCounter(registry, "fencegate_store_round_trips_total",
                                    "HTTP exchanges with etcd members that got an answer.")),
      failovers_(MakeStoreCounter(registry, "fencegate_store_failovers_total",
                                  "Switches to another etcd member after a failed attempt.")),
      errors_(MakeStoreCounter(registry, "fencegate_store_errors_total",
                               "Failed attempts to reach etcd (refused, timed out, 5xx).")),
      tls_failures_(MakeStoreCounter(registry, "fencegate_store_tls_failures_total",
                                     "TLS handshakes with etcd members that failed (certificate, "
                                     "name, CA).")),
      txn_conflicts_(MakeStoreCounter(registry, "fencegate_store_txn_conflicts_total",
                                      "Fence keys whose etcd compare failed (written by "
                                      "another replica or a repair).")),
      advances_(MakeStoreCounter(registry, "fencegate_store_advances_total",
                                 "Fence advances handed to the etcd store.")),
      txns_(MakeStoreCounter(registry, "fencegate_store_etcd_txns_total",
                             "etcd transactions that carried fence advances (group commit), "
                             "retries included.")) {}

void EtcdStoreMetrics::Refresh() {
  std::lock_guard lock(mu_);
  const lockstore::etcd::EtcdFenceStore::Stats now = store_.stats();
  AddStoreDelta(round_trips_, now.round_trips, last_.round_trips);
  AddStoreDelta(failovers_, now.failovers, last_.failovers);
  AddStoreDelta(errors_, now.errors, last_.errors);
  AddStoreDelta(tls_failures_, now.tls_failures, last_.tls_failures);
  AddStoreDelta(txn_conflicts_, now.txn_conflicts, last_.txn_conflicts);
  AddStoreDelta(advances_, now.advance_requests, last_.advance_requests);
  AddStoreDelta(txns_, now.advance_txns, last_.advance_txns);
  last_ = now;
}

}  // namespace fencegate::gateway
