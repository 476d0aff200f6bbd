#include "resource_adapters/filesystem/temp_sweep.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "resource_adapters/filesystem/safe_dir.h"
#include "resource_adapters/filesystem/temp_file.h"

namespace fencegate::adapters {
namespace {

void Fail(TempSweepResult& result, const std::string& what) {
  if (result.errors++ == 0) result.first_error = what + ": " + std::strerror(errno);
}

// Removes the temp file `name` of `dir_fd` if no write holds its lock. It is unlinked while
// the sweep holds the lock, so a writer that created it just now and had not locked it yet
// finds it unlinked once it gets the lock, and takes another (CreateLockedTempFile).
void RemoveIfAbandoned(int dir_fd, const char* name, TempSweepResult& result) {
  UniqueFd file(openat(dir_fd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
  if (!file.valid()) {
    if (errno != ENOENT && errno != ELOOP) Fail(result, std::string("open ") + name);
    return;  // committed or removed meanwhile; a symlink of that name is not ours
  }
  struct stat opened;
  if (fstat(file.get(), &opened) != 0 || !S_ISREG(opened.st_mode)) return;
  if (flock(file.get(), LOCK_EX | LOCK_NB) != 0) {
    if (errno == EWOULDBLOCK) {
      ++result.in_use;
    } else {
      Fail(result, std::string("lock ") + name);
    }
    return;
  }
  // The name may have been renamed away (a commit) between the open and the lock: then the
  // file locked is the committed one, and the name, if it exists, is another file.
  struct stat named;
  if (fstatat(dir_fd, name, &named, AT_SYMLINK_NOFOLLOW) != 0 || named.st_ino != opened.st_ino ||
      named.st_dev != opened.st_dev) {
    return;
  }
  if (unlinkat(dir_fd, name, 0) != 0) {
    if (errno != ENOENT) Fail(result, std::string("unlink ") + name);
    return;
  }
  ++result.removed;
  result.removed_bytes += static_cast<std::uint64_t>(opened.st_size);
}

// Sweeps `dir_fd` and, depth first, the directories below it. Only the directory being listed
// stays open, plus one descriptor per level above it.
void SweepDirectory(int dir_fd, TempSweepResult& result, const std::stop_token& stop) {
  std::vector<std::string> subdirectories;
  {
    const int listing_fd = dup(dir_fd);
    DIR* listing = listing_fd >= 0 ? fdopendir(listing_fd) : nullptr;
    if (listing == nullptr) {
      if (listing_fd >= 0) close(listing_fd);
      Fail(result, "list a directory");
      return;
    }
    while (!stop.stop_requested()) {
      errno = 0;
      const dirent* entry = readdir(listing);
      if (entry == nullptr) {
        if (errno != 0) Fail(result, "list a directory");
        break;
      }
      const std::string_view name = entry->d_name;
      if (name == "." || name == "..") continue;
      unsigned char type = entry->d_type;
      if (type == DT_UNKNOWN) {
        struct stat st;
        if (fstatat(dir_fd, entry->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
        type = S_ISDIR(st.st_mode) ? DT_DIR : S_ISREG(st.st_mode) ? DT_REG : DT_UNKNOWN;
      }
      if (type == DT_DIR) {
        subdirectories.emplace_back(name);
      } else if (type == DT_REG && IsTempName(name)) {
        RemoveIfAbandoned(dir_fd, entry->d_name, result);
      }
    }
    closedir(listing);
  }
  for (const std::string& name : subdirectories) {
    if (stop.stop_requested()) return;
    UniqueFd child(openat(dir_fd, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!child.valid()) {
      if (errno != ENOENT && errno != ELOOP && errno != ENOTDIR) Fail(result, "open " + name);
      continue;
    }
    SweepDirectory(child.get(), result, stop);
  }
}

}  // namespace

TempSweepResult RemoveAbandonedTempFiles(int root_fd, const std::stop_token& stop) {
  TempSweepResult result;
  SweepDirectory(root_fd, result, stop);
  return result;
}

}  // namespace fencegate::adapters
