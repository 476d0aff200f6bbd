#include "gateway/observability/relay_budget_metrics.h"

#include "gateway/observability/store_counters.h"

namespace fencegate::gateway {

namespace {

prometheus::Gauge* MakeGauge(prometheus::Registry& registry, const char* name, const char* help) {
  return &prometheus::BuildGauge().Name(name).Help(help).Register(registry).Add({});
}

}  // namespace

RelayBudgetMetrics::RelayBudgetMetrics(prometheus::Registry& registry,
                                       const adapters::RelayBudget& budget)
    : budget_(budget),
      limit_(MakeGauge(registry, "fencegate_relay_buffer_limit_bytes",
                       "limits.relay_buffer_memory: the most request bodies may reserve.")),
      reserved_(MakeGauge(registry, "fencegate_relay_buffer_reserved_bytes",
                          "Relay buffer memory reserved by request bodies in progress.")),
      refusals_(MakeStoreCounter(
          registry, "fencegate_relay_buffer_refusals_total",
          "Request bodies refused with 503 because limits.relay_buffer_memory was reached.")) {
  limit_->Set(static_cast<double>(budget_.limit()));
}

void RelayBudgetMetrics::Refresh() {
  std::lock_guard lock(mu_);
  reserved_->Set(static_cast<double>(budget_.reserved()));
  const std::uint64_t refusals = budget_.refusals();
  AddStoreDelta(refusals_, refusals, last_refusals_);
  last_refusals_ = refusals;
}

}  // namespace fencegate::gateway
