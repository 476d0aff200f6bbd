#include <set>
#include <string_view>

#include "gateway/config/config_sections.h"

// A networked backend's servers and how requests spread over them (README "Backends with several
// servers", docs/UPSTREAMS.md): `url` (one server) or `servers` (several), `policy`,
// `health_check`, `outlier`, `limits` and `resolve_interval`. They fill
// adapters::UpstreamOptions::balancing.

namespace fencegate::gateway::config_reading {

namespace {

// One server's address from its url; false (after reporting at `node`) when it is not one.
bool ReadServerUrl(Reader& reader, const YAML::Node& node, const std::string& path,
                   adapters::ServerAddress* out) {
  std::string url;
  reader.String(node, path, &url);
  if (!node.IsScalar()) return false;
  adapters::UpstreamOptions parsed;
  const std::string error = url.empty() ? "must not be empty" : ParseBackendUrl(url, &parsed);
  if (!error.empty()) {
    reader.sink()->Add(node, path, error);
    return false;
  }
  out->url = url;
  out->host = parsed.host;
  out->port = parsed.port;
  out->tls = parsed.tls;
  return true;
}

// An item of `servers`: "URL" or {url: URL, weight: N}.
bool ReadServer(Reader& reader, const YAML::Node& node, const std::string& path,
                adapters::ServerAddress* out) {
  if (!node.IsMap()) return ReadServerUrl(reader, node, path, out);
  if (!reader.ExpectMapping(node, path, {"url", "weight"})) return false;
  if (node["weight"]) reader.Count(node["weight"], Child(path, "weight"), 1, 1000, &out->weight);
  if (!node["url"]) {
    reader.sink()->Add(node, Child(path, "url"), "required for each server");
    return false;
  }
  return ReadServerUrl(reader, node["url"], Child(path, "url"), out);
}

// `servers`: every item read, all of one scheme (one TLS setting applies to all), no url twice
// (the url is the server's name in metrics and /admin/backends).
void ReadServers(Reader& reader, const YAML::Node& node, const std::string& path,
                 std::vector<adapters::ServerAddress>* out) {
  if (!node.IsSequence() || node.size() == 0) {
    reader.sink()->Add(node, path,
                       "expected a non-empty list of servers (a url, or {url, weight} each)");
    return;
  }
  std::set<std::string> urls;
  for (std::size_t i = 0; i < node.size(); ++i) {
    const std::string item_path = path + "[" + std::to_string(i) + "]";
    adapters::ServerAddress server;
    if (!ReadServer(reader, node[i], item_path, &server)) continue;
    const YAML::Node& at = node[i].IsMap() ? node[i]["url"] : node[i];
    if (!urls.insert(server.url).second) {
      reader.sink()->Add(at, item_path, "the server " + Quote(server.url) + " is listed twice");
      continue;
    }
    if (!out->empty() && out->front().tls != server.tls) {
      reader.sink()->Add(at, item_path,
                         "all servers of a backend use one scheme (the tls_* keys apply to all); "
                         "the first is " +
                             std::string(out->front().tls ? "https" : "http"));
      continue;
    }
    out->push_back(std::move(server));
  }
}

// `expected_status`: 200, or a range "200-399".
void ReadExpectedStatus(Reader& reader, const YAML::Node& node, const std::string& path,
                        adapters::HealthCheckOptions* out) {
  std::string text;
  if (!reader.Scalar(node, path, "a status such as 200 or a range such as 200-399", &text)) return;
  const std::size_t dash = text.find('-');
  std::uint64_t low = 0, high = 0;
  const bool parsed = dash == std::string::npos
                          ? ParseDecimal(text, &low) && (high = low, true)
                          : ParseDecimal(std::string_view(text).substr(0, dash), &low) &&
                                ParseDecimal(std::string_view(text).substr(dash + 1), &high);
  if (!parsed || low < 100 || high > 599 || low > high) {
    reader.sink()->Add(node, path,
                       "expected a status (100 to 599) such as 200 or a range such as 200-399, "
                       "got " +
                           Quote(text));
    return;
  }
  out->expected_status_min = static_cast<unsigned>(low);
  out->expected_status_max = static_cast<unsigned>(high);
}

void ReadHealthCheck(Reader& reader, const YAML::Node& node, const std::string& path,
                     adapters::HealthCheckOptions* out) {
  if (!reader.ExpectMapping(node, path,
                            {"path", "interval", "timeout", "healthy_threshold",
                             "unhealthy_threshold", "expected_status"}))
    return;
  if (node["path"]) {
    reader.String(node["path"], Child(path, "path"), &out->path);
    if (node["path"].IsScalar() && (out->path.empty() || out->path.front() != '/' ||
                                    out->path.find_first_of(" \t\r\n#") != std::string::npos)) {
      reader.sink()->Add(
          node["path"], Child(path, "path"),
          "must be a request target starting with '/' (no spaces or '#'), got " + Quote(out->path));
    }
  }
  if (node["interval"])
    reader.Duration(node["interval"], Child(path, "interval"), false, &out->interval);
  if (node["timeout"])
    reader.Duration(node["timeout"], Child(path, "timeout"), false, &out->timeout);
  if (node["healthy_threshold"]) {
    reader.Count(node["healthy_threshold"], Child(path, "healthy_threshold"), 1, 1000,
                 &out->healthy_threshold);
  }
  if (node["unhealthy_threshold"]) {
    reader.Count(node["unhealthy_threshold"], Child(path, "unhealthy_threshold"), 1, 1000,
                 &out->unhealthy_threshold);
  }
  if (node["expected_status"])
    ReadExpectedStatus(reader, node["expected_status"], Child(path, "expected_status"), out);
}

void ReadOutlier(Reader& reader, const YAML::Node& node, const std::string& path,
                 adapters::OutlierOptions* out) {
  if (!reader.ExpectMapping(node, path,
                            {"consecutive_failures", "base_ejection_time", "max_ejection_time",
                             "max_ejected_percent"}))
    return;
  if (node["consecutive_failures"]) {
    reader.Count(node["consecutive_failures"], Child(path, "consecutive_failures"), 1, 100'000,
                 &out->consecutive_failures);
  }
  if (node["base_ejection_time"]) {
    reader.Duration(node["base_ejection_time"], Child(path, "base_ejection_time"), false,
                    &out->base_ejection_time);
  }
  if (node["max_ejection_time"]) {
    reader.Duration(node["max_ejection_time"], Child(path, "max_ejection_time"), false,
                    &out->max_ejection_time);
  }
  if (out->max_ejection_time < out->base_ejection_time) {
    const YAML::Node& at = node["max_ejection_time"] ? node["max_ejection_time"] : node;
    reader.sink()->Add(at, Child(path, "max_ejection_time"),
                       "must not be shorter than base_ejection_time");
  }
  if (node["max_ejected_percent"]) {
    reader.Count(node["max_ejected_percent"], Child(path, "max_ejected_percent"), 0, 100,
                 &out->max_ejected_percent);
  }
}

void ReadBackendLimits(Reader& reader, const YAML::Node& node, const std::string& path,
                       adapters::BackendLimits* out) {
  if (!reader.ExpectMapping(node, path, {"max_connections", "max_pending"})) return;
  if (node["max_connections"]) {
    reader.Count(node["max_connections"], Child(path, "max_connections"), 0, 10'000'000,
                 &out->max_connections);
  }
  if (node["max_pending"]) {
    reader.Count(node["max_pending"], Child(path, "max_pending"), 0, 10'000'000, &out->max_pending);
  }
}

}  // namespace

void ReadBackendServers(Reader& reader, const YAML::Node& node, const std::string& path,
                        const std::string& url_key, std::string_view required_for,
                        adapters::UpstreamOptions* out) {
  adapters::BalancingOptions& balancing = out->balancing;
  const bool one = static_cast<bool>(node[url_key]);
  if (one && node["servers"]) {
    // Reported, and the servers still read: their own mistakes are reported in the same run.
    reader.sink()->Add(node["servers"], Child(path, "servers"),
                       "give either " + url_key + " (one server) or servers (several), not both");
  } else if (!one && !node["servers"]) {
    reader.sink()->Add(node, Child(path, url_key),
                       "required for " + std::string(required_for) + " (or servers: a list)");
  }
  if (node["servers"]) {
    ReadServers(reader, node["servers"], Child(path, "servers"), &balancing.servers);
  } else if (one) {
    adapters::ServerAddress server;
    if (ReadServerUrl(reader, node[url_key], Child(path, url_key), &server))
      balancing.servers.push_back(std::move(server));
  }
  // The adapters' one-server fields name the first server (the TLS client's default name).
  if (!balancing.servers.empty()) {
    out->host = balancing.servers.front().host;
    out->port = balancing.servers.front().port;
    out->tls = balancing.servers.front().tls;
  }
  if (node["policy"]) {
    reader.Choice(node["policy"], Child(path, "policy"),
                  {{"round_robin", adapters::BalancingPolicy::kRoundRobin},
                   {"least_request", adapters::BalancingPolicy::kLeastRequest},
                   {"fence_key", adapters::BalancingPolicy::kFenceKey}},
                  "", &balancing.policy);
  }
  if (node["health_check"]) {
    ReadHealthCheck(reader, node["health_check"], Child(path, "health_check"),
                    &balancing.health_check.emplace());
  }
  if (node["outlier"])
    ReadOutlier(reader, node["outlier"], Child(path, "outlier"), &balancing.outlier);
  if (node["limits"])
    ReadBackendLimits(reader, node["limits"], Child(path, "limits"), &balancing.limits);
  if (node["resolve_interval"]) {
    reader.Duration(node["resolve_interval"], Child(path, "resolve_interval"), true,
                    &balancing.resolve_interval);
  }
}

}  // namespace fencegate::gateway::config_reading
