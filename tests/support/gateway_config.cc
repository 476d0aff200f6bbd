#include "tests/support/gateway_config.h"

namespace fencegate::integration {

GatewayConfig GatewayConfig::HttpBackend(std::uint16_t backend_port,
                                         const std::string& access_log) {
  GatewayConfig config;
  config["access_log"]["path"] = access_log;
  config["timeouts"]["shutdown_drain"] = "10s";
  config.Backend("api") = HttpBackendAt(backend_port);
  YAML::Node kv = config.Route("kv");
  kv["prefix"] = "/kv/";
  kv["backend"] = "api";
  kv["fence_key"] = "kv:{segment:2}";
  return config;
}

YAML::Node GatewayConfig::Route(const std::string& name) {
  YAML::Node routes = root_["routes"];
  for (YAML::Node route : routes) {
    if (route["name"].as<std::string>() == name) return route;
  }
  YAML::Node route(YAML::NodeType::Map);
  route["name"] = name;
  routes.push_back(route);
  return route;
}

std::string GatewayConfig::Yaml() const {
  YAML::Emitter out;
  out << root_;
  return std::string(out.c_str()) + "\n";
}

YAML::Node HttpBackendAt(std::uint16_t port) {
  YAML::Node backend(YAML::NodeType::Map);
  backend["kind"] = "http";
  backend["url"] = "http://127.0.0.1:" + std::to_string(port);
  return backend;
}

YAML::Node Sequence(std::initializer_list<std::string> items) {
  YAML::Node sequence(YAML::NodeType::Sequence);
  for (const std::string& item : items) sequence.push_back(item);
  return sequence;
}

}  // namespace fencegate::integration
