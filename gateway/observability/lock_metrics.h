#pragma once

#include <prometheus/counter.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include "lockstore/locks/lock_table.h"

namespace fencegate::gateway {

// The built-in locks' Prometheus metrics, fed by the lock table's events. No label carries a
// lock name: cardinality stays fixed however many locks are used.
//   fencegate_lock_holders / fencegate_lock_waiters                 gauges
//   fencegate_lock_acquisitions_total, _contention_total            counters
//   fencegate_lock_wait_seconds                                     histogram (granted waits)
//   fencegate_lock_hold_seconds{end=released|expired|forced}        histogram (hold age)
//   fencegate_lock_renewals_total, _renewal_failures_total          counters
//   fencegate_lock_expiries_total, _forced_releases_total           counters
class LockMetrics final : public lockstore::LockObserver {
 public:
  explicit LockMetrics(prometheus::Registry& registry);

  void Acquired(std::chrono::nanoseconds waited) override;
  void Contended() override;
  void Released(std::chrono::nanoseconds held) override;
  void Expired(std::chrono::nanoseconds held) override;
  void ForceReleased(std::chrono::nanoseconds held) override;
  void Renewed() override;
  void RenewalFailed() override;
  void Holders(std::size_t holders, std::size_t waiters) override;

 private:
  prometheus::Gauge* holders_;
  prometheus::Gauge* waiters_;
  prometheus::Counter* acquisitions_;
  prometheus::Counter* contention_;
  prometheus::Histogram* wait_;
  prometheus::Histogram* hold_released_;
  prometheus::Histogram* hold_expired_;
  prometheus::Histogram* hold_forced_;
  prometheus::Counter* renewals_;
  prometheus::Counter* renewal_failures_;
  prometheus::Counter* expiries_;
  prometheus::Counter* forced_releases_;
};

}  // namespace fencegate::gateway
