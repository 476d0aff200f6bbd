#include "resource_adapters/filesystem/path_lock_table.h"

namespace fencegate::adapters {

PathLockTable::Guard::Guard(PathLockTable& table, std::string key)
    : table_(table), key_(std::move(key)) {
  {
    std::lock_guard<std::mutex> lock(table_.table_mutex_);
    Entry& entry = table_.entries_[key_];
    ++entry.users;
    mutex_ = entry.mutex;
  }
  mutex_->lock();
}

PathLockTable::Guard::~Guard() {
  mutex_->unlock();
  std::lock_guard<std::mutex> lock(table_.table_mutex_);
  auto entry = table_.entries_.find(key_);
  if (--entry->second.users == 0) {
    table_.entries_.erase(entry);
  }
}

}  // namespace fencegate::adapters
