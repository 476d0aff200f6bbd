#pragma once

#include <cstdint>
#include <mutex>

#include <prometheus/counter.h>
#include <prometheus/gauge.h>
#include <prometheus/registry.h>

#include "resource_adapters/relay_budget.h"

namespace fencegate::gateway {

// limits.relay_buffer_memory as Prometheus metrics, brought up to date when /metrics is read:
//   fencegate_relay_buffer_limit_bytes       the limit
//   fencegate_relay_buffer_reserved_bytes    what request bodies in progress reserved of it
//   fencegate_relay_buffer_refusals_total    bodies refused with 503 because it was reached
class RelayBudgetMetrics {
 public:
  RelayBudgetMetrics(prometheus::Registry& registry, const adapters::RelayBudget& budget);

  // Called by the admin thread before it renders the exposition.
  void Refresh();

 private:
  const adapters::RelayBudget& budget_;
  std::mutex mu_;
  std::uint64_t last_refusals_ = 0;
  prometheus::Gauge* limit_;
  prometheus::Gauge* reserved_;
  prometheus::Counter* refusals_;
};

}  // namespace fencegate::gateway
