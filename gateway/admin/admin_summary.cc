#include "gateway/admin/admin_summary.h"

#include <optional>

#include <boost/json.hpp>

#include "gateway/admin/admin_backends.h"
#include "gateway/admin/admin_request.h"
#include "gateway/cluster/replica_cluster.h"
#include "gateway/http/time_format.h"
#include "gateway/observability/rocksdb_store_metrics.h"

namespace fencegate::gateway {
namespace json = boost::json;
namespace {

json::object SeriesJson(const TrafficSeries& series) {
  json::array routes;
  for (const TrafficSeries::RouteSeconds& route : series.PerSecond()) {
    json::array admitted(route.admitted.begin(), route.admitted.end());
    json::array refused(route.refused.begin(), route.refused.end());
    routes.push_back({{"route", route.route},
                      {"admitted", std::move(admitted)},
                      {"refused", std::move(refused)}});
  }
  return {{"interval_seconds", 1},
          {"end", Rfc3339OrNull(series.last_sample_unix_ms())},
          {"routes", std::move(routes)}};
}

json::object WindowJson(const TrafficSeries::Window& window) {
  json::array admitted;
  for (const auto& [route, count] : window.admitted) {
    admitted.push_back({{"route", route}, {"count", count}});
  }
  json::array refusals;
  for (const TrafficSeries::RefusalCount& refusal : window.refusals) {
    refusals.push_back({{"route", refusal.route},
                        {"reason", RejectionReasonName(refusal.reason)},
                        {"count", refusal.count}});
  }
  return {{"admitted", std::move(admitted)}, {"refusals", std::move(refusals)}};
}

json::array TopJson(const SpaceSavingTopK& top, std::string_view key_name) {
  json::array out;
  for (const SpaceSavingTopK::Entry& entry : top.Top(kSummaryTopLength)) {
    out.push_back({{key_name, entry.key}, {"refusals", entry.count}});
  }
  return out;
}

// Each backend with how many servers it has and how many are healthy, from /admin/backends.
json::array BackendHealthJson(const ConfigGeneration& generation) {
  json::array out;
  json::object all = BackendsJson(generation, "");
  for (const json::value& backend : all["backends"].as_array()) {
    const json::object& entry = backend.as_object();
    std::int64_t servers = 0;
    std::int64_t healthy = 0;
    if (const json::value* list = entry.if_contains("servers"); list && list->is_array()) {
      for (const json::value& server : list->as_array()) {
        ++servers;
        const json::value* state = server.as_object().if_contains("state");
        if (state != nullptr && state->is_string() && state->as_string() == "healthy") ++healthy;
      }
    }
    out.push_back({{"backend", entry.at("name")}, {"servers", servers}, {"healthy", healthy}});
  }
  return out;
}

json::value LocksJson(const GatewayContext& context) {
  if (context.lock_table == nullptr) return nullptr;
  std::uint64_t held = 0;
  std::uint64_t waiters = 0;
  for (const lockstore::LockView& view : context.lock_table->List()) {
    if (view.held) ++held;
    waiters += view.waiters;
  }
  return json::object{{"held", held}, {"waiters", waiters}};
}

}  // namespace

void HandleSummary(const GatewayContext& context, const ConfigGeneration& generation,
                   std::string_view query, std::string_view path, AdminResponse* response) {
  std::string error;
  if (!AdminQuery::Parse(query, {}, &error)) {
    SetProblem(Refusal::kBadRequest, error, path, response);
    return;
  }
  json::object body;
  body["generated_at"] = Rfc3339OrNull(NowUnixMs());
  body["build"] = {{"version", FENCEGATE_VERSION},
                   {"started_at", Rfc3339OrNull(context.started_at_ms)}};
  if (context.traffic_series != nullptr) {
    body["series"] = SeriesJson(*context.traffic_series);
    body["last_minute"] = WindowJson(context.traffic_series->LastMinute());
    body["last_hour"] = WindowJson(context.traffic_series->LastHour());
  }
  if (context.refusal_tops != nullptr) {
    body["top_fence_keys"] = TopJson(context.refusal_tops->fence_keys(), "fence_key");
    body["top_clients"] = TopJson(context.refusal_tops->clients(), "client");
  }
  // The embedded store's synced writes over the last minute (bucket resolution); null on etcd,
  // whose consensus latency the etcd metrics show, and in a minute without a sync.
  json::value sync_p99_ms = nullptr;
  if (context.rocksdb_metrics != nullptr) {
    if (const std::optional<double> p99 = context.rocksdb_metrics->SyncP99Seconds()) {
      sync_p99_ms = *p99 * 1000;
    }
  }
  body["store"] = {{"kind", generation.config.store.kind},
                   {"ready", context.store->Ready()},
                   {"sync_p99_ms", sync_p99_ms}};
  body["cluster"] =
      context.cluster != nullptr ? json::value(context.cluster->AdminView()) : nullptr;
  body["backends"] = BackendHealthJson(generation);
  body["locks"] = LocksJson(context);
  SetJson(body, response);
}

}  // namespace fencegate::gateway
