#include "resource_adapters/filesystem/tombstone.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>

#include "resource_adapters/filesystem/safe_dir.h"

namespace fencegate::adapters {
namespace {

std::error_code OpenTombstoneDirectory(int directory_fd, UniqueFd& out) {
  const int fd =
      openat(directory_fd, kTombstoneDirectory, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return LastError();
  out = UniqueFd(fd);
  return {};
}

}  // namespace

std::optional<std::uint64_t> ReadTombstone(int directory_fd, const std::string& name) {
  UniqueFd tombstones;
  if (OpenTombstoneDirectory(directory_fd, tombstones)) return std::nullopt;
  UniqueFd tombstone;
  if (OpenEntryNoFollow(tombstones.get(), name, tombstone)) return std::nullopt;
  char text[kTokenTextMax];
  const ssize_t size = pread(tombstone.get(), text, sizeof text, 0);
  if (size <= 0) return std::nullopt;
  std::uint64_t token = 0;
  const auto [end, ec] = std::from_chars(text, text + size, token);
  if (ec != std::errc() || end != text + size) return std::nullopt;
  return token;
}

std::error_code WriteTombstone(int directory_fd, const std::string& name, std::uint64_t token,
                               bool sync) {
  if (mkdirat(directory_fd, kTombstoneDirectory, 0755) == 0) {
    if (sync && fsync(directory_fd) != 0) return LastError();
  } else if (errno != EEXIST) {
    return LastError();
  }
  UniqueFd tombstones;
  if (auto ec = OpenTombstoneDirectory(directory_fd, tombstones)) return ec;
  const int fd = openat(tombstones.get(), name.c_str(),
                        O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0) return LastError();
  UniqueFd tombstone(fd);
  char text[kTokenTextMax];
  const auto [end, ec] = std::to_chars(text, text + sizeof text, token);
  const auto size = static_cast<std::size_t>(end - text);
  const ssize_t written = pwrite(tombstone.get(), text, size, 0);
  if (written < 0) return LastError();
  if (static_cast<std::size_t>(written) != size) return std::make_error_code(std::errc::io_error);
  if (sync && (fsync(tombstone.get()) != 0 || fsync(tombstones.get()) != 0)) return LastError();
  return {};
}

void ClearTombstone(int directory_fd, const std::string& name) {
  UniqueFd tombstones;
  if (OpenTombstoneDirectory(directory_fd, tombstones)) return;
  unlinkat(tombstones.get(), name.c_str(), 0);
}

}  // namespace fencegate::adapters
