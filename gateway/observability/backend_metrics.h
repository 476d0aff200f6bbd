#pragma once

#include <string>
#include <vector>

#include <prometheus/metric_family.h>

#include "resource_adapters/transport/condition_book.h"
#include "resource_adapters/transport/upstream_servers.h"

namespace fencegate::gateway {

// What one backend's UpstreamServers reported at a scrape.
struct BackendSample {
  std::string backend;  // the configured name: the `backend` label
  std::vector<adapters::UpstreamServers::ServerSnapshot> servers;
  adapters::UpstreamServers::Counters counters;
  std::vector<adapters::ConditionReport> conditions;  // empty: the kind does not probe
};

// The backends' metrics, computed when /metrics is scraped from what each backend's
// UpstreamServers counts (nothing is counted twice on the request path):
//   fencegate_backend_server_healthy{backend,server}          1 usable, 0 not
//   fencegate_backend_in_flight{backend,server}               requests being forwarded
//   fencegate_backend_ejections_total{backend,server}
//   fencegate_backend_health_checks_total{backend,server,result=passed|failed}
//   fencegate_backend_retries_total{backend,reason=connect_failed|tls_failed}
//   fencegate_backend_overload_refusals_total{backend,limit=max_connections|max_pending}
//   fencegate_backend_no_healthy_total{backend}
//   fencegate_backend_conditions{backend,scope,verdict}       1 for the scope's current verdict,
//                                                             0 for the others (s3, webdav)
// The `server` label is the configured url, so the series are bounded by the configuration. A
// backend rebuilt by a reload starts its counters again from zero (a counter reset, which
// rate() handles); a removed one's series go.
std::vector<prometheus::MetricFamily> BackendFamilies(const std::vector<BackendSample>& backends);

}  // namespace fencegate::gateway
