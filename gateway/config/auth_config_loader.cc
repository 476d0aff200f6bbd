#include "gateway/config/auth_config_loader.h"

#include <algorithm>
#include <fstream>
#include <set>
#include <string_view>
#include <vector>

#include "gateway/auth/api_key.h"
#include "gateway/config/key_path.h"
#include "lockstore/locks/lock_rules.h"

// The `auth`, `admin` and route `policy` sections (README "Authentication and authorization").
// Kept apart from config_loader.cc; errors go to the same list through AuthConfigErrors.

namespace fencegate::gateway {
namespace {

constexpr std::string_view kEveryone = "*";

std::string Item(const std::string& path, std::size_t index) {
  return path + "[" + std::to_string(index) + "]";
}

bool ExpectMapping(const YAML::Node& node, const std::string& path,
                   const std::vector<std::string_view>& known, const AuthConfigErrors& errors) {
  if (!node.IsMap()) {
    errors.at_node(node, path, "expected a mapping of keys to values");
    return false;
  }
  for (const auto& entry : node) {
    const std::string name = entry.first.IsScalar() ? entry.first.Scalar() : std::string();
    if (std::find(known.begin(), known.end(), name) == known.end()) {
      std::string expected;
      for (std::string_view key : known) expected += (expected.empty() ? "" : ", ") + Quote(key);
      errors.at_node(entry.first, Child(path, name),
                     "unknown key " + Quote(name) + "; expected one of " + expected);
    }
  }
  if (errors.schema_key) {
    for (std::string_view key : known) {
      errors.schema_key(Child(path, key), static_cast<bool>(node[std::string(key)]));
    }
  }
  return true;
}

bool ReadString(const YAML::Node& node, const std::string& path, const AuthConfigErrors& errors,
                std::string* out) {
  if (!node.IsScalar() || node.Scalar().empty()) {
    errors.at_node(node, path, "expected a non-empty string");
    return false;
  }
  *out = node.Scalar();
  return true;
}

std::vector<std::string> ReadStrings(const YAML::Node& node, const std::string& path,
                                     const AuthConfigErrors& errors) {
  std::vector<std::string> out;
  if (!node.IsSequence()) {
    errors.at_node(node, path, "expected a list of strings");
    return out;
  }
  for (std::size_t i = 0; i < node.size(); ++i) {
    std::string text;
    if (ReadString(node[i], Item(path, i), errors, &text)) out.push_back(std::move(text));
  }
  return out;
}

bool IsPrincipalName(std::string_view name) {
  return !name.empty() && name.size() <= 128 && name != kEveryone &&
         std::all_of(name.begin(), name.end(), [](char c) {
           return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.' ||
                  c == '@' || c == ':';
         });
}

constexpr std::string_view kDigestHint =
    "expected the SHA-256 of the key as 64 hex digits (printf %s KEY | sha256sum)";

void ReadPrincipal(const YAML::Node& node, const std::string& path, const AuthConfigErrors& errors,
                   auth::PrincipalConfig* out) {
  if (!ExpectMapping(node, path,
                     {"name", "api_key_sha256", "tls_subjects", "tls_dns_sans", "tls_uri_sans"},
                     errors)) {
    return;
  }
  if (!node["name"]) {
    errors.at_node(node, Child(path, "name"), "required");
  } else if (ReadString(node["name"], Child(path, "name"), errors, &out->name) &&
             !IsPrincipalName(out->name)) {
    errors.at_node(node["name"], Child(path, "name"),
                   "a principal name: 1 to 128 of A-Z a-z 0-9 - _ . @ :, got " + Quote(out->name));
  }
  if (node["api_key_sha256"]) {
    const std::string key_path = Child(path, "api_key_sha256");
    for (const std::string& hex : ReadStrings(node["api_key_sha256"], key_path, errors)) {
      auth::KeyDigest digest;
      if (auth::ParseKeyDigestHex(hex, &digest)) {
        out->api_key_sha256.push_back(digest);
      } else {
        // The value is not echoed: a pasted key instead of its hash must not reach a log.
        errors.at_node(node["api_key_sha256"], key_path, std::string(kDigestHint));
      }
    }
  }
  if (node["tls_subjects"]) {
    out->tls_subjects = ReadStrings(node["tls_subjects"], Child(path, "tls_subjects"), errors);
  }
  if (node["tls_dns_sans"]) {
    out->tls_dns_sans = ReadStrings(node["tls_dns_sans"], Child(path, "tls_dns_sans"), errors);
  }
  if (node["tls_uri_sans"]) {
    out->tls_uri_sans = ReadStrings(node["tls_uri_sans"], Child(path, "tls_uri_sans"), errors);
  }
}

auth::PrincipalConfig& PrincipalNamed(const std::string& name, auth::CredentialsConfig* out) {
  for (auth::PrincipalConfig& principal : out->principals) {
    if (principal.name == name) return principal;
  }
  auth::PrincipalConfig& added = out->principals.emplace_back();
  added.name = name;
  return added;
}

// "NAME SHA256HEX" per line; blank lines and '#' comments are skipped.
void ReadKeysFile(const YAML::Node& node, const std::string& key, const AuthConfigErrors& errors,
                  auth::CredentialsConfig* out) {
  std::ifstream in(out->api_keys_file);
  if (!in) {
    errors.at_node(node, key, "cannot open " + Quote(out->api_keys_file));
    return;
  }
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    const std::size_t start = line.find_first_not_of(" \t");
    if (start == std::string::npos || line[start] == '#') continue;
    const std::size_t name_end = line.find_first_of(" \t", start);
    const std::size_t hex_start =
        name_end == std::string::npos ? name_end : line.find_first_not_of(" \t", name_end);
    const std::size_t hex_end =
        hex_start == std::string::npos ? hex_start : line.find_first_of(" \t", hex_start);
    const std::string name = line.substr(start, name_end - start);
    auth::KeyDigest digest;
    if (hex_start == std::string::npos ||
        line.find_first_not_of(" \t", hex_end) != std::string::npos || !IsPrincipalName(name) ||
        !auth::ParseKeyDigestHex(std::string_view(line).substr(hex_start, hex_end - hex_start),
                                 &digest)) {
      errors.in_file(out->api_keys_file, number, key,
                     "expected 'NAME SHA256HEX' (" + std::string(kDigestHint) + ")");
      continue;
    }
    PrincipalNamed(name, out).api_key_sha256.push_back(digest);
  }
}

bool Known(const auth::CredentialsConfig& credentials, const std::string& name) {
  return name == kEveryone ||
         std::any_of(credentials.principals.begin(), credentials.principals.end(),
                     [&](const auth::PrincipalConfig& p) { return p.name == name; });
}

void CheckNames(const YAML::Node& node, const std::string& path,
                const std::vector<std::string>& names, const auth::CredentialsConfig& credentials,
                const AuthConfigErrors& errors) {
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (!Known(credentials, names[i])) {
      errors.at_node(node, Item(path, i),
                     "no principal named " + Quote(names[i]) + " in auth.principals or " +
                         "auth.api_keys_file (or \"*\" for any authenticated principal)");
    }
  }
}

