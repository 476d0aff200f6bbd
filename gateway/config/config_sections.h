#pragma once

#include <map>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "gateway/config/config.h"
#include "gateway/config/yaml_reader.h"

// The readers of the configuration's sections, one file each (gateway/config/*_config_loader.cc),
// called by ReadTopLevel in config_loader.cc and by each other where a section embeds another's
// form (a TLS client, a list of etcd members).

namespace fencegate::gateway::config_reading {

// tls.traffic, tls.admin; the TLS client keys of backends, etcd and the replicas

// A TLS client's keys (`<key_prefix>ca_file`, ...): backends, the etcd store and cluster.tls.
// True when any is set.
bool ReadClientTls(Reader& reader, const YAML::Node& node, const std::string& path,
                   const std::string& key_prefix, tls_client::ClientTlsOptions* out);

void ReadTls(Reader& reader, const YAML::Node& node, tls::TlsConfig* out);

// store; a list of etcd members (also verify_tokens.etcd)

void ReadStoreEndpoints(Reader& reader, const YAML::Node& node, const std::string& path,
                        std::vector<std::string>* out);

void ReadStore(Reader& reader, const YAML::Node& node, StoreConfig* out);

// limits, timeouts, access_log, log, trace_context

void ReadLimits(Reader& reader, const YAML::Node& node, Limits* out);

void ReadTimeouts(Reader& reader, const YAML::Node& node, Timeouts* out);

void ReadAccessLog(Reader& reader, const YAML::Node& node, AccessLogConfig* out);

void ReadEventLog(Reader& reader, const YAML::Node& node, EventLogConfig* out);

void ReadTraceContext(Reader& reader, const YAML::Node& node, TraceContextConfig* out);

// cluster

void ReadCluster(Reader& reader, const YAML::Node& node, ClusterConfig* out);

// cluster.tls against tls.traffic: required with a TLS traffic listener (the peers are reached
// on it), refused without one.
void CheckClusterTls(Reader& reader, const YAML::Node& node, const Config& config);

// Writes the previous owner admitted must be over before a new owner admits (ARCHITECTURE.md
// "Several replicas"): a shorter quarantine would void the argument.
void CheckClusterQuarantine(Reader& reader, const YAML::Node& node, Config* config);

// backends (one reader per kind of resource_adapters/registry/registry.h)

// A networked backend's server(s): `url_key` (url or endpoint) or `servers`, and how requests
// spread over them (policy, health_check, outlier, limits, resolve_interval), into
// out->balancing; out->host/port/tls name the first server.
void ReadBackendServers(Reader& reader, const YAML::Node& node, const std::string& path,
                        const std::string& url_key, std::string_view required_for,
                        adapters::UpstreamOptions* out);

void ReadBackends(Reader& reader, const YAML::Node& node,
                  std::map<std::string, BackendConfig>* out);

// routes

void ReadRoutes(Reader& reader, const YAML::Node& node,
                const std::map<std::string, BackendConfig>& backends,
                std::vector<RouteConfig>* out);
// Each route's disclose_highest_token, once `auth` is read: unset, authenticated when traffic
// principals are configured (authentication is), else always; "authenticated" without any
// principal is refused (nobody could be authenticated).
void ResolveHighestTokenDisclosure(Reader& reader, const YAML::Node& routes, Config* config);

// locks

void ReadLocks(Reader& reader, const YAML::Node& node, LocksConfig* out);

}  // namespace fencegate::gateway::config_reading
