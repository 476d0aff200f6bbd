#include "resource_adapters/filesystem/directory_lock.h"

#include <fcntl.h>
#include <sys/file.h>

#include <cerrno>

namespace fencegate::adapters {

namespace {
// Inside the reserved ".fencegate-" prefix, so no client can read, write or delete it.
constexpr char kLockName[] = ".fencegate-lock";
}  // namespace

std::error_code DirectoryLock::Acquire(int directory_fd, DirectoryLock& out) {
  UniqueFd file(openat(directory_fd, kLockName, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644));
  if (!file.valid()) {
    return LastError();
  }
  while (flock(file.get(), LOCK_EX) != 0) {
    if (errno != EINTR) {
      return LastError();
    }
  }
  out.file_ = std::move(file);
  return {};
}

}  // namespace fencegate::adapters
