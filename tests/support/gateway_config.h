#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>

#include <yaml-cpp/yaml.h>

namespace fencegate::integration {

// The YAML configuration a test starts fencegate with, built as a yaml-cpp tree and written by
// YAML::Emitter: a test names the keys it sets instead of splicing indented text. Index it as
// the file reads, e.g. config["timeouts"]["idle"] = "3s" or config.Route("kv")["fence_reads"] =
// true. Tests that are about malformed YAML, or that assert an error's line and column in the
// text, keep their literal text.
class GatewayConfig {
 public:
  GatewayConfig() = default;

  // What most tests share: access log at `access_log` ("" turns it off), timeouts.shutdown_drain
  // 10s, backend "api" (kind http, url http://127.0.0.1:<backend_port>) and the fenced route
  // "kv" (prefix /kv/, backend api, fence key "kv:{segment:2}": /kv/<item>/... -> "kv:<item>").
  static GatewayConfig HttpBackend(std::uint16_t backend_port, const std::string& access_log = "");
  // The configuration in the YAML file at `path` (e.g. a shipped one), for a test to add keys to.
  static GatewayConfig FromFile(const std::string& path);

  // A top-level section (created on first assignment below it).
  YAML::Node operator[](const std::string& key) { return root_[key]; }
  // backends.<name> (created on first assignment below it).
  YAML::Node Backend(const std::string& name) { return root_["backends"][name]; }
  // The route named `name`; appended to `routes` with that name if there is none yet.
  YAML::Node Route(const std::string& name);
  // The route named `name` (as above) sending `prefix` to `backend` under `fence_key`.
  YAML::Node Route(const std::string& name, const std::string& prefix, const std::string& backend,
                   const std::string& fence_key);

  // The configuration as YAML text.
  std::string Yaml() const;

 private:
  YAML::Node root_{YAML::NodeType::Map};
};

// An http backend's keys: kind http, url http://127.0.0.1:<port>.
YAML::Node HttpBackendAt(std::uint16_t port);

// A filesystem backend's keys: kind filesystem, root `root`.
YAML::Node FilesystemBackendAt(const std::string& root);

// A TLS listener's keys (tls.traffic or tls.admin): its certificate and private key files. A
// test that verifies client certificates adds client_ca_file and client_auth.
YAML::Node TlsListener(const std::string& cert_file, const std::string& key_file);

// Sets every key of the map `keys` in the map `target`: the extra keys a test passes for one
// section, e.g. a backend's, to the helper that builds the rest.
void SetKeys(YAML::Node target, const YAML::Node& keys);

// A YAML sequence of strings, e.g. a policy's principals.
YAML::Node Sequence(std::initializer_list<std::string> items);

}  // namespace fencegate::integration
