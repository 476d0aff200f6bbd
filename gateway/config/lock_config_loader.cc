#include "gateway/config/config_sections.h"

#include <algorithm>
#include <string_view>

namespace fencegate::gateway::config_reading {

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

}  // namespace

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

}  // namespace fencegate::gateway::config_reading
