#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "lockstore/status.h"

namespace rocksdb {
class ColumnFamilyHandle;
class DB;
class Status;
}  // namespace rocksdb

// A RocksDB store remembers that it exists, so that a lost or swapped store is noticed instead
// of being replaced, silently, by an empty one (which would let writers with old tokens in).
// Two copies of one identity: a file beside the store's directory (<path>.identity) and a record
// inside the database. A database missing where its identity file stands, or a database whose
// record names another store than the file beside it, is refused.
namespace fencegate::lockstore {

// When a store that does not exist yet may be created. Whatever the mode, a store whose identity
// file is there but whose database is not is refused.
enum class StoreCreation {
  // Neither the database nor its identity file exists (`fencegate store init`; stores that are
  // opened the first time a feature is used).
  kIfAbsent,
  // ... and the directory that holds them (the data dir) is missing or empty: a first start.
  // Anything in it (files served from it, a config) means a store may have been here.
  kIfParentEmpty,
  // Only open a store that exists (`fencegate store floor`).
  kNever,
};

struct StoreIdentity {
  std::string id;       // 32 hex digits, random
  std::string created;  // UTC, e.g. 2026-12-05T19:04:00Z
};

// What is on disk, looked at before RocksDB opens the store.
struct StorePresence {
  bool create = false;                    // no database yet: one is to be created
  std::optional<StoreIdentity> identity;  // read from the identity file, when there is one
};

struct StoreCheckOptions {
  std::string path;         // the store's database directory
  std::string what;         // "fence store", for messages
  std::string if_lost;      // how to recover a store that is lost or swapped, for messages
  std::string if_log_lost;  // how to recover one whose write-ahead log is lost or damaged
  StoreCreation creation = StoreCreation::kIfAbsent;
  // Refuse a database without any write-ahead log file. RocksDB always keeps the live log, even
  // after kill -9 or a clean close, so none at all means it was deleted, and with it whatever
  // was written since the last flush.
  bool require_wal = true;
};

std::string IdentityFilePath(const std::string& store_path);

// Decides whether RocksDB may open (or create) the store. Errors: NotFound for a store that is
// missing (or may not be created here), Corruption for a damaged or swapped one; the message
// says what is missing and how to recover.
Status CheckStorePresence(const StoreCheckOptions& options, StorePresence* presence);

// After RocksDB opened the store: the identity recorded in the database must be the file's. A new
// store, or one made before stores had identities, gets a fresh identity, written to the
// database (synced) first and then to the file, so that a crash in between leaves a database
// whose file is simply written again at the next open.
Status ReconcileStoreIdentity(rocksdb::DB& db, rocksdb::ColumnFamilyHandle* metadata,
                              const StoreCheckOptions& options, const StorePresence& presence,
                              StoreIdentity* identity);

// RocksDB's refusal to open the store, said in words an operator can act on (a store in use by
// another process, a damaged one).
Status OpenError(const StoreCheckOptions& check, const rocksdb::Status& status);

}  // namespace fencegate::lockstore
