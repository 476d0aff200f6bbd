#include "gateway/admin/admin_backends.h"

#include "gateway/admin/admin_json.h"
#include "resource_adapters/adapter.h"
#include "resource_adapters/transport/condition_book.h"

// The parts of admin_backends.h that read a generation's backends (their UpstreamServers).

namespace fencegate::gateway {
namespace json = boost::json;
using adapters::ConditionBook;
using adapters::ConditionReport;
using adapters::ConditionVerdict;
using adapters::UpstreamServers;

namespace {

json::object ConditionReportJson(const ConditionReport& report) {
  json::array probes;
  for (const adapters::ConditionProbeResult& probe : report.probes) {
    json::object entry{{"name", probe.name},
                       {"holds", probe.holds},
                       {"required", probe.required},
                       {"detail", probe.detail}};
    if (!probe.earlier_failure.empty()) entry["earlier_failure"] = probe.earlier_failure;
    probes.push_back(std::move(entry));
  }
  return {{"scope", report.scope},
          {"verdict", adapters::ConditionVerdictName(report.verdict)},
          {"probes", std::move(probes)},
          {"error", report.error.empty() ? json::value(nullptr) : json::value(report.error)},
          {"checked_at", Rfc3339OrNull(report.checked_unix_ms)}};
}

}  // namespace

json::value ConditionsJson(const ConditionBook* book) {
  if (book == nullptr) return nullptr;
  const bool verify = book->options().policy == adapters::ConditionProbeOptions::Policy::kVerify;
  json::array reports;
  for (const ConditionReport& report : book->Reports()) {
    reports.push_back(ConditionReportJson(report));
  }
  return json::object{{"policy", verify ? "verify" : "trust"},
                      {"probe_prefix", book->options().prefix},
                      {"probe_interval_ms", book->options().interval.count()},
                      {"reports", std::move(reports)}};
}

json::object BackendJson(std::string_view name, std::string_view kind,
                         const UpstreamServers* servers) {
  if (servers == nullptr) {
    return {{"name", name}, {"kind", kind}, {"policy", nullptr}, {"servers", json::array{}}};
  }
  return BackendJson(name, kind, servers->options(), servers->Snapshot(), servers->counters());
}

json::object BackendsJson(const ConfigGeneration& generation, std::string_view only) {
  json::array backends;
  for (std::size_t i = 0; i < generation.backend_names.size(); ++i) {
    const std::string& name = generation.backend_names[i];
    if (!only.empty() && name != only) continue;
    const auto config = generation.config.backends.find(name);
    const std::string kind = config != generation.config.backends.end() ? config->second.kind : "";
    const adapters::AdapterFactory& factory = *generation.backend_factories[i];
    const std::shared_ptr<UpstreamServers> servers = factory.upstream_servers();
    json::object entry = BackendJson(name, kind, servers.get());
    entry["conditions"] = ConditionsJson(factory.condition_book().get());
    backends.push_back(std::move(entry));
  }
  return {{"backends", std::move(backends)}};
}

std::vector<BackendSample> BackendSamples(const ConfigGeneration& generation) {
  std::vector<BackendSample> samples;
  for (std::size_t i = 0; i < generation.backend_names.size(); ++i) {
    const std::shared_ptr<UpstreamServers> servers =
        generation.backend_factories[i]->upstream_servers();
    if (servers == nullptr) continue;
    const std::shared_ptr<const ConditionBook> book =
        generation.backend_factories[i]->condition_book();
    samples.push_back({generation.backend_names[i], servers->Snapshot(), servers->counters(),
                       book ? book->Reports() : std::vector<ConditionReport>{}});
  }
  return samples;
}

std::vector<std::string> RequiredRoutesWithoutServer(const ConfigGeneration& generation) {
  return RequiredRoutesWithoutServer(generation.routes, [&](std::size_t backend) {
    const std::shared_ptr<UpstreamServers> servers =
        generation.backend_factories[backend]->upstream_servers();
    return servers == nullptr || servers->AnyUsable();
  });
}

std::vector<UnenforcedConditions> BackendsIgnoringConditions(const ConfigGeneration& generation) {
  std::vector<UnenforcedConditions> out;
  for (std::size_t i = 0; i < generation.backend_names.size(); ++i) {
    const std::shared_ptr<const ConditionBook> book =
        generation.backend_factories[i]->condition_book();
    if (book == nullptr) continue;
    for (const ConditionReport& report : book->Reports()) {
      if (report.verdict != ConditionVerdict::kIgnored) continue;
      out.push_back({generation.backend_names[i], report.scope, report.FailedProbesText()});
    }
  }
  return out;
}

bool AnyRouteRequired(const ConfigGeneration& generation) {
  for (const RouteConfig& route : generation.config.routes) {
    if (route.required) return true;
  }
  return false;
}

}  // namespace fencegate::gateway
