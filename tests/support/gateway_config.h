#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>

#include <yaml-cpp/yaml.h>

namespace fencegate::integration {

// The YAML configuration a test starts fencegate with, built as a yaml-cpp tree and written by
// YAML::Emitter: a test names the keys it sets instead of splicing indented text. Index it as
// the file reads, e.g. config["timeouts"]["idle"] = "3s" or config.Route("kv")["fence_reads"] =
// true. Tests that are about malformed YAML keep their literal text.
class GatewayConfig {
 public:
  GatewayConfig() = default;

  // What most tests share: access log at `access_log` ("" turns it off), timeouts.shutdown_drain
  // 10s, backend "api" (kind http, url http://127.0.0.1:<backend_port>) and the fenced route
  // "kv" (prefix /kv/, backend api, fence key "kv:{segment:2}": /kv/<item>/... -> "kv:<item>").
  static GatewayConfig HttpBackend(std::uint16_t backend_port, const std::string& access_log = "");

  // A top-level section (created on first assignment below it).
  YAML::Node operator[](const std::string& key) { return root_[key]; }
  // backends.<name> (created on first assignment below it).
  YAML::Node Backend(const std::string& name) { return root_["backends"][name]; }
  // The route named `name`; appended to `routes` with that name if there is none yet.
  YAML::Node Route(const std::string& name);

  // The configuration as YAML text.
  std::string Yaml() const;

 private:
  YAML::Node root_{YAML::NodeType::Map};
};

// An http backend's keys: kind http, url http://127.0.0.1:<port>.
YAML::Node HttpBackendAt(std::uint16_t port);

// A YAML sequence of strings, e.g. a policy's principals.
YAML::Node Sequence(std::initializer_list<std::string> items);

}  // namespace fencegate::integration
