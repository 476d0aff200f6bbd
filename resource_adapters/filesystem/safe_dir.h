#pragma once

#include <string>
#include <system_error>
#include <utility>
#include <vector>

namespace fencegate::adapters {

// An owned file descriptor, closed on destruction.
class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  UniqueFd(UniqueFd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept;
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  ~UniqueFd();

  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }

 private:
  int fd_ = -1;
};

// The last errno as an error_code.
std::error_code LastError();

// Opens the directory reached from `root_fd` through `components` (plain names) without ever
// following a symbolic link, so nothing outside root is reachable: a symlink anywhere on the
// way fails with ELOOP. Uses openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS) when the kernel
// has it, else walks the components with O_NOFOLLOW. With `create`, missing directories are
// made (and their parents fsynced so they survive a crash).
std::error_code OpenDirectoryBeneath(int root_fd, const std::vector<std::string>& components,
                                     bool create, UniqueFd& out);

// Opens the entry `name` of `dir_fd` read-only without following a symlink (ELOOP) and without
// blocking on FIFOs.
std::error_code OpenEntryNoFollow(int dir_fd, const std::string& name, UniqueFd& out);

}  // namespace fencegate::adapters
