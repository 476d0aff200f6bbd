#include "gateway/config/config_loader.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "gateway/config/alias_check.h"
#include "gateway/config/auth_config_loader.h"
#include "gateway/config/config_sections.h"
#include "gateway/config/environment_expansion.h"
#include "gateway/config/value_parsers.h"
#include "gateway/config/yaml_reader.h"

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

// `auth`, `admin` and each route's `policy` (gateway/config/auth_config_loader.h). Policies
// are matched to routes by name, after the principals they refer to are known.
void ReadAuthSections(Reader& reader, const YAML::Node& root, Config* config) {
  AuthConfigErrors errors = reader.sink()->ForAuth();
  errors.resolve_path = [&reader](const std::string& file) { return reader.ResolvePath(file); };
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
  if (!reader.ExpectMapping(root, "",
                            {"listen", "admin_listen", "data_dir", "user", "group", "threads",
                             "limits", "timeouts", "store", "access_log", "log", "trace_context",
                             "backends", "routes", "locks", "tls", "auth", "admin", "cluster"}))
    return;
  if (root["listen"]) reader.Listen(root["listen"], "listen", &config->listen);
  if (root["admin_listen"])
    reader.Listen(root["admin_listen"], "admin_listen", &config->admin_listen);
  if (root["data_dir"]) {
    reader.String(root["data_dir"], "data_dir", &config->data_dir_as_written);
    config->data_dir = reader.ResolvePath(config->data_dir_as_written);
    if (root["data_dir"].IsScalar() && config->data_dir.empty()) {
      reader.sink()->Add(root["data_dir"], "data_dir", "must not be empty");
    }
  } else {
    config->data_dir = reader.ResolvePath(config->data_dir);
  }
  for (const auto& [key, value] : {std::pair{"user", &config->user}, {"group", &config->group}}) {
    if (!root[key]) continue;
    reader.String(root[key], key, value);
    if (root[key].IsScalar() && value->empty()) {
      reader.sink()->Add(root[key], key, "must not be empty");
    }
  }
  if (root["group"] && !root["user"]) {
    reader.sink()->Add(root["group"], "group", "needs user: the group the process becomes");
  }
  if (root["threads"]) reader.Count(root["threads"], "threads", 0, 1024, &config->threads);
  if (root["limits"]) ReadLimits(reader, root["limits"], &config->limits);
  if (root["timeouts"]) ReadTimeouts(reader, root["timeouts"], &config->timeouts);
  if (root["store"]) ReadStore(reader, root["store"], &config->store);
  if (root["access_log"]) ReadAccessLog(reader, root["access_log"], &config->access_log);
  if (root["log"]) ReadEventLog(reader, root["log"], &config->log);
  if (root["trace_context"]) {
    ReadTraceContext(reader, root["trace_context"], &config->trace_context);
  }
  if (root["backends"]) ReadBackends(reader, root["backends"], &config->backends);
  if (root["locks"]) ReadLocks(reader, root["locks"], &config->locks);
  if (root["tls"]) ReadTls(reader, root["tls"], &config->tls);
  if (root["cluster"]) {
    ReadCluster(reader, root["cluster"], &config->cluster);
    if (root["cluster"].IsMap()) {
      CheckClusterQuarantine(reader, root["cluster"], config);
      CheckClusterTls(reader, root["cluster"], *config);
    }
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
  ResolveHighestTokenDisclosure(reader, root["routes"], config);
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

std::string ConfigDirectory(const std::string& file) {
  std::error_code error;
  const std::filesystem::path absolute = std::filesystem::absolute(file, error);
  if (error) return {};
  return absolute.parent_path().lexically_normal().string();
}

std::vector<ConfigError> LoadConfigText(const std::string& text, const std::string& file,
                                        Config* config, std::vector<SchemaKey>* schema_keys) {
  std::vector<ConfigError> errors;
  config_reading::ErrorSink sink(file, &errors);
  sink.set_schema_keys(schema_keys);
  Config loaded;
  loaded.source_path = file;
  try {
    YAML::Node root = YAML::Load(text);
    if (const auto problem = config_reading::FindAliasProblem(root)) {
      sink.Add(problem->mark, "", problem->message);
      return errors;
    }
    config_reading::ExpandEnvironmentInTree(
        root, config_reading::ProcessEnvironment(),
        [&](const YAML::Node& node, const std::string& error) { sink.Add(node, "", error); });
    loaded.config_dir = ConfigDirectory(file);
    config_reading::Reader reader(&sink, loaded.config_dir);
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
