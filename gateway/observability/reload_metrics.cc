#include "gateway/observability/reload_metrics.h"

namespace fencegate::gateway {

ReloadMetrics::ReloadMetrics(prometheus::Registry& registry, const std::string& config_hash,
                             std::int64_t now_unix_ms) {
  auto& reloads = prometheus::BuildCounter()
                      .Name("fencegate_config_reloads_total")
                      .Help("Configuration reloads (SIGHUP, POST /admin/reload), by result.")
                      .Register(registry);
  successes_ = &reloads.Add({{"result", "success"}});
  failures_ = &reloads.Add({{"result", "failure"}});
  last_success_ = &prometheus::BuildGauge()
                       .Name("fencegate_config_last_reload_success_timestamp_seconds")
                       .Help("When the configuration in force was loaded (start or reload).")
                       .Register(registry)
                       .Add({});
  info_ = &prometheus::BuildGauge()
               .Name("fencegate_config_info")
               .Help("The configuration in force: hash is the start of its file's SHA-256.")
               .Register(registry);
  std::lock_guard lock(mutex_);
  SetHash(config_hash);
  last_success_->Set(static_cast<double>(now_unix_ms) / 1000.0);
}

void ReloadMetrics::CountSuccess(const std::string& config_hash, std::int64_t now_unix_ms) {
  std::lock_guard lock(mutex_);
  successes_->Increment();
  last_success_->Set(static_cast<double>(now_unix_ms) / 1000.0);
  SetHash(config_hash);
}

void ReloadMetrics::SetHash(const std::string& config_hash) {
  prometheus::Gauge* series = &info_->Add({{"hash", config_hash}});
  if (info_series_ != nullptr && info_series_ != series) info_->Remove(info_series_);
  info_series_ = series;
  info_series_->Set(1);
}

}  // namespace fencegate::gateway
