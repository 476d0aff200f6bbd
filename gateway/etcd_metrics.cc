#include "gateway/etcd_metrics.h"

namespace fencegate::gateway {
namespace {

prometheus::Counter* MakeCounter(prometheus::Registry& registry, const char* name,
                                 const char* help) {
  return &prometheus::BuildCounter().Name(name).Help(help).Register(registry).Add({});
}

void Bump(prometheus::Counter* counter, std::uint64_t now, std::uint64_t before) {
  if (now > before) counter->Increment(static_cast<double>(now - before));
}

}  // namespace

EtcdStoreMetrics::EtcdStoreMetrics(prometheus::Registry& registry,
                                   const lockstore::etcd::EtcdFenceStore& store)
    : store_(store),
      round_trips_(MakeCounter(registry, "fencegate_store_round_trips_total",
                               "HTTP exchanges with etcd members that got an answer.")),
      failovers_(MakeCounter(registry, "fencegate_store_failovers_total",
                             "Switches to another etcd member after a failed attempt.")),
      errors_(MakeCounter(registry, "fencegate_store_errors_total",
                          "Failed attempts to reach etcd (refused, timed out, 5xx).")),
      tls_failures_(MakeCounter(registry, "fencegate_store_tls_failures_total",
                                "TLS handshakes with etcd members that failed (certificate, "
                                "name, CA).")),
      txn_conflicts_(MakeCounter(registry, "fencegate_store_txn_conflicts_total",
                                 "Fence advances whose etcd compare failed.")) {}

void EtcdStoreMetrics::Refresh() {
  std::lock_guard lock(mu_);
  const lockstore::etcd::EtcdFenceStore::Stats now = store_.stats();
  Bump(round_trips_, now.round_trips, last_.round_trips);
  Bump(failovers_, now.failovers, last_.failovers);
  Bump(errors_, now.errors, last_.errors);
  Bump(tls_failures_, now.tls_failures, last_.tls_failures);
  Bump(txn_conflicts_, now.txn_conflicts, last_.txn_conflicts);
  last_ = now;
}

}  // namespace fencegate::gateway