// A policy's grant map: principal (or "*") -> a list of strings (`what` in the error text).
std::map<std::string, std::vector<std::string>> ReadGrants(
    const YAML::Node& node, const std::string& path, std::string_view what,
    const auth::CredentialsConfig& credentials, const AuthConfigErrors& errors) {
  std::map<std::string, std::vector<std::string>> out;
  if (!node.IsMap()) {
    errors.at_node(node, path, "expected a mapping of principal to " + std::string(what));
    return out;
  }
  for (const auto& entry : node) {
    const std::string name = entry.first.IsScalar() ? entry.first.Scalar() : std::string();
    const std::string entry_key = Child(path, name);
    if (!Known(credentials, name)) {
      errors.at_node(entry.first, entry_key,
                     "no principal named " + Quote(name) + " (or \"*\" for any principal)");
      continue;
    }
    out[name] = ReadStrings(entry.second, entry_key, errors);
  }
  return out;
}

}  // namespace

void ReadCredentials(const YAML::Node& node, const std::string& path,
                     const AuthConfigErrors& errors, auth::CredentialsConfig* out) {
  if (node["principals"]) {
    const YAML::Node& list = node["principals"];
    const std::string list_path = Child(path, "principals");
    if (!list.IsSequence()) {
      errors.at_node(list, list_path, "expected a list of principals");
    } else {
      std::set<std::string> names;
      for (std::size_t i = 0; i < list.size(); ++i) {
        auth::PrincipalConfig principal;
        ReadPrincipal(list[i], Item(list_path, i), errors, &principal);
        if (principal.name.empty()) continue;
        if (!names.insert(principal.name).second) {
          errors.at_node(list[i]["name"], Child(Item(list_path, i), "name"),
                         "principal " + Quote(principal.name) + " is listed twice");
          continue;
        }
        out->principals.push_back(std::move(principal));
      }
    }
  }
  if (node["api_keys_file"]) {
    const std::string key = Child(path, "api_keys_file");
    if (ReadString(node["api_keys_file"], key, errors, &out->api_keys_file)) {
      if (errors.resolve_path) out->api_keys_file = errors.resolve_path(out->api_keys_file);
      ReadKeysFile(node["api_keys_file"], key, errors, out);
    }
  }
}

