#include "gateway/observability/lock_metrics.h"

namespace fencegate::gateway {
namespace {

// Seconds; waits and holds run from milliseconds to the longest TTL.
const prometheus::Histogram::BucketBoundaries kLockBuckets = {
    0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300, 900, 3600};

prometheus::Counter* Counter(prometheus::Registry& registry, const std::string& name,
                             const std::string& help) {
  return &prometheus::BuildCounter().Name(name).Help(help).Register(registry).Add({});
}

prometheus::Gauge* Gauge(prometheus::Registry& registry, const std::string& name,
                         const std::string& help) {
  return &prometheus::BuildGauge().Name(name).Help(help).Register(registry).Add({});
}

double Seconds(std::chrono::nanoseconds d) { return std::chrono::duration<double>(d).count(); }

}  // namespace

LockMetrics::LockMetrics(prometheus::Registry& registry)
    : holders_(Gauge(registry, "fencegate_lock_holders", "Built-in locks currently held.")),
      waiters_(Gauge(registry, "fencegate_lock_waiters",
                     "Acquires waiting (long-poll) for a built-in lock.")),
      acquisitions_(Counter(registry, "fencegate_lock_acquisitions_total",
                            "Built-in lock grants (each issued a new fencing token).")),
      contention_(Counter(registry, "fencegate_lock_contention_total",
                          "Acquires that found the lock held or in lock-delay.")),
      renewals_(Counter(registry, "fencegate_lock_renewals_total", "Lease renewals granted.")),
      renewal_failures_(Counter(registry, "fencegate_lock_renewal_failures_total",
                                "Renewals refused: the lease was already lost.")),
      expiries_(Counter(registry, "fencegate_lock_expiries_total",
                        "Leases that ran out without release.")),
      forced_releases_(Counter(registry, "fencegate_lock_forced_releases_total",
                               "Administrative forced releases.")) {
  wait_ = &prometheus::BuildHistogram()
               .Name("fencegate_lock_wait_seconds")
               .Help("Time from acquire to grant, for granted acquires.")
               .Register(registry)
               .Add({}, kLockBuckets);
  auto& hold = prometheus::BuildHistogram()
                   .Name("fencegate_lock_hold_seconds")
                   .Help("How long a lock was held, by how the hold ended.")
                   .Register(registry);
  hold_released_ = &hold.Add({{"end", "released"}}, kLockBuckets);
  hold_expired_ = &hold.Add({{"end", "expired"}}, kLockBuckets);
  hold_forced_ = &hold.Add({{"end", "forced"}}, kLockBuckets);
}

void LockMetrics::Acquired(std::chrono::nanoseconds waited) {
  acquisitions_->Increment();
  wait_->Observe(Seconds(waited));
}
void LockMetrics::Contended() { contention_->Increment(); }
void LockMetrics::Released(std::chrono::nanoseconds held) {
  hold_released_->Observe(Seconds(held));
}
void LockMetrics::Expired(std::chrono::nanoseconds held) {
  expiries_->Increment();
  hold_expired_->Observe(Seconds(held));
}
void LockMetrics::ForceReleased(std::chrono::nanoseconds held) {
  forced_releases_->Increment();
  hold_forced_->Observe(Seconds(held));
}
void LockMetrics::Renewed() { renewals_->Increment(); }
void LockMetrics::RenewalFailed() { renewal_failures_->Increment(); }
void LockMetrics::Holders(std::size_t holders, std::size_t waiters) {
  holders_->Set(static_cast<double>(holders));
  waiters_->Set(static_cast<double>(waiters));
}

}  // namespace fencegate::gateway
