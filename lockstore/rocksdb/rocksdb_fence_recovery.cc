#include "lockstore/rocksdb/rocksdb_fence_recovery.h"

#include <rocksdb/db.h>
#include <rocksdb/options.h>

#include <memory>

#include "lockstore/codec/record_codec.h"

namespace fencegate::lockstore {
namespace {

constexpr char kFloorKeyPrefix[] = "fencegate.floor/";

constexpr char kIfLost[] =
    "To recover (README.md, Operations): restore the store from a backup, or, without one, move "
    "the identity file away and run 'fencegate store init'; then, before starting, run "
    "'fencegate store floor --all N' with N above every token handed out since.";
constexpr char kIfLogLost[] =
    "To recover (README.md, Operations): run 'fencegate store floor --all N' with N above every "
    "token handed out: it opens the store up to the damage and raises every fence to N.";

}  // namespace

StoreCheckOptions FenceStoreCheck(const RocksDbFenceStoreOptions& options) {
  StoreCheckOptions check;
  check.path = options.path;
  check.what = "fence store";
  check.if_lost = kIfLost;
  check.if_log_lost = kIfLogLost;
  check.creation = options.creation;
  // The floor is the recovery from a lost log: it must be able to open the store without one.
  check.require_wal = !options.salvage;
  return check;
}

rocksdb::WALRecoveryMode RecoveryMode(const RocksDbFenceStoreOptions& options) {
  return options.salvage ? rocksdb::WALRecoveryMode::kPointInTimeRecovery
                         : rocksdb::WALRecoveryMode::kTolerateCorruptedTailRecords;
}

std::string FloorKey(std::string_view prefix) { return kFloorKeyPrefix + std::string(prefix); }

Status LoadFenceFloors(rocksdb::DB& db, rocksdb::ColumnFamilyHandle* metadata,
                       std::vector<FenceFloor>* floors) {
  std::unique_ptr<rocksdb::Iterator> it(db.NewIterator(rocksdb::ReadOptions(), metadata));
  const std::string_view start = kFloorKeyPrefix;
  for (it->Seek(start); it->Valid() && it->key().starts_with(start); it->Next()) {
    FenceFloor floor;
    floor.prefix = it->key().ToStringView().substr(start.size());
    if (Status decoded = DecodeFenceValue(it->value().ToStringView(), &floor.record);
        !decoded.ok()) {
      return Status::Corruption("floor for \"" + floor.prefix + "\": " + decoded.ToString());
    }
    floors->push_back(std::move(floor));
  }
  if (!it->status().ok()) return Status::IOError(it->status().ToString());
  return Status::Ok();
}

std::optional<FenceRecord> HighestFloor(const std::vector<FenceFloor>& floors,
                                        std::string_view key) {
  std::optional<FenceRecord> highest;
  for (const FenceFloor& floor : floors) {
    if (!key.starts_with(floor.prefix)) continue;
    if (!highest || floor.record.highest > highest->highest) highest = floor.record;
  }
  return highest;
}

}  // namespace fencegate::lockstore
