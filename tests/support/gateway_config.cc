#include "tests/support/gateway_config.h"

namespace fencegate::integration {

GatewayConfig GatewayConfig::HttpBackend(std::uint16_t backend_port,
                                         const std::string& access_log) {
  GatewayConfig config;
  config["access_log"]["path"] = access_log;
  config["timeouts"]["shutdown_drain"] = "10s";
  config.Backend("api") = HttpBackendAt(backend_port);
  config.Route("kv", "/kv/", "api", "kv:{segment:2}");
  return config;
}

GatewayConfig GatewayConfig::FromFile(const std::string& path) {
  GatewayConfig config;
  config.root_ = YAML::LoadFile(path);
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

YAML::Node GatewayConfig::Route(const std::string& name, const std::string& prefix,
                                const std::string& backend, const std::string& fence_key) {
  YAML::Node route = Route(name);
  route["prefix"] = prefix;
  route["backend"] = backend;
  route["fence_key"] = fence_key;
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

YAML::Node FilesystemBackendAt(const std::string& root) {
  YAML::Node backend(YAML::NodeType::Map);
  backend["kind"] = "filesystem";
  backend["root"] = root;
  return backend;
}

YAML::Node TlsListener(const std::string& cert_file, const std::string& key_file) {
  YAML::Node listener(YAML::NodeType::Map);
  listener["cert_file"] = cert_file;
  listener["key_file"] = key_file;
  return listener;
}

void SetKeys(YAML::Node target, const YAML::Node& keys) {
  for (const auto& key : keys) target[key.first.as<std::string>()] = key.second;
}

YAML::Node Sequence(std::initializer_list<std::string> items) {
  YAML::Node sequence(YAML::NodeType::Sequence);
  for (const std::string& item : items) sequence.push_back(item);
  return sequence;
}

}  // namespace fencegate::integration
