#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <variant>

#include "resource_adapters/adapter.h"
#include "resource_adapters/filesystem/conditional_request.h"
#include "resource_adapters/filesystem/path_lock_table.h"
#include "resource_adapters/filesystem/resource_path.h"
#include "resource_adapters/filesystem/safe_dir.h"

namespace fencegate::adapters {

template <typename T>
using OrProblem = std::variant<T, Problem>;

// The version of a stored file as clients see it.
struct FileVersion {
  std::uint64_t size = 0;
  std::string etag;                    // strong: "<inode>-<size>-<mtime ns>", hex
  std::string last_modified;           // IMF-fixdate
  std::optional<std::uint64_t> token;  // the fencing token that wrote it, if any
};

// The token sidecar of file NAME is named kSidecarPrefix + NAME.
inline constexpr std::string_view kSidecarPrefix = ".fencegate-meta.";

// Where the fencing token of a file is kept.
enum class TokenStorage {
  kXattr,    // extended attribute user.fencegate.token on the file itself
  kSidecar,  // a file ".fencegate-meta.<name>" next to it, for filesystems without xattrs
};

// What a write or delete must satisfy against the current file, checked under the path lock.
struct WriteRequirements {
  ClientConditions conditions;
  // The token the gateway admitted. A file written by a greater token is not touched (the
  // directory may be shared by gateways with separate fence stores). Unfenced writes
  // (no token) are not checked and leave the file without a token.
  std::optional<std::uint64_t> token;
};

// A file being written: a locked temp file in the target's directory (temp_file.h). It lives
// as long as this: whatever drops a write before its commit (a failure, a cut upload, a drain)
// removes the temp file, on the thread that drops it: let that be an I/O thread.
struct PendingWrite {
  PendingWrite() = default;
  PendingWrite(PendingWrite&& other) noexcept;
  PendingWrite& operator=(PendingWrite&& other) noexcept;
  ~PendingWrite();

  UniqueFd directory;
  UniqueFd file;
  std::string temp_name;  // empty once committed or removed
};

struct CommittedWrite {
  FileVersion version;
  bool created = false;  // no file existed before
};

struct OpenedFile {
  UniqueFd file;
  FileVersion version;
};

// A directory used as a file store. All methods block on the disk: call them on I/O threads.
// Problems carry the HTTP status of the refusal (4xx) or failure (5xx, see ProblemFromError).
class FileStore {
 public:
  // Creates `root` if missing and detects whether it supports user xattrs.
  static std::error_code Open(const std::string& root, bool sync_writes,
                              std::unique_ptr<FileStore>& out);

  FileStore(UniqueFd root, bool sync_writes, TokenStorage token_storage);

  TokenStorage token_storage() const { return token_storage_; }

  // GET/HEAD: a regular file (a directory or missing file is 404, a symlink 403).
  OrProblem<OpenedFile> OpenForRead(const ResourcePath& path) const;

  // Reads up to `size` bytes at `offset`; returns the count (0 at end of file).
  static OrProblem<std::size_t> ReadAt(int fd, std::uint64_t offset, char* data, std::size_t size);

  // PUT, before the body is read: refuses early when the requirements already fail (the
  // check is repeated at commit), creates missing directories and the temp file.
  OrProblem<PendingWrite> BeginWrite(const ResourcePath& path,
                                     const WriteRequirements& requirements);

  static std::error_code Append(PendingWrite& write, const char* data, std::size_t size);

  // Makes the written file durable, stores the token and, under the path lock and the
  // directory's flock (other processes sharing the root), checks the requirements against the
  // current file and renames the temp file over it. The temp file
  // is removed on every failure.
  OrProblem<CommittedWrite> Commit(const ResourcePath& path, PendingWrite write,
                                   const WriteRequirements& requirements);

  // Removes the temp file of a write that will not be committed (as dropping it would).
  static void Abandon(PendingWrite& write);

  // The root directory, for the sweep of temp files left by cut writes (temp_sweep.h).
  int root_fd() const { return root_.get(); }

  // DELETE under the path lock and the directory's flock; 404 when there is nothing to delete.
  // A fenced DELETE leaves a tombstone with its token (tombstone.h).
  std::optional<Problem> Remove(const ResourcePath& path, const WriteRequirements& requirements);

 private:
  struct Current {
    std::optional<FileVersion> version;  // none: no file
    // With no file: the token of the fenced DELETE that removed it (see tombstone.h).
    std::optional<std::uint64_t> tombstone;
  };

  OrProblem<Current> LookUp(int directory_fd, const std::string& name) const;
  std::optional<std::uint64_t> ReadToken(int directory_fd, const std::string& name,
                                         int file_fd) const;
  std::error_code StoreToken(PendingWrite& write, std::optional<std::uint64_t> token,
                             PendingWrite& sidecar);
  std::optional<Problem> CheckRequirements(const WriteRequirements& requirements,
                                           const Current& current) const;
  std::error_code SyncDirectory(int directory_fd) const;

  UniqueFd root_;
  const bool sync_writes_;
  const TokenStorage token_storage_;
  PathLockTable locks_;
};

// Maps a failed file operation to the problem the client gets:
//   ENOENT 404 not-found; ELOOP/EXDEV 403 path-escapes-root (a symlink is never followed);
//   ENOTDIR/EISDIR 409 not-a-directory/is-a-directory; ENAMETOOLONG 414 path-too-long;
//   ENOSPC/EDQUOT 507 insufficient-storage; EROFS/EACCES/EPERM 503 backend-unavailable
//   (the store cannot be written until an operator fixes it; retrying later may work);
//   anything else 500 backend-io-error.
Problem ProblemFromError(std::error_code ec, std::string_view what);

}  // namespace fencegate::adapters
