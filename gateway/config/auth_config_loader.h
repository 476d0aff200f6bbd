#pragma once

#include <functional>
#include <string>

#include <yaml-cpp/yaml.h>

#include "gateway/config/config.h"

namespace fencegate::gateway {

// Where the auth readers report problems (the loader's error list): at a YAML node, or at a
// line of another file (api_keys_file).
struct AuthConfigErrors {
  std::function<void(const YAML::Node& node, const std::string& key, const std::string& message)>
      at_node;
  std::function<void(const std::string& file, int line, const std::string& key,
                     const std::string& message)>
      in_file;
  // A path as written in the file -> the path to open (relative to the file's directory).
  std::function<std::string(const std::string&)> resolve_path;
  // The schema walk: a key a mapping may have, and whether it has (ErrorSink::SchemaKeySeen).
  std::function<void(const std::string& key, bool present)> schema_key;
};

// `auth:` (traffic principals) and the principals of `admin:`: a mapping with `principals`
// (list of {name, api_key_sha256, tls_subjects, tls_dns_sans, tls_uri_sans}) and
// `api_keys_file` (lines "NAME SHA256HEX", '#' comments), read and merged here.
void ReadCredentials(const YAML::Node& node, const std::string& path,
                     const AuthConfigErrors& errors, auth::CredentialsConfig* out);

// `admin:`: the admin listener's principals plus `metrics_public`.
void ReadAdminAuth(const YAML::Node& node, const AuthConfigErrors& errors,
                   auth::AdminAuthConfig* out);

// A route's `policy:` {read, write, advance}. Names must be principals of `credentials` or "*".
void ReadRoutePolicy(const YAML::Node& node, const std::string& path,
                     const auth::CredentialsConfig& credentials, const AuthConfigErrors& errors,
                     auth::RoutePolicyConfig* out);

// `locks.policy:` {read, acquire}: principals of `credentials` (or "*") and, per principal, the
// lock-name patterns it may acquire, renew and release.
void ReadLockPolicy(const YAML::Node& node, const std::string& path,
                    const auth::CredentialsConfig& credentials, const AuthConfigErrors& errors,
                    auth::LockPolicyConfig* out);

}  // namespace fencegate::gateway
