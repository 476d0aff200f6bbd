#include "gateway/config/config_loader.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <initializer_list>
#include <limits>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <yaml-cpp/yaml.h>

#include "gateway/config/auth_config_loader.h"
#include "gateway/config/command_line.h"
#include "gateway/config/config_sections.h"
#include "gateway/config/value_parsers.h"
#include "gateway/config/yaml_reader.h"
#include "lockstore/status.h"

// The schema is config/examples/full-reference.yaml. Conventions of this reader:
//   - Key paths in errors are dotted, with 0-based sequence indexes: "routes[0].fence_key",
//     "backends.api.url".
//   - Durations need a unit: ms, s, m, h ("250ms", "10s", "2m", "1h").
//   - Sizes are a byte count with an optional unit: B; KiB, MiB, GiB, TiB (powers of 1024);
//     KB, MB, GB, TB (powers of 1000). "512", "16KiB", "8GiB".
//   - Counts are plain decimal integers.
//   - A filesystem root may contain "{data_dir}", replaced by the data directory.
// yaml-cpp reports problems by throwing; the exceptions are caught here, at the edge, and become
// ConfigErrors like every other problem.

namespace fencegate::gateway {

std::string ConfigError::ToString() const {
  std::string out = file;
  if (line > 0) {
    out += ":" + std::to_string(line);
    if (column > 0) out += ":" + std::to_string(column);
  }
  out += ": ";
  if (!key.empty()) out += key + ": ";
  out += message;
  return out;
}

namespace config_reading {
namespace {

void ReadLockRule(Reader& reader, const YAML::Node& node, const std::string& path,
                  lockstore::LockRule* out) {
  if (!reader.ExpectMapping(node, path, {"match", "fence_keys", "quarantine"})) return;
  if (!node["match"]) reader.sink()->Add(node, Child(path, "match"), "required");
  if (node["match"]) {
    reader.String(node["match"], Child(path, "match"), &out->pattern);
    if (node["match"].IsScalar() && !lockstore::IsValidLockPattern(out->pattern)) {
      reader.sink()->Add(node["match"], Child(path, "match"),
                         "a lock name pattern: 1 to 128 of A-Z a-z 0-9 . _ : - and '*', got " +
                             Quote(out->pattern));
    }
  }
  if (node["fence_keys"]) {
    const YAML::Node& keys = node["fence_keys"];
    const std::string keys_path = Child(path, "fence_keys");
    if (!keys.IsSequence()) {
      reader.sink()->Add(keys, keys_path, "expected a list of fence-key templates");
    } else {
      for (std::size_t i = 0; i < keys.size(); ++i) {
        const std::string item_path = keys_path + "[" + std::to_string(i) + "]";
        std::string key;
        reader.String(keys[i], item_path, &key);
        const lockstore::Status status = lockstore::ValidateLockFenceKeyTemplate(key);
        if (keys[i].IsScalar() && !status.ok()) {
          reader.sink()->Add(keys[i], item_path,
                             "invalid fence key " + Quote(key) + ": " + status.message());
        }
        out->fence_keys.push_back(std::move(key));
      }
    }
  }
  if (node["quarantine"]) {
    reader.Duration(node["quarantine"], Child(path, "quarantine"), true, &out->quarantine);
  }
}

// locks.signing (README "Tokens"): {key_id: ID, keys: [{id: ID, secret|secret_file|secret_env}]}
void ReadTokenSigning(Reader& reader, const YAML::Node& node, const std::string& path,
                      lockstore::TokenKeyring* out) {
  if (!reader.ExpectMapping(node, path, {"key_id", "keys"})) return;
  for (std::string_view required : {"key_id", "keys"}) {
    if (!node[std::string(required)]) reader.sink()->Add(node, Child(path, required), "required");
  }
  const YAML::Node& keys = node["keys"];
  if (keys && (!keys.IsSequence() || keys.size() == 0)) {
    reader.sink()->Add(keys, Child(path, "keys"), "expected a non-empty list of keys");
  } else if (keys) {
    for (std::size_t i = 0; i < keys.size(); ++i) {
      const std::string item = Child(path, "keys") + "[" + std::to_string(i) + "]";
      if (!reader.ExpectMapping(keys[i], item, {"id", "secret", "secret_file", "secret_env"})) {
        continue;
      }
      lockstore::TokenKey key;
      if (!keys[i]["id"]) reader.sink()->Add(keys[i], Child(item, "id"), "required");
      if (keys[i]["id"]) {
        reader.String(keys[i]["id"], Child(item, "id"), &key.id);
        if (!lockstore::IsValidTokenKeyId(key.id)) {
          reader.sink()->Add(keys[i]["id"], Child(item, "id"),
                             "a key id is 1 to 64 of A-Z a-z 0-9 . _ -, got " + Quote(key.id));
        }
      }
      ReadSecret(reader, keys[i], item, "secret", "a signing key", &key.secret);
      if (!key.secret.empty() && key.secret.size() < lockstore::kMinTokenSecretBytes) {
        reader.sink()->Add(keys[i], Child(item, "secret"),
                           "must be at least 32 bytes (e.g. openssl rand -base64 48)");
      }
      for (const lockstore::TokenKey& other : out->keys) {
        if (!key.id.empty() && other.id == key.id) {
          reader.sink()->Add(keys[i]["id"], Child(item, "id"), "key id used twice");
        }
      }
      out->keys.push_back(std::move(key));
    }
  }
  if (node["key_id"]) {
    reader.String(node["key_id"], Child(path, "key_id"), &out->signing_key_id);
    const bool listed = std::any_of(out->keys.begin(), out->keys.end(),
                                    [&](const auto& key) { return key.id == out->signing_key_id; });
    if (!listed && !out->keys.empty()) {  // an empty list was reported already
      reader.sink()->Add(node["key_id"], Child(path, "key_id"),
                         "names no key in " + Child(path, "keys"));
    }
  }
}

void ReadLocks(Reader& reader, const YAML::Node& node, LocksConfig* out) {
  const std::string path = "locks";
  if (!reader.ExpectMapping(node, path,
                            {"enabled", "prefix", "default_ttl", "min_ttl", "max_ttl", "max_wait",
                             "max_waiters", "cached_locks", "rules", "signing", "policy"}))
    return;
  if (node["signing"])
    ReadTokenSigning(reader, node["signing"], Child(path, "signing"), &out->signing);
  if (node["enabled"]) reader.Bool(node["enabled"], Child(path, "enabled"), &out->enabled);
  if (node["prefix"]) {
    reader.String(node["prefix"], Child(path, "prefix"), &out->prefix);
    const bool bad = out->prefix.size() < 2 || out->prefix.front() != '/' ||
                     out->prefix.back() != '/' ||
                     out->prefix.find_first_of(" ?#") != std::string::npos;
    if (node["prefix"].IsScalar() && bad) {
      reader.sink()->Add(node["prefix"], Child(path, "prefix"),
                         "must start and end with '/' (no spaces, '?' or '#'), e.g. /locks/, got " +
                             Quote(out->prefix));
    }
  }
  if (node["default_ttl"])
    reader.Duration(node["default_ttl"], Child(path, "default_ttl"), false, &out->default_ttl);
  if (node["min_ttl"])
    reader.Duration(node["min_ttl"], Child(path, "min_ttl"), false, &out->min_ttl);
  if (node["max_ttl"])
    reader.Duration(node["max_ttl"], Child(path, "max_ttl"), false, &out->max_ttl);
  if (node["max_wait"])
    reader.Duration(node["max_wait"], Child(path, "max_wait"), true, &out->max_wait);
  if (node["max_waiters"]) {
    reader.Count(node["max_waiters"], Child(path, "max_waiters"), 1, 1'000'000, &out->max_waiters);
  }
  if (node["cached_locks"]) {
    reader.Count(node["cached_locks"], Child(path, "cached_locks"), 1, 1'000'000'000,
                 &out->cached_locks);
  }
  if (out->min_ttl > out->max_ttl) {
    reader.sink()->Add(node["min_ttl"] ? node["min_ttl"] : node, Child(path, "min_ttl"),
                       "must not exceed locks.max_ttl");
  }
  if (out->default_ttl < out->min_ttl || out->default_ttl > out->max_ttl) {
    reader.sink()->Add(node["default_ttl"] ? node["default_ttl"] : node, Child(path, "default_ttl"),
                       "must be between locks.min_ttl and locks.max_ttl");
  }
  if (node["rules"]) {
    const YAML::Node& rules = node["rules"];
    if (!rules.IsSequence()) {
      reader.sink()->Add(rules, Child(path, "rules"), "expected a list of lock rules");
      return;
    }
    for (std::size_t i = 0; i < rules.size(); ++i) {
      lockstore::LockRule rule;
      ReadLockRule(reader, rules[i], "locks.rules[" + std::to_string(i) + "]", &rule);
      out->rules.push_back(std::move(rule));
    }
  }
}

// `auth`, `admin` and each route's `policy` (gateway/config/auth_config_loader.h). Policies
// are matched to routes by name, after the principals they refer to are known.
void ReadAuthSections(Reader& reader, const YAML::Node& root, Config* config) {
  const AuthConfigErrors errors = reader.sink()->ForAuth();
  if (root["auth"]) {
    if (reader.ExpectMapping(root["auth"], "auth", {"principals", "api_keys_file"})) {
      ReadCredentials(root["auth"], "auth", errors, &config->auth);
    }
  }
  if (root["admin"]) ReadAdminAuth(root["admin"], errors, &config->admin);
  if (root["locks"] && root["locks"].IsMap() && root["locks"]["policy"]) {
    ReadLockPolicy(root["locks"]["policy"], "locks.policy", config->auth, errors,
                   &config->locks.policy.emplace());
  }
  const YAML::Node& routes = root["routes"];
  if (!routes || !routes.IsSequence()) return;
  for (std::size_t i = 0; i < routes.size(); ++i) {
    if (!routes[i].IsMap() || !routes[i]["policy"] || !routes[i]["name"]) continue;
    for (RouteConfig& route : config->routes) {
      if (route.name != routes[i]["name"].Scalar()) continue;
      ReadRoutePolicy(routes[i]["policy"], "routes[" + std::to_string(i) + "].policy", config->auth,
                      errors, &route.policy.emplace());
    }
  }
}

void ReadTopLevel(Reader& reader, const YAML::Node& root, Config* config) {
  if (!root.IsDefined() || root.IsNull()) {
    reader.sink()->Add(root, "routes", "the file is empty; at least one route is required");
    return;
  }
  if (!reader.ExpectMapping(
          root, "",
          {"listen", "admin_listen", "data_dir", "threads", "limits", "timeouts", "store",
           "access_log", "backends", "routes", "locks", "tls", "auth", "admin", "cluster"}))
    return;
  if (root["listen"]) reader.Listen(root["listen"], "listen", &config->listen);
  if (root["admin_listen"])
    reader.Listen(root["admin_listen"], "admin_listen", &config->admin_listen);
  if (root["data_dir"]) {
    reader.String(root["data_dir"], "data_dir", &config->data_dir);
    if (root["data_dir"].IsScalar() && config->data_dir.empty()) {
      reader.sink()->Add(root["data_dir"], "data_dir", "must not be empty");
    }
  }
  if (root["threads"]) reader.Count(root["threads"], "threads", 0, 1024, &config->threads);
  if (root["limits"]) ReadLimits(reader, root["limits"], &config->limits);
  if (root["timeouts"]) ReadTimeouts(reader, root["timeouts"], &config->timeouts);
  if (root["store"]) ReadStore(reader, root["store"], &config->store);
  if (root["access_log"]) ReadAccessLog(reader, root["access_log"], &config->access_log);
  if (root["backends"]) ReadBackends(reader, root["backends"], &config->backends);
  if (root["locks"]) ReadLocks(reader, root["locks"], &config->locks);
  if (root["tls"]) ReadTls(reader, root["tls"], &config->tls);
  if (root["cluster"]) {
    ReadCluster(reader, root["cluster"], &config->cluster);
    if (root["cluster"].IsMap()) CheckClusterQuarantine(reader, root["cluster"], config);
    if (config->store.kind != "etcd") {
      reader.sink()->Add(root["cluster"], "cluster",
                         "several replicas share their fences through etcd: needs store kind "
                         "'etcd'");
    }
  }
  if (root["routes"]) {
    ReadRoutes(reader, root["routes"], config->backends, &config->routes);
  } else {
    reader.sink()->Add(root, "routes", "required: at least one route");
  }
  // Signed tokens come from the lock API's keyring: a route cannot require what nobody issues.
  if (root["routes"] && root["routes"].IsSequence()) {
    const YAML::Node& routes = root["routes"];
    for (std::size_t i = 0; i < routes.size(); ++i) {
      const YAML::Node flag = routes[i].IsMap() ? routes[i]["require_signed_tokens"] : YAML::Node();
      const bool issued = config->locks.enabled && !config->locks.signing.empty();
      const bool set =
          flag && flag.IsScalar() &&
          (flag.Scalar() == "true" || flag.Scalar() == "True" || flag.Scalar() == "TRUE");
      if (set && !issued) {
        reader.sink()->Add(flag, "routes[" + std::to_string(i) + "].require_signed_tokens",
                           "needs locks.signing (and locks enabled): nothing would issue signed "
                           "tokens");
      }
    }
  }
  // With etcd the locks live in etcd (lockstore/etcd/etcd_lock_service.h), which does not
  // build lock-delay: a configured quarantine would silently not apply.
  if (config->store.kind == "etcd" && config->locks.enabled && root["locks"] &&
      root["locks"]["rules"] && root["locks"]["rules"].IsSequence()) {
    const YAML::Node& rules = root["locks"]["rules"];
    for (std::size_t i = 0; i < rules.size(); ++i) {
      const YAML::Node quarantine = rules[i].IsMap() ? rules[i]["quarantine"] : YAML::Node();
      if (quarantine) {
        reader.sink()->Add(quarantine, "locks.rules[" + std::to_string(i) + "].quarantine",
                           "lock-delay is not available with store kind 'etcd' (the lock state "
                           "lives in etcd, and the etcd lock service has no lock-delay)");
      }
    }
  }
  ReadAuthSections(reader, root, config);
  // The lock API is matched before the routes: a route under its prefix would never be reached.
  if (config->locks.enabled && root["routes"] && root["routes"].IsSequence()) {
    const YAML::Node& routes = root["routes"];
    for (std::size_t i = 0; i < routes.size(); ++i) {
      const YAML::Node prefix = routes[i].IsMap() ? routes[i]["prefix"] : YAML::Node();
      if (prefix && prefix.IsScalar() && prefix.Scalar().starts_with(config->locks.prefix)) {
        reader.sink()->Add(prefix, "routes[" + std::to_string(i) + "].prefix",
                           "lies under locks.prefix " + Quote(config->locks.prefix) +
                               ", which the lock API answers; move the route or the lock prefix");
      }
    }
  }
}

}  // namespace
}  // namespace config_reading

std::vector<ConfigError> LoadConfigText(const std::string& text, const std::string& file,
                                        Config* config) {
  std::vector<ConfigError> errors;
  config_reading::ErrorSink sink(file, &errors);
  Config loaded;
  loaded.source_path = file;
  try {
    YAML::Node root = YAML::Load(text);
    config_reading::Reader reader(&sink);
    config_reading::ReadTopLevel(reader, root, &loaded);
    ExpandDataDirInPaths(&loaded);
  } catch (const YAML::Exception& e) {
    sink.Add(e.mark, "", e.msg);
  }
  if (errors.empty()) {
    *config = std::move(loaded);
  } else {
    // Sections are validated in schema order; the operator reads the file top to bottom.
    std::stable_sort(errors.begin(), errors.end(), [](const ConfigError& a, const ConfigError& b) {
      return std::tie(a.line, a.column) < std::tie(b.line, b.column);
    });
  }
  return errors;
}

std::vector<ConfigError> LoadConfigFile(const std::string& path, Config* config) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    ConfigError error;
    error.file = path;
    error.message = "cannot open the file";
    return {error};
  }
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) {
    ConfigError error;
    error.file = path;
    error.message = "cannot read the file";
    return {error};
  }
  return LoadConfigText(text.str(), path, config);
}

}  // namespace fencegate::gateway
