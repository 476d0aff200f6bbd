#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lockstore/fence/fence_record.h"
#include "lockstore/rocksdb/rocksdb_fence_store.h"
#include "lockstore/rocksdb/store_identity.h"
#include "lockstore/status.h"

namespace rocksdb {
class ColumnFamilyHandle;
class DB;
enum class WALRecoveryMode : char;
}  // namespace rocksdb

// How the RocksDB fence store is checked when it opens, recovered from a damaged log, and
// floored. Internal to lockstore/rocksdb_fence_*.cc.
namespace fencegate::lockstore {

// Every key under `prefix` ("" for all keys) stands at least at record.highest, whether the
// store has a record of it or not (`fencegate store floor`).
struct FenceFloor {
  std::string prefix;
  FenceRecord record;
};

StoreCheckOptions FenceStoreCheck(const RocksDbFenceStoreOptions& options);

// A torn last record (kill -9 during a write that was never acknowledged) is dropped; damage
// anywhere before it refuses the open. Salvage replays the log up to the damage instead.
rocksdb::WALRecoveryMode RecoveryMode(const RocksDbFenceStoreOptions& options);

// The floors kept in the metadata family, as `fencegate store floor` left them.
Status LoadFenceFloors(rocksdb::DB& db, rocksdb::ColumnFamilyHandle* metadata,
                       std::vector<FenceFloor>* floors);

// The metadata key of the floor over `prefix`.
std::string FloorKey(std::string_view prefix);

// The highest floor over `key`, if any.
std::optional<FenceRecord> HighestFloor(const std::vector<FenceFloor>& floors,
                                        std::string_view key);

}  // namespace fencegate::lockstore
