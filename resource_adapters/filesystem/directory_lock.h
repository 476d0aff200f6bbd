#pragma once

#include <system_error>

#include "resource_adapters/filesystem/safe_dir.h"

namespace fencegate::adapters {

// An exclusive flock() on the hidden file ".fencegate-lock" of one directory, held until
// destroyed. The path lock table only orders the writers of one process; two gateways sharing
// a directory (each with its own fence store) also need "check the stored token, then rename"
// to be atomic against each other, or the older of two racing writes could be renamed last.
// flock() locks belong to the open file description, so they also exclude other threads of
// this process that opened the file themselves. Blocks: I/O threads only.
class DirectoryLock {
 public:
  static std::error_code Acquire(int directory_fd, DirectoryLock& out);

  DirectoryLock() = default;
  DirectoryLock(DirectoryLock&&) = default;
  DirectoryLock& operator=(DirectoryLock&&) = default;

 private:
  // Closing the descriptor releases the lock.
  UniqueFd file_;
};

}  // namespace fencegate::adapters
