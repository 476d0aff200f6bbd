#include "gateway/observability/backend_metrics.h"

#include <cstdint>
#include <utility>

namespace fencegate::gateway {

namespace {

prometheus::MetricFamily Family(const char* name, const char* help, prometheus::MetricType type) {
  prometheus::MetricFamily family;
  family.name = name;
  family.help = help;
  family.type = type;
  return family;
}

void AddSample(prometheus::MetricFamily& family,
               std::vector<prometheus::ClientMetric::Label> labels, double value) {
  prometheus::ClientMetric& metric = family.metric.emplace_back();
  metric.label = std::move(labels);
  if (family.type == prometheus::MetricType::Counter) {
    metric.counter.value = value;
  } else {
    metric.gauge.value = value;
  }
}

double Value(std::uint64_t count) { return static_cast<double>(count); }

}  // namespace

std::vector<prometheus::MetricFamily> BackendFamilies(const std::vector<BackendSample>& backends) {
  using prometheus::MetricType;
  auto healthy = Family("fencegate_backend_server_healthy",
                        "1 while the server takes requests (not ejected, health checks passing).",
                        MetricType::Gauge);
  auto in_flight = Family("fencegate_backend_in_flight", "Requests being forwarded to the server.",
                          MetricType::Gauge);
  auto ejections = Family("fencegate_backend_ejections_total",
                          "Times the server was ejected (connect failures or 5xx in a row).",
                          MetricType::Counter);
  auto checks = Family("fencegate_backend_health_checks_total",
                       "Active health checks of the server, by result.", MetricType::Counter);
  auto retries = Family("fencegate_backend_retries_total",
                        "Requests retried on another server because no byte reached the first, "
                        "by reason.",
                        MetricType::Counter);
  auto overload = Family("fencegate_backend_overload_refusals_total",
                         "Requests refused with 503 backend-overloaded, by the limit reached.",
                         MetricType::Counter);
  auto no_healthy = Family("fencegate_backend_no_healthy_total",
                           "Requests refused with 503 no-healthy-backend: no server was usable.",
                           MetricType::Counter);
  auto orphaned_locks = Family("fencegate_backend_orphaned_locks_released_total",
                               "webdav: locks of this gateway's own fenced writes that the server "
                               "kept after their UNLOCK (or whose LOCK answer was lost), released "
                               "when a write found them in its way.",
                               MetricType::Counter);
  auto conditions = Family("fencegate_backend_conditions",
                           "1 for the verdict of the backend's (bucket's) condition probes: "
                           "whether it honours the conditions fenced writes rely on.",
                           MetricType::Gauge);
  for (const BackendSample& backend : backends) {
    for (const adapters::ConditionReport& report : backend.conditions) {
      // Every verdict, so that an alert on {verdict="ignored"} == 1 sees it go back to 0.
      for (const adapters::ConditionVerdict verdict :
           {adapters::ConditionVerdict::kPending, adapters::ConditionVerdict::kEnforced,
            adapters::ConditionVerdict::kPartial, adapters::ConditionVerdict::kIgnored,
            adapters::ConditionVerdict::kUnreachable, adapters::ConditionVerdict::kTrusted}) {
        AddSample(conditions,
                  {{"backend", backend.backend},
                   {"scope", report.scope},
                   {"verdict", std::string(adapters::ConditionVerdictName(verdict))}},
                  report.verdict == verdict ? 1 : 0);
      }
    }
    for (const auto& server : backend.servers) {
      const prometheus::ClientMetric::Label b{"backend", backend.backend};
      const prometheus::ClientMetric::Label s{"server", server.url};
      AddSample(healthy, {b, s}, server.usable ? 1 : 0);
      AddSample(in_flight, {b, s}, Value(server.in_flight));
      AddSample(ejections, {b, s}, Value(server.ejections));
      AddSample(checks, {b, s, {"result", "passed"}}, Value(server.health_checks_passed));
      AddSample(checks, {b, s, {"result", "failed"}}, Value(server.health_checks_failed));
    }
    const prometheus::ClientMetric::Label b{"backend", backend.backend};
    AddSample(retries, {b, {"reason", "connect_failed"}},
              Value(backend.counters.retries_connect_failed));
    AddSample(retries, {b, {"reason", "tls_failed"}}, Value(backend.counters.retries_tls_failed));
    AddSample(overload, {b, {"limit", "max_connections"}},
              Value(backend.counters.overload_max_connections));
    AddSample(overload, {b, {"limit", "max_pending"}},
              Value(backend.counters.overload_max_pending));
    AddSample(no_healthy, {b}, Value(backend.counters.no_healthy_server));
    AddSample(orphaned_locks, {b}, Value(backend.counters.orphaned_locks_released));
  }
  std::vector<prometheus::MetricFamily> families;
  for (auto* family : {&healthy, &in_flight, &ejections, &checks, &retries, &overload, &no_healthy,
                       &orphaned_locks, &conditions}) {
    families.push_back(std::move(*family));
  }
  return families;
}

}  // namespace fencegate::gateway
