#pragma once

#include <cstddef>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

namespace fencegate::adapters {

// One mutex per path, created on demand and dropped when nobody holds or waits for it. Makes
// "check preconditions and stored token, then rename" atomic against other writers of the
// same path in this process (I/O threads only: it blocks).
class PathLockTable {
 public:
  class Guard {
   public:
    Guard(PathLockTable& table, std::string key);
    Guard(const Guard&) = delete;
    Guard& operator=(const Guard&) = delete;
    ~Guard();

   private:
    PathLockTable& table_;
    std::string key_;
    std::shared_ptr<std::mutex> mutex_;
  };

  Guard Lock(std::string key) { return Guard(*this, std::move(key)); }

 private:
  struct Entry {
    std::shared_ptr<std::mutex> mutex = std::make_shared<std::mutex>();
    std::size_t users = 0;
  };

  std::mutex table_mutex_;
  std::unordered_map<std::string, Entry> entries_;
};

}  // namespace fencegate::adapters
