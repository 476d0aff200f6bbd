#include "gateway/config/config_sections.h"

#include "gateway/config/command_line.h"

namespace fencegate::gateway::config_reading {

void ReadCluster(Reader& reader, const YAML::Node& node, ClusterConfig* out) {
  const std::string path = "cluster";
  out->enabled = true;
  if (!reader.ExpectMapping(node, path,
                            {"name", "shards", "lease_ttl", "quarantine", "peers", "tls"})) {
    return;
  }
  if (node["name"]) {
    reader.String(node["name"], Child(path, "name"), &out->name);
  } else {
    reader.sink()->Add(node, Child(path, "name"), "required: this replica's name in peers");
  }
  if (node["shards"]) reader.Count(node["shards"], Child(path, "shards"), 1, 4096, &out->shards);
  if (node["lease_ttl"]) {
    reader.Duration(node["lease_ttl"], Child(path, "lease_ttl"), false, &out->lease_ttl);
    if (out->lease_ttl.count() % 1000 != 0) {
      reader.sink()->Add(node["lease_ttl"], Child(path, "lease_ttl"),
                         "must be whole seconds (etcd lease TTLs are)");
    }
  }
  if (node["quarantine"]) {
    reader.Duration(node["quarantine"], Child(path, "quarantine"), false, &out->quarantine);
  }
  // HTTPS to the peers' traffic listeners; an empty mapping trusts the system store, like
  // store.tls. Whether it may or must be set depends on tls.traffic (CheckClusterTls).
  if (node["tls"]) {
    const std::string tls_path = Child(path, "tls");
    if (reader.ExpectMapping(
            node["tls"], tls_path,
            {"ca_file", "server_name", "verify_hostname", "client_cert_file", "client_key_file"})) {
      out->tls.emplace();
      ReadClientTls(reader, node["tls"], tls_path, "", &*out->tls);
    }
  }
  const YAML::Node peers = node["peers"];
  if (!peers || !peers.IsMap() || peers.size() == 0) {
    reader.sink()->Add(peers ? peers : node, Child(path, "peers"),
                       "required: a mapping of every replica's name to its traffic HOST:PORT");
    return;
  }
  for (const auto& entry : peers) {
    const std::string name = entry.first.Scalar();
    const std::string key = Child(Child(path, "peers"), name);
    std::string text;
    if (!reader.Scalar(entry.second, key, "HOST:PORT", &text)) continue;
    ListenAddress address;
    std::string error;
    if (!ParseListenAddress(text, &address, &error) || address.port == 0) {
      reader.sink()->Add(entry.second, key, error.empty() ? "the port must not be 0" : error);
      continue;
    }
    out->peers[name] = text;
  }
  if (node["name"] && node["name"].IsScalar() && !out->peers.contains(out->name)) {
    reader.sink()->Add(node["name"], Child(path, "name"),
                       "must be one of the names under cluster.peers");
  }
}

void CheckClusterTls(Reader& reader, const YAML::Node& node, const Config& config) {
  const tls::ServerTlsSettings& traffic = config.tls.traffic;
  if (!traffic.enabled) {
    if (node["tls"]) {
      reader.sink()->Add(node["tls"], "cluster.tls",
                         "the traffic listener speaks plain HTTP (no tls.traffic): the replicas "
                         "forward to each other in plain HTTP too; remove cluster.tls or set "
                         "tls.traffic");
    }
    return;
  }
  // No default trust: a private CA missing here would fail every forwarded write at run time.
  if (!node["tls"]) {
    reader.sink()->Add(node, "cluster.tls",
                       "required when tls.traffic is set: the replicas forward writes to each "
                       "other over HTTPS (ca_file: the CA of the peers' traffic certificates; "
                       "{} trusts the system store)");
    return;
  }
  if (traffic.client_auth == tls::ClientAuth::kRequired && config.cluster.tls &&
      config.cluster.tls->client_cert_file.empty()) {
    reader.sink()->Add(node["tls"], "cluster.tls.client_cert_file",
                       "required when tls.traffic.client_auth is required: the peers refuse a "
                       "forwarding replica without a client certificate");
  }
}

void CheckClusterQuarantine(Reader& reader, const YAML::Node& node, Config* config) {
  ClusterConfig& cluster = config->cluster;
  const auto minimum = cluster.lease_ttl + LongestUpstreamResponse(*config);
  if (cluster.quarantine.count() == 0) {
    cluster.quarantine = minimum;
  } else if (cluster.quarantine < minimum) {
    reader.sink()->Add(node["quarantine"], "cluster.quarantine",
                       "must be at least lease_ttl + the longest backend response_timeout (" +
                           std::to_string(minimum.count()) + "ms)");
  }
}

}  // namespace fencegate::gateway::config_reading
