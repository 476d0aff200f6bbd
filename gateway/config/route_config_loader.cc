#include "gateway/config/config_sections.h"

#include <algorithm>
#include <cctype>

namespace fencegate::gateway::config_reading {

namespace {

void ReadFencedMethods(Reader& reader, const YAML::Node& node, const std::string& path,
                       std::vector<std::string>* out) {
  if (!node.IsSequence()) {
    reader.sink()->Add(node, path, "expected a list of HTTP methods, e.g. [PUT, POST]");
    return;
  }
  std::vector<std::string> methods;
  for (std::size_t i = 0; i < node.size(); ++i) {
    const std::string item_path = path + "[" + std::to_string(i) + "]";
    std::string method;
    if (!reader.Scalar(node[i], item_path, "an HTTP method", &method)) continue;
    if (!IsHttpToken(method)) {
      reader.sink()->Add(node[i], item_path, "not a valid HTTP method: " + Quote(method));
    } else if (std::find(methods.begin(), methods.end(), method) != methods.end()) {
      reader.sink()->Add(node[i], item_path, "listed twice: " + Quote(method));
    } else {
      methods.push_back(std::move(method));
    }
  }
  *out = std::move(methods);
}

void ReadFieldName(Reader& reader, const YAML::Node& node, const std::string& path,
                   std::string* out) {
  reader.String(node, path, out);
  if (node.IsScalar() && !IsHttpToken(*out)) {
    reader.sink()->Add(node, path, "not a valid header field name: " + Quote(*out));
  }
}

void ReadIdempotency(Reader& reader, const YAML::Node& node, const std::string& path,
                     IdempotencyConfig* out) {
  if (!reader.ExpectMapping(node, path,
                            {"mode", "required", "methods", "header", "expire_after",
                             "max_response_bytes", "identity_header", "forward_header"})) {
    return;
  }
  if (node["mode"]) {
    reader.Choice(node["mode"], Child(path, "mode"),
                  {{"store", IdempotencyConfig::Mode::kStore},
                   {"forward", IdempotencyConfig::Mode::kForward}},
                  "", &out->mode);
  }
  if (node["required"]) reader.Bool(node["required"], Child(path, "required"), &out->required);
  if (node["methods"]) {
    ReadFencedMethods(reader, node["methods"], Child(path, "methods"), &out->methods);
  }
  if (node["header"]) ReadFieldName(reader, node["header"], Child(path, "header"), &out->header);
  if (node["expire_after"]) {
    reader.Duration(node["expire_after"], Child(path, "expire_after"), false, &out->expire_after);
  }
  if (node["max_response_bytes"]) {
    reader.Size(node["max_response_bytes"], Child(path, "max_response_bytes"), 0, 64u << 20,
                &out->max_response_bytes);
  }
  if (node["identity_header"]) {
    ReadFieldName(reader, node["identity_header"], Child(path, "identity_header"),
                  &out->identity_header);
  }
  if (node["forward_header"]) {
    ReadFieldName(reader, node["forward_header"], Child(path, "forward_header"),
                  &out->forward_header);
  }
}

// verify_tokens: { etcd: { endpoints, lock_name, timeout, tls } } (README "Tokens").
void ReadVerifyTokens(Reader& reader, const YAML::Node& node, const std::string& path,
                      TokenVerifyConfig* out) {
  if (!reader.ExpectMapping(node, path, {"etcd"})) return;
  const std::string etcd_path = Child(path, "etcd");
  if (!node["etcd"]) {
    reader.sink()->Add(node, etcd_path, "required: the lock service to ask (only etcd for now)");
    return;
  }
  const YAML::Node etcd = node["etcd"];
  if (!reader.ExpectMapping(etcd, etcd_path, {"endpoints", "lock_name", "timeout", "tls"})) return;
  if (etcd["endpoints"]) {
    ReadStoreEndpoints(reader, etcd["endpoints"], Child(etcd_path, "endpoints"), &out->endpoints);
  } else {
    reader.sink()->Add(etcd, Child(etcd_path, "endpoints"),
                       "required: the etcd members' HOST:PORT");
  }
  const std::string name_path = Child(etcd_path, "lock_name");
  std::string text;
  if (!etcd["lock_name"]) {
    reader.sink()->Add(etcd, name_path,
                       "required: the etcd lock name, a template such as \"jobs/{segment:2}\"");
  } else if (reader.Scalar(etcd["lock_name"], name_path, "a lock-name template", &text)) {
    const lockstore::Status status = lockstore::FenceKeyTemplate::Parse(text, &out->lock_name);
    if (!status.ok()) {
      reader.sink()->Add(etcd["lock_name"], name_path,
                         "invalid lock-name template " + Quote(text) + ": " + status.message());
    } else if (text.empty()) {
      reader.sink()->Add(etcd["lock_name"], name_path, "must not be empty");
    }
  }
  if (etcd["timeout"]) {
    reader.Duration(etcd["timeout"], Child(etcd_path, "timeout"), false, &out->timeout);
  }
  if (etcd["tls"]) {
    const std::string tls_path = Child(etcd_path, "tls");
    if (!reader.ExpectMapping(
            etcd["tls"], tls_path,
            {"ca_file", "server_name", "verify_hostname", "client_cert_file", "client_key_file"})) {
      return;
    }
    out->tls.emplace();
    ReadClientTls(reader, etcd["tls"], tls_path, "", &*out->tls);
  }
}

void ReadRoute(Reader& reader, const YAML::Node& node, const std::string& path, RouteConfig* out) {
  if (!reader.ExpectMapping(
          node, path,
          {"name", "prefix", "host", "backend", "fence_key", "fenced_methods", "fence_reads",
           "idempotency", "require_signed_tokens", "max_token_advance", "verify_tokens", "policy",
           "required", "disclose_highest_token"}))
    return;
  for (std::string_view required : {"name", "prefix", "backend", "fence_key"}) {
    if (!node[std::string(required)]) reader.sink()->Add(node, Child(path, required), "required");
  }
  if (node["name"]) {
    reader.String(node["name"], Child(path, "name"), &out->name);
    if (node["name"].IsScalar() && out->name.empty()) {
      reader.sink()->Add(node["name"], Child(path, "name"), "must not be empty");
    }
  }
  if (node["prefix"]) {
    reader.String(node["prefix"], Child(path, "prefix"), &out->prefix);
    bool has_space = std::any_of(out->prefix.begin(), out->prefix.end(),
                                 [](char c) { return c == ' ' || c == '?' || c == '#'; });
    if (node["prefix"].IsScalar() &&
        (out->prefix.empty() || out->prefix.front() != '/' || has_space)) {
      reader.sink()->Add(
          node["prefix"], Child(path, "prefix"),
          "must be a path starting with '/' (no spaces, '?' or '#'), got " + Quote(out->prefix));
    }
  }
  if (node["host"]) {
    reader.String(node["host"], Child(path, "host"), &out->host);
    // Routing compares against the Host header lower-cased and without its port.
    std::transform(out->host.begin(), out->host.end(), out->host.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    if (out->host.find_first_of(" /:") != std::string::npos) {
      reader.sink()->Add(node["host"], Child(path, "host"),
                         "must be a host name without port, got " + Quote(out->host));
    }
  }
  if (node["backend"]) reader.String(node["backend"], Child(path, "backend"), &out->backend);
  if (node["fence_key"]) {
    std::string text;
    if (reader.Scalar(node["fence_key"], Child(path, "fence_key"), "a fence-key template", &text)) {
      lockstore::Status status = lockstore::FenceKeyTemplate::Parse(text, &out->fence_key);
      if (!status.ok()) {
        reader.sink()->Add(node["fence_key"], Child(path, "fence_key"),
                           "invalid fence-key template " + Quote(text) + ": " + status.message());
      }
    }
  }
  if (node["fenced_methods"]) {
    ReadFencedMethods(reader, node["fenced_methods"], Child(path, "fenced_methods"),
                      &out->fenced_methods);
  }
  if (node["fence_reads"])
    reader.Bool(node["fence_reads"], Child(path, "fence_reads"), &out->fence_reads);
  if (node["required"]) reader.Bool(node["required"], Child(path, "required"), &out->required);
  if (node["idempotency"]) {
    ReadIdempotency(reader, node["idempotency"], Child(path, "idempotency"),
                    &out->idempotency.emplace());
  }
  if (node["require_signed_tokens"]) {
    reader.Bool(node["require_signed_tokens"], Child(path, "require_signed_tokens"),
                &out->require_signed_tokens);
  }
  if (node["max_token_advance"]) {
    reader.Count(node["max_token_advance"], Child(path, "max_token_advance"), 0,
                 lockstore::kMaxToken, &out->max_token_advance);
  }
  if (node["disclose_highest_token"]) {
    reader.Choice(node["disclose_highest_token"], Child(path, "disclose_highest_token"),
                  {{"always", HighestTokenDisclosure::kAlways},
                   {"authenticated", HighestTokenDisclosure::kAuthenticated},
                   {"never", HighestTokenDisclosure::kNever}},
                  "", &out->disclose_highest_token);
  }
  if (node["verify_tokens"]) {
    ReadVerifyTokens(reader, node["verify_tokens"], Child(path, "verify_tokens"),
                     &out->verify_tokens.emplace());
    // The check runs only for a token beyond the bound: without one it would never run.
    if (out->max_token_advance == 0) {
      reader.sink()->Add(node["verify_tokens"], Child(path, "verify_tokens"),
                         "needs max_token_advance (greater than 0): only a token further ahead "
                         "than that is checked live");
    }
  }
}

}  // namespace

void ReadRoutes(Reader& reader, const YAML::Node& node,
                const std::map<std::string, BackendConfig>& backends,
                std::vector<RouteConfig>* out) {
  if (!node.IsSequence()) {
    reader.sink()->Add(node, "routes", "expected a list of routes");
    return;
  }
  if (node.size() == 0) reader.sink()->Add(node, "routes", "at least one route is required");
  std::map<std::string, int> first_line_of_name;
  for (std::size_t i = 0; i < node.size(); ++i) {
    const std::string path = "routes[" + std::to_string(i) + "]";
    RouteConfig route;
    std::size_t errors_before = reader.sink()->count();
    ReadRoute(reader, node[i], path, &route);
    if (!node[i].IsMap()) continue;
    if (!route.name.empty()) {
      auto [it, inserted] = first_line_of_name.emplace(route.name, node[i]["name"].Mark().line + 1);
      if (!inserted) {
        reader.sink()->Add(node[i]["name"], Child(path, "name"),
                           "route name " + Quote(route.name) + " is already used at line " +
                               std::to_string(it->second));
      }
    }
    if (!route.backend.empty() && backends.count(route.backend) == 0) {
      reader.sink()->Add(node[i]["backend"], Child(path, "backend"),
                         "no backend named " + Quote(route.backend) + " in 'backends'");
    }
    if (reader.sink()->count() == errors_before) out->push_back(std::move(route));
  }
}

void ResolveHighestTokenDisclosure(Reader& reader, const YAML::Node& routes, Config* config) {
  if (!routes || !routes.IsSequence()) return;
  const bool authentication = !config->auth.principals.empty();
  for (std::size_t i = 0; i < routes.size(); ++i) {
    if (!routes[i].IsMap() || !routes[i]["name"]) continue;
    const YAML::Node set = routes[i]["disclose_highest_token"];
    for (RouteConfig& route : config->routes) {
      if (route.name != routes[i]["name"].Scalar()) continue;
      if (!set) {
        route.disclose_highest_token = authentication ? HighestTokenDisclosure::kAuthenticated
                                                      : HighestTokenDisclosure::kAlways;
      } else if (route.disclose_highest_token == HighestTokenDisclosure::kAuthenticated &&
                 !authentication) {
        reader.sink()->Add(set, "routes[" + std::to_string(i) + "].disclose_highest_token",
                           "'authenticated' needs traffic principals (auth.principals or "
                           "auth.api_keys_file): without them no client is authenticated; use "
                           "'never' or 'always'");
      }
    }
  }
}

}  // namespace fencegate::gateway::config_reading