void ReadAdminAuth(const YAML::Node& node, const AuthConfigErrors& errors,
                   auth::AdminAuthConfig* out) {
  if (!ExpectMapping(node, "admin", {"principals", "api_keys_file", "metrics_public"}, errors)) {
    return;
  }
  ReadCredentials(node, "admin", errors, &out->credentials);
  if (const YAML::Node& flag = node["metrics_public"]) {
    if (flag.IsScalar() && (flag.Scalar() == "true" || flag.Scalar() == "false")) {
      out->metrics_public = flag.Scalar() == "true";
    } else {
      errors.at_node(flag, "admin.metrics_public", "expected true or false");
    }
  }
}

void ReadRoutePolicy(const YAML::Node& node, const std::string& path,
                     const auth::CredentialsConfig& credentials, const AuthConfigErrors& errors,
                     auth::RoutePolicyConfig* out) {
  if (!ExpectMapping(node, path, {"read", "write", "advance"}, errors)) return;
  if (credentials.principals.empty()) {
    errors.at_node(node, path,
                   "a route policy needs principals: add auth.principals or auth.api_keys_file");
  }
  for (std::string_view access : {"read", "write"}) {
    const std::string key = Child(path, access);
    const YAML::Node& list = node[std::string(access)];
    if (!list) continue;
    std::vector<std::string> names = ReadStrings(list, key, errors);
    CheckNames(list, key, names, credentials, errors);
    (access == "read" ? out->read : out->write) = std::move(names);
  }
  if (const YAML::Node& advance = node["advance"]) {
    out->advance = ReadGrants(advance, Child(path, "advance"),
                              "fence-key prefixes, e.g. "
                              "{writer-1: [\"kv:a\"]}",
                              credentials, errors);
  }
}

void ReadLockPolicy(const YAML::Node& node, const std::string& path,
                    const auth::CredentialsConfig& credentials, const AuthConfigErrors& errors,
                    auth::LockPolicyConfig* out) {
  if (!ExpectMapping(node, path, {"read", "acquire"}, errors)) return;
  if (credentials.principals.empty()) {
    errors.at_node(node, path,
                   "a lock policy needs principals: add auth.principals or auth.api_keys_file");
  }
  if (const YAML::Node& read = node["read"]) {
    out->read = ReadStrings(read, Child(path, "read"), errors);
    CheckNames(read, Child(path, "read"), out->read, credentials, errors);
  }
  if (const YAML::Node& acquire = node["acquire"]) {
    const std::string key = Child(path, "acquire");
    out->acquire = ReadGrants(acquire, key, "lock-name patterns, e.g. {worker-1: [\"orders-*\"]}",
                              credentials, errors);
    for (const auto& entry : acquire) {
      if (!entry.second.IsSequence()) continue;
      for (const YAML::Node& pattern : entry.second) {
        if (pattern.IsScalar() && !lockstore::IsValidLockPattern(pattern.Scalar())) {
          errors.at_node(
              pattern, Child(key, entry.first.Scalar()),
              "a lock-name pattern: A-Z a-z 0-9 . _ : - and '*', got " + Quote(pattern.Scalar()));
        }
      }
    }
  }
}

}  // namespace fencegate::gateway
