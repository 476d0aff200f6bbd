#pragma once

#include <cstdint>
#include <mutex>
#include <string>

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/registry.h>

namespace fencegate::gateway {

// The configuration reload metrics (README "Reloading"), named as Prometheus' own:
//   fencegate_config_reloads_total{result="success"|"failure"}
//   fencegate_config_last_reload_success_timestamp_seconds  (set at start too)
//   fencegate_config_info{hash="<config hash>"} 1           (one series: the loaded file's)
class ReloadMetrics {
 public:
  // Registers the metrics; the configuration loaded at start counts as the last success.
  ReloadMetrics(prometheus::Registry& registry, const std::string& config_hash,
                std::int64_t now_unix_ms);

  void CountSuccess(const std::string& config_hash, std::int64_t now_unix_ms);
  void CountFailure() { failures_->Increment(); }

 private:
  void SetHash(const std::string& config_hash);  // under mutex_

  std::mutex mutex_;  // reloads are serialized; this only keeps the hash series swap whole
  prometheus::Counter* successes_;
  prometheus::Counter* failures_;
  prometheus::Gauge* last_success_;
  prometheus::Family<prometheus::Gauge>* info_;
  prometheus::Gauge* info_series_ = nullptr;
};

}  // namespace fencegate::gateway
