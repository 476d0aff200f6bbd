#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "lockstore/etcd/etcd_client.h"
#include "lockstore/locks/lock_record.h"
#include "lockstore/tokens/token.h"

namespace fencegate::lockstore::etcd {

// Where the etcd lock service keeps a lock (lock names have no '/', so a lock's keys are exactly
// those under its own prefix):
//   <prefix>locks/<name>/token            last token issued (decimal), no lease: it outlives
//                                         every holder, so tokens only grow
//   <prefix>locks/<name>/q/<lease hex>    one per acquire, under the acquire's etcd lease; the
//                                         key with the lowest create_revision holds the lock, the
//                                         others wait in create_revision order (FIFO)
//   <prefix>lock-audit/<name>/<token hex> one per forced release
std::string EtcdLocksPrefix(std::string_view prefix);
std::string EtcdLockPrefix(std::string_view prefix, std::string_view name);
std::string EtcdLockCounterKey(std::string_view prefix, std::string_view name);
std::string EtcdLockQueueKey(std::string_view prefix, std::string_view name, std::int64_t lease);
std::string EtcdLockAuditPrefix(std::string_view prefix);
std::string EtcdLockAuditKey(std::string_view prefix, std::string_view name, Token token);

// The value of a queue key. token 0: waiting (or being granted); otherwise the holder's token,
// written by the grant transaction together with the counter.
struct EtcdLockEntry {
  std::string owner_hash;  // SHA-256 of the owner token: renew and release from any replica
  std::int64_t ttl_ms = 0;
  std::int64_t acquired_at_unix_ms = 0;
  Token token = 0;
};
std::string EncodeEtcdLockEntry(const EtcdLockEntry& entry);
[[nodiscard]] bool DecodeEtcdLockEntry(std::string_view value, EtcdLockEntry* out);

std::string EncodeEtcdLockAudit(const LockAuditRecord& record);
[[nodiscard]] bool DecodeEtcdLockAudit(std::string_view value, LockAuditRecord* out);

// One lock as read from etcd.
struct EtcdLockState {
  Token last_token = 0;
  std::int64_t counter_mod_revision = 0;  // 0: never granted
  struct Queued {
    std::string key;
    std::int64_t create_revision = 0;
    std::int64_t lease = 0;
    EtcdLockEntry entry;
  };
  std::vector<Queued> queue;  // by create_revision: front() holds (or is being granted) the lock
  bool held() const { return !queue.empty() && queue.front().entry.token != 0; }
};

// Groups the key-values under EtcdLocksPrefix(prefix) by lock name. Undecodable values are
// skipped (and counted in `*skipped` when given): they cannot come from fencegate.
std::map<std::string, EtcdLockState> GroupEtcdLocks(std::string_view prefix,
                                                    const std::vector<EtcdKeyValue>& kvs,
                                                    std::size_t* skipped = nullptr);

}  // namespace fencegate::lockstore::etcd
