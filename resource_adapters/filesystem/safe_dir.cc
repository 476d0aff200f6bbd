#include "resource_adapters/filesystem/safe_dir.h"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>

namespace fencegate::adapters {

namespace {

constexpr int kDirectoryFlags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;

std::error_code OpenWithOpenat2(int root_fd, const std::vector<std::string>& components,
                                UniqueFd& out) {
  std::string path;
  for (const auto& component : components) {
    if (!path.empty()) path += '/';
    path += component;
  }
  open_how how{};
  how.flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC;
  how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
  const long fd = syscall(SYS_openat2, root_fd, path.c_str(), &how, sizeof how);
  if (fd < 0) {
    return LastError();
  }
  out = UniqueFd(static_cast<int>(fd));
  return {};
}

// O_NOFOLLOW | O_DIRECTORY on a symlink may report ENOTDIR; say what it really is.
std::error_code ExplainNotDirectory(int dir_fd, const std::string& name) {
  struct stat st;
  if (fstatat(dir_fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode)) {
    return std::make_error_code(std::errc::too_many_symbolic_link_levels);
  }
  return std::make_error_code(std::errc::not_a_directory);
}

std::error_code OpenChildDirectory(int dir_fd, const std::string& name, bool create,
                                   UniqueFd& out) {
  int fd = openat(dir_fd, name.c_str(), kDirectoryFlags);
  if (fd < 0 && errno == ENOENT && create) {
    if (mkdirat(dir_fd, name.c_str(), 0755) == 0) {
      fsync(dir_fd);
    } else if (errno != EEXIST) {
      return LastError();
    }
    fd = openat(dir_fd, name.c_str(), kDirectoryFlags);
  }
  if (fd < 0) {
    if (errno == ENOTDIR) {
      return ExplainNotDirectory(dir_fd, name);
    }
    return LastError();
  }
  out = UniqueFd(fd);
  return {};
}

std::error_code WalkComponents(int root_fd, const std::vector<std::string>& components, bool create,
                               UniqueFd& out) {
  UniqueFd current(openat(root_fd, ".", kDirectoryFlags));
  if (!current.valid()) {
    return LastError();
  }
  for (const auto& component : components) {
    UniqueFd next;
    if (auto ec = OpenChildDirectory(current.get(), component, create, next)) {
      return ec;
    }
    current = std::move(next);
  }
  out = std::move(current);
  return {};
}

}  // namespace

UniqueFd& UniqueFd::operator=(UniqueFd&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) close(fd_);
    fd_ = std::exchange(other.fd_, -1);
  }
  return *this;
}

UniqueFd::~UniqueFd() {
  if (fd_ >= 0) close(fd_);
}

std::error_code LastError() { return std::error_code(errno, std::system_category()); }

std::error_code OpenDirectoryBeneath(int root_fd, const std::vector<std::string>& components,
                                     bool create, UniqueFd& out) {
  if (!create && !components.empty()) {
    auto ec = OpenWithOpenat2(root_fd, components, out);
    // Kernels before 5.6 (ENOSYS) or sandboxes that filter the call (EPERM): walk instead.
    if (ec.value() != ENOSYS && ec.value() != EPERM) {
      return ec;
    }
  }
  return WalkComponents(root_fd, components, create, out);
}

std::error_code OpenEntryNoFollow(int dir_fd, const std::string& name, UniqueFd& out) {
  const int fd = openat(dir_fd, name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    return LastError();
  }
  out = UniqueFd(fd);
  return {};
}

}  // namespace fencegate::adapters
