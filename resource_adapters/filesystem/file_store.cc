#include "resource_adapters/filesystem/file_store.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <utility>

#include "resource_adapters/filesystem/directory_lock.h"
#include "resource_adapters/filesystem/temp_file.h"
#include "resource_adapters/filesystem/tombstone.h"

namespace fencegate::adapters {

namespace {

constexpr char kTokenXattr[] = "user.fencegate.token";

std::string SidecarName(const std::string& name) { return std::string(kSidecarPrefix) + name; }

std::optional<std::uint64_t> ParseToken(const char* text, std::size_t size) {
  std::uint64_t value = 0;
  auto [end, ec] = std::from_chars(text, text + size, value);
  if (ec != std::errc() || end != text + size) {
    return std::nullopt;
  }
  return value;
}

std::string ETagOf(const struct stat& st) {
  const auto mtime_ns = static_cast<unsigned long long>(st.st_mtim.tv_sec) * 1000000000ULL +
                        static_cast<unsigned long long>(st.st_mtim.tv_nsec);
  char etag[64];
  std::snprintf(etag, sizeof etag, "\"%llx-%llx-%llx\"", static_cast<unsigned long long>(st.st_ino),
                static_cast<unsigned long long>(st.st_size), mtime_ns);
  return etag;
}

std::string HttpDate(std::time_t seconds) {
  std::tm utc;
  gmtime_r(&seconds, &utc);
  char text[64];
  std::strftime(text, sizeof text, "%a, %d %b %Y %H:%M:%S GMT", &utc);
  return text;
}

FileVersion VersionOf(const struct stat& st, std::optional<std::uint64_t> token) {
  return FileVersion{static_cast<std::uint64_t>(st.st_size), ETagOf(st),
                     HttpDate(st.st_mtim.tv_sec), token};
}

std::error_code CreateTempFile(int directory_fd, PendingWrite& write) {
  LockedTempFile temp;
  if (auto ec = CreateLockedTempFile(directory_fd, temp)) return ec;
  write.file = std::move(temp.file);
  write.temp_name = std::move(temp.name);
  return {};
}

std::error_code WriteAll(int fd, const char* data, std::size_t size) {
  while (size > 0) {
    const ssize_t written = ::write(fd, data, size);
    if (written < 0) {
      if (errno == EINTR) continue;
      return LastError();
    }
    data += written;
    size -= static_cast<std::size_t>(written);
  }
  return {};
}

bool SupportsUserXattrs(int root_fd) {
  PendingWrite probe;
  if (CreateTempFile(root_fd, probe)) {
    return true;  // cannot tell; writes will report the real problem
  }
  const bool supported = fsetxattr(probe.file.get(), kTokenXattr, "0", 1, 0) == 0 ||
                         (errno != ENOTSUP && errno != EOPNOTSUPP);
  unlinkat(root_fd, probe.temp_name.c_str(), 0);
  return supported;
}

}  // namespace

Problem ProblemFromError(std::error_code ec, std::string_view what) {
  const std::string detail = std::string(what) + ": " + ec.message();
  switch (ec.value()) {
    case ENOENT:
      return Problem{404, "not-found", "Not Found", detail};
    case ELOOP:
    case EXDEV:
      return Problem{403, "path-escapes-root", "Forbidden",
                     std::string(what) + ": symbolic links are not followed"};
    case ENOTDIR:
      return Problem{409, "not-a-directory", "Conflict", detail};
    case EISDIR:
      return Problem{409, "is-a-directory", "Conflict", detail};
    case ENAMETOOLONG:
      return PathTooLong(detail);
    case ENOSPC:
    case EDQUOT:
      return Problem{507, "insufficient-storage", "Insufficient Storage", detail};
    case EROFS:
    case EACCES:
    case EPERM:
      return Problem{503, "backend-unavailable", "Service Unavailable", detail};
    default:
      return Problem{500, "backend-io-error", "Internal Server Error", detail};
  }
}

std::error_code FileStore::Open(const std::string& root, bool sync_writes,
                                std::unique_ptr<FileStore>& out) {
  std::error_code ec;
  std::filesystem::create_directories(root, ec);
  if (ec) {
    return ec;
  }
  UniqueFd root_fd(open(root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!root_fd.valid()) {
    return LastError();
  }
  const TokenStorage storage =
      SupportsUserXattrs(root_fd.get()) ? TokenStorage::kXattr : TokenStorage::kSidecar;
  out = std::make_unique<FileStore>(std::move(root_fd), sync_writes, storage);
  return {};
}

FileStore::FileStore(UniqueFd root, bool sync_writes, TokenStorage token_storage)
    : root_(std::move(root)), sync_writes_(sync_writes), token_storage_(token_storage) {}

std::optional<std::uint64_t> FileStore::ReadToken(int directory_fd, const std::string& name,
                                                  int file_fd) const {
  char text[kTokenTextMax];
  ssize_t size = -1;
  if (token_storage_ == TokenStorage::kXattr) {
    size = fgetxattr(file_fd, kTokenXattr, text, sizeof text);
  } else {
    UniqueFd sidecar;
    if (!OpenEntryNoFollow(directory_fd, SidecarName(name), sidecar)) {
      size = pread(sidecar.get(), text, sizeof text, 0);
    }
  }
  if (size <= 0) {
    return std::nullopt;
  }
  return ParseToken(text, static_cast<std::size_t>(size));
}

OrProblem<FileStore::Current> FileStore::LookUp(int directory_fd, const std::string& name) const {
  UniqueFd file;
  if (auto ec = OpenEntryNoFollow(directory_fd, name, file)) {
    if (ec.value() == ENOENT) {
      return Current{std::nullopt, ReadTombstone(directory_fd, name)};
    }
    return ProblemFromError(ec, "open " + name);
  }
  struct stat st;
  if (fstat(file.get(), &st) != 0) {
    return ProblemFromError(LastError(), "stat " + name);
  }
  if (S_ISDIR(st.st_mode)) {
    return ProblemFromError(std::make_error_code(std::errc::is_a_directory), name);
  }
  if (!S_ISREG(st.st_mode)) {
    return Problem{403, "not-a-regular-file", "Forbidden", name + " is not a regular file"};
  }
  return Current{VersionOf(st, ReadToken(directory_fd, name, file.get())), std::nullopt};
}

OrProblem<OpenedFile> FileStore::OpenForRead(const ResourcePath& path) const {
  const Problem not_found{404, "not-found", "Not Found", "no file " + path.RelativePath()};
  // Directories are not resources: no listings, and no hint that one exists.
  if (path.name.empty()) {
    return not_found;
  }
  UniqueFd directory;
  if (auto ec = OpenDirectoryBeneath(root_.get(), path.directories, false, directory)) {
    if (ec.value() == ENOENT || ec.value() == ENOTDIR) {
      return not_found;
    }
    return ProblemFromError(ec, "open " + path.RelativePath());
  }
  OpenedFile opened;
  if (auto ec = OpenEntryNoFollow(directory.get(), path.name, opened.file)) {
    if (ec.value() == ENOENT) {
      return not_found;
    }
    return ProblemFromError(ec, "open " + path.RelativePath());
  }
  struct stat st;
  if (fstat(opened.file.get(), &st) != 0) {
    return ProblemFromError(LastError(), "stat " + path.RelativePath());
  }
  if (S_ISDIR(st.st_mode)) {
    return not_found;
  }
  if (!S_ISREG(st.st_mode)) {
    return Problem{403, "not-a-regular-file", "Forbidden",
                   path.RelativePath() + " is not a regular file"};
  }
  opened.version = VersionOf(st, ReadToken(directory.get(), path.name, opened.file.get()));
  return opened;
}

OrProblem<std::size_t> FileStore::ReadAt(int fd, std::uint64_t offset, char* data,
                                         std::size_t size) {
  std::size_t total = 0;
  while (total < size) {
    const ssize_t got = pread(fd, data + total, size - total, static_cast<off_t>(offset + total));
    if (got < 0) {
      if (errno == EINTR) continue;
      return ProblemFromError(LastError(), "read");
    }
    if (got == 0) {
      break;
    }
    total += static_cast<std::size_t>(got);
  }
  return total;
}

std::optional<Problem> FileStore::CheckRequirements(const WriteRequirements& requirements,
                                                    const Current& current) const {
  if (requirements.token && current.version && current.version->token &&
      *current.version->token > *requirements.token) {
    return Problem{409, "stale-token-at-backend", "Conflict",
                   "the file was written with fencing token " +
                       std::to_string(*current.version->token) + ", newer than " +
                       std::to_string(*requirements.token)};
  }
  if (requirements.token && current.tombstone && *current.tombstone > *requirements.token) {
    return Problem{409, "stale-token-at-backend", "Conflict",
                   "the file was deleted with fencing token " + std::to_string(*current.tombstone) +
                       ", newer than " + std::to_string(*requirements.token)};
  }
  const std::string* etag = current.version ? &current.version->etag : nullptr;
  if (!WriteConditionsHold(requirements.conditions, etag)) {
    return Problem{412, "precondition-failed", "Precondition Failed",
                   "If-Match/If-None-Match do not hold for the current file"};
  }
  return std::nullopt;
}

OrProblem<PendingWrite> FileStore::BeginWrite(const ResourcePath& path,
                                              const WriteRequirements& requirements) {
  const std::string relative = path.RelativePath();
  // Early refusal: saves streaming a body that would be refused at commit anyway.
  UniqueFd existing_directory;
  if (!OpenDirectoryBeneath(root_.get(), path.directories, false, existing_directory)) {
    auto current = LookUp(existing_directory.get(), path.name);
    if (auto* problem = std::get_if<Problem>(&current)) {
      return std::move(*problem);
    }
    if (auto problem = CheckRequirements(requirements, std::get<Current>(current))) {
      return std::move(*problem);
    }
  }
  PendingWrite write;
  if (auto ec = OpenDirectoryBeneath(root_.get(), path.directories, true, write.directory)) {
    return ProblemFromError(ec, "create directories for " + relative);
  }
  if (auto ec = CreateTempFile(write.directory.get(), write)) {
    return ProblemFromError(ec, "create temp file for " + relative);
  }
  return write;
}

std::error_code FileStore::Append(PendingWrite& write, const char* data, std::size_t size) {
  return WriteAll(write.file.get(), data, size);
}

PendingWrite::PendingWrite(PendingWrite&& other) noexcept
    : directory(std::move(other.directory)),
      file(std::move(other.file)),
      temp_name(std::exchange(other.temp_name, {})) {}

PendingWrite& PendingWrite::operator=(PendingWrite&& other) noexcept {
  if (this != &other) {
    FileStore::Abandon(*this);
    directory = std::move(other.directory);
    file = std::move(other.file);
    temp_name = std::exchange(other.temp_name, {});
  }
  return *this;
}

PendingWrite::~PendingWrite() { FileStore::Abandon(*this); }

void FileStore::Abandon(PendingWrite& write) {
  // Unlinked while the lock is still held (the file is still open), so a sweep never sees it
  // unlocked.
  if (write.directory.valid() && !write.temp_name.empty()) {
    unlinkat(write.directory.get(), write.temp_name.c_str(), 0);
  }
  write.temp_name.clear();
  write.file = UniqueFd();
}

std::error_code FileStore::StoreToken(PendingWrite& write, std::optional<std::uint64_t> token,
                                      PendingWrite& sidecar) {
  if (!token) {
    return {};
  }
  const std::string text = std::to_string(*token);
  if (token_storage_ == TokenStorage::kXattr) {
    if (fsetxattr(write.file.get(), kTokenXattr, text.data(), text.size(), 0) != 0) {
      return LastError();
    }
    return {};
  }
  // Its own handle on the directory, so that dropping it removes its temp file too.
  sidecar.directory = UniqueFd(fcntl(write.directory.get(), F_DUPFD_CLOEXEC, 0));
  if (!sidecar.directory.valid()) {
    return LastError();
  }
  if (auto ec = CreateTempFile(sidecar.directory.get(), sidecar)) {
    return ec;
  }
  if (auto ec = WriteAll(sidecar.file.get(), text.data(), text.size())) {
    return ec;
  }
  if (sync_writes_ && fsync(sidecar.file.get()) != 0) {
    return LastError();
  }
  return {};
}

std::error_code FileStore::SyncDirectory(int directory_fd) const {
  if (sync_writes_ && fsync(directory_fd) != 0) {
    return LastError();
  }
  return {};
}

OrProblem<CommittedWrite> FileStore::Commit(const ResourcePath& path, PendingWrite write,
                                            const WriteRequirements& requirements) {
  const std::string relative = path.RelativePath();
  const int directory = write.directory.get();
  // Its own temp file, when the token goes to a sidecar; a failure drops it with the write.
  PendingWrite sidecar;
  auto fail = [&](Problem problem) -> OrProblem<CommittedWrite> {
    Abandon(sidecar);
    Abandon(write);
    return problem;
  };

  if (sync_writes_ && fsync(write.file.get()) != 0) {
    return fail(ProblemFromError(LastError(), "fsync " + relative));
  }
  if (auto ec = StoreToken(write, requirements.token, sidecar)) {
    return fail(ProblemFromError(ec, "store token of " + relative));
  }

  auto guard = locks_.Lock(relative);
  DirectoryLock shared_guard;
  if (auto ec = DirectoryLock::Acquire(directory, shared_guard)) {
    return fail(ProblemFromError(ec, "lock directory of " + relative));
  }
  auto current = LookUp(directory, path.name);
  if (auto* problem = std::get_if<Problem>(&current)) {
    return fail(std::move(*problem));
  }
  if (auto problem = CheckRequirements(requirements, std::get<Current>(current))) {
    return fail(std::move(*problem));
  }
  if (token_storage_ == TokenStorage::kSidecar) {
    // The token lands before the content: after a crash in between, the old content carries
    // the newer token, which refuses more writers, never fewer.
    const std::string sidecar_name = SidecarName(path.name);
    if (!sidecar.temp_name.empty()) {
      if (renameat(directory, sidecar.temp_name.c_str(), directory, sidecar_name.c_str()) != 0) {
        return fail(ProblemFromError(LastError(), "store token of " + relative));
      }
      sidecar.temp_name.clear();
    } else if (unlinkat(directory, sidecar_name.c_str(), 0) != 0 && errno != ENOENT) {
      return fail(ProblemFromError(LastError(), "clear token of " + relative));
    }
  }
  if (renameat(directory, write.temp_name.c_str(), directory, path.name.c_str()) != 0) {
    return fail(ProblemFromError(LastError(), "rename onto " + relative));
  }
  write.temp_name.clear();
  if (std::get<Current>(current).tombstone) ClearTombstone(directory, path.name);
  struct stat st;
  if (fstat(write.file.get(), &st) != 0) {
    return fail(ProblemFromError(LastError(), "stat " + relative));
  }
  if (auto ec = SyncDirectory(directory)) {
    return fail(ProblemFromError(ec, "fsync directory of " + relative));
  }
  const bool created = !std::get<Current>(current).version.has_value();
  return CommittedWrite{VersionOf(st, requirements.token), created};
}

std::optional<Problem> FileStore::Remove(const ResourcePath& path,
                                         const WriteRequirements& requirements) {
  const std::string relative = path.RelativePath();
  const Problem not_found{404, "not-found", "Not Found", "no file " + relative};
  UniqueFd directory;
  if (auto ec = OpenDirectoryBeneath(root_.get(), path.directories, false, directory)) {
    if (ec.value() == ENOENT || ec.value() == ENOTDIR) {
      return not_found;
    }
    return ProblemFromError(ec, "open " + relative);
  }
  auto guard = locks_.Lock(relative);
  DirectoryLock shared_guard;
  if (auto ec = DirectoryLock::Acquire(directory.get(), shared_guard)) {
    return ProblemFromError(ec, "lock directory of " + relative);
  }
  auto current = LookUp(directory.get(), path.name);
  if (auto* problem = std::get_if<Problem>(&current)) {
    return std::move(*problem);
  }
  if (!std::get<Current>(current).version) {
    return not_found;
  }
  if (auto problem = CheckRequirements(requirements, std::get<Current>(current))) {
    return problem;
  }
  if (requirements.token) {
    if (auto ec = WriteTombstone(directory.get(), path.name, *requirements.token, sync_writes_)) {
      return ProblemFromError(ec, "record the deletion of " + relative);
    }
  }
  if (unlinkat(directory.get(), path.name.c_str(), 0) != 0) {
    return ProblemFromError(LastError(), "unlink " + relative);
  }
  if (token_storage_ == TokenStorage::kSidecar) {
    unlinkat(directory.get(), SidecarName(path.name).c_str(), 0);
  }
  if (auto ec = SyncDirectory(directory.get())) {
    return ProblemFromError(ec, "fsync directory of " + relative);
  }
  return std::nullopt;
}

}  // namespace fencegate::adapters
