#pragma once

#include "lockstore/status.h"

namespace rocksdb {
class Status;
}  // namespace rocksdb

namespace fencegate::lockstore {

// The one translation of a RocksDB status into the lockstore's, for every RocksDB-backed store
// (fences, locks, idempotency records). Each RocksDB code keeps its meaning where the lockstore
// has one: NotFound, Corruption and InvalidArgument map to the same codes, a shutdown in
// progress is Unavailable (the store is closing), and everything else (I/O errors, no space,
// busy, timed out...) is IOError. The message is RocksDB's own. Opening a store reports its
// errors through OpenError (store_identity.h), which names the store's own cases first.
Status FromRocksDb(const rocksdb::Status& status);

}  // namespace fencegate::lockstore
