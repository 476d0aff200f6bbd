#pragma once

#include <cstddef>
#include <memory>
#include <string>

namespace fencegate::faults {

// A filesystem mounted by the test (as root) on an empty directory, unmounted on destruction.
// Store-failure tests put the gateway's data directory on one so they can fill it up or make
// the kernel turn it read-only without touching any other filesystem.
class ScopedMount {
 public:
  // tmpfs limited to `bytes`. Nullptr with `error` set if mounting is not permitted.
  static std::unique_ptr<ScopedMount> Tmpfs(const std::string& dir, std::size_t bytes,
                                            std::string* error);
  // An ext4 file system without a journal in the image file `image` (created, `bytes` long),
  // loop-mounted with errors=remount-ro, so that TriggerError() makes the kernel force it
  // read-only the way a failing disk would. Nullptr with `error` set if that is not possible.
  static std::unique_ptr<ScopedMount> LoopExt4(const std::string& dir, const std::string& image,
                                               std::size_t bytes, std::string* error);
  ~ScopedMount();
  ScopedMount(const ScopedMount&) = delete;
  ScopedMount& operator=(const ScopedMount&) = delete;

  const std::string& dir() const { return dir_; }

  // ext4 only: reports a file system error through /sys/fs/ext4/<device>/trigger_fs_error;
  // with errors=remount-ro the kernel then fails every further write, on files already open
  // too, with EROFS. False (with `error`) if the kernel did not.
  bool TriggerError(std::string* error) const;
  // Remounts read-write (mount(2) with MS_REMOUNT). False (with `error`) on failure.
  bool RemountReadWrite(std::string* error) const;

 private:
  ScopedMount(std::string dir, std::string device)
      : dir_(std::move(dir)), device_(std::move(device)) {}

  std::string dir_;
  std::string device_;  // "/dev/loopN" for LoopExt4, empty for tmpfs
};

// Writes zeros to `path` until the file system is full (ENOSPC). Returns the bytes written, or
// -1 (with `error`) on another failure.
long long FillUp(const std::string& path, std::string* error);

// True if a small file can be created, written and synced in `dir` right now.
bool Writable(const std::string& dir);

}  // namespace fencegate::faults
