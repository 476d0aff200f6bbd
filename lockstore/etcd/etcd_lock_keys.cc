#include "lockstore/etcd/etcd_lock_keys.h"

#include <algorithm>
#include <charconv>
#include <cstdio>

#include <boost/json.hpp>

namespace fencegate::lockstore::etcd {
namespace json = boost::json;
namespace {

constexpr std::string_view kCounter = "token";
constexpr std::string_view kQueue = "q/";

std::string Hex16(std::uint64_t value) {
  char buffer[17];
  std::snprintf(buffer, sizeof buffer, "%016llx", static_cast<unsigned long long>(value));
  return buffer;
}

bool Int64(const json::object& object, std::string_view name, std::int64_t* out) {
  const json::value* value = object.if_contains(name);
  if (value == nullptr) return false;
  if (value->is_int64()) {
    *out = value->as_int64();
    return true;
  }
  if (value->is_uint64() && value->as_uint64() <= kMaxToken) {
    *out = static_cast<std::int64_t>(value->as_uint64());
    return true;
  }
  return false;
}

// Tokens are stored as JSON integers; a negative one is corrupt, not a token.
bool TokenField(const json::object& object, std::string_view name, Token* out) {
  std::int64_t value = 0;
  if (!Int64(object, name, &value) || value < 0) return false;
  *out = static_cast<Token>(value);
  return true;
}

bool String(const json::object& object, std::string_view name, std::string* out) {
  const json::value* value = object.if_contains(name);
  if (value == nullptr || !value->is_string()) return false;
  *out = std::string(value->as_string());
  return true;
}

bool ParseObject(std::string_view text, json::object* out) {
  boost::system::error_code ec;
  json::value value = json::parse(text, ec);
  if (ec || !value.is_object()) return false;
  *out = std::move(value.as_object());
  return true;
}

}  // namespace

std::string EtcdLocksPrefix(std::string_view prefix) { return std::string(prefix) + "locks/"; }

std::string EtcdLockPrefix(std::string_view prefix, std::string_view name) {
  return EtcdLocksPrefix(prefix) + std::string(name) + "/";
}

std::string EtcdLockCounterKey(std::string_view prefix, std::string_view name) {
  return EtcdLockPrefix(prefix, name) + std::string(kCounter);
}

std::string EtcdLockQueueKey(std::string_view prefix, std::string_view name, std::int64_t lease) {
  return EtcdLockPrefix(prefix, name) + std::string(kQueue) +
         Hex16(static_cast<std::uint64_t>(lease));
}

std::string EtcdLockAuditPrefix(std::string_view prefix) {
  return std::string(prefix) + "lock-audit/";
}

std::string EtcdLockAuditKey(std::string_view prefix, std::string_view name, Token token) {
  return EtcdLockAuditPrefix(prefix) + std::string(name) + "/" + Hex16(token);
}

std::string EncodeEtcdLockEntry(const EtcdLockEntry& entry) {
  return json::serialize(json::object{{"owner_hash", entry.owner_hash},
                                      {"ttl_ms", entry.ttl_ms},
                                      {"acquired_at_ms", entry.acquired_at_unix_ms},
                                      {"token", entry.token}});
}

bool DecodeEtcdLockEntry(std::string_view value, EtcdLockEntry* out) {
  json::object object;
  return ParseObject(value, &object) && String(object, "owner_hash", &out->owner_hash) &&
         Int64(object, "ttl_ms", &out->ttl_ms) &&
         Int64(object, "acquired_at_ms", &out->acquired_at_unix_ms) &&
         TokenField(object, "token", &out->token);
}

std::string EncodeEtcdLockAudit(const LockAuditRecord& record) {
  return json::serialize(json::object{{"at_ms", record.at_unix_ms},
                                      {"lock", record.lock},
                                      {"operator", record.operator_id},
                                      {"reason", record.reason},
                                      {"previous_owner_id", record.previous_owner_id},
                                      {"previous_token", record.previous_token},
                                      {"fence_token", record.fence_token}});
}

bool DecodeEtcdLockAudit(std::string_view value, LockAuditRecord* out) {
  json::object object;
  return ParseObject(value, &object) && Int64(object, "at_ms", &out->at_unix_ms) &&
         String(object, "lock", &out->lock) && String(object, "operator", &out->operator_id) &&
         String(object, "reason", &out->reason) &&
         String(object, "previous_owner_id", &out->previous_owner_id) &&
         TokenField(object, "previous_token", &out->previous_token) &&
         TokenField(object, "fence_token", &out->fence_token);
}

std::map<std::string, EtcdLockState> GroupEtcdLocks(std::string_view prefix,
                                                    const std::vector<EtcdKeyValue>& kvs,
                                                    std::size_t* skipped) {
  const std::string locks = EtcdLocksPrefix(prefix);
  std::map<std::string, EtcdLockState> out;
  const auto skip = [skipped] {
    if (skipped != nullptr) ++*skipped;
  };
  for (const EtcdKeyValue& kv : kvs) {
    if (!kv.key.starts_with(locks)) {
      skip();
      continue;
    }
    const std::string_view rest = std::string_view(kv.key).substr(locks.size());
    const auto slash = rest.find('/');
    if (slash == std::string_view::npos || slash == 0) {
      skip();
      continue;
    }
    const std::string name(rest.substr(0, slash));
    const std::string_view leaf = rest.substr(slash + 1);
    if (leaf == kCounter) {
      Token token = 0;
      const auto [end, ec] =
          std::from_chars(kv.value.data(), kv.value.data() + kv.value.size(), token);
      if (ec != std::errc() || end != kv.value.data() + kv.value.size()) {
        skip();
        continue;
      }
      EtcdLockState& state = out[name];
      state.last_token = token;
      state.counter_mod_revision = kv.mod_revision;
    } else if (leaf.starts_with(kQueue)) {
      EtcdLockState::Queued queued{kv.key, kv.create_revision, kv.lease, {}};
      if (!DecodeEtcdLockEntry(kv.value, &queued.entry)) {
        skip();
        continue;
      }
      out[name].queue.push_back(std::move(queued));
    } else {
      skip();
    }
  }
  for (auto& [name, state] : out) {
    std::sort(state.queue.begin(), state.queue.end(),
              [](const auto& a, const auto& b) { return a.create_revision < b.create_revision; });
  }
  return out;
}

}  // namespace fencegate::lockstore::etcd
