#pragma once

#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

namespace fencegate::adapters::webdav {

// The WebDAV locks one backend's fenced writes hold or are asking for, shared by every network
// thread. Each LOCK carries this registry's owner mark, so a lock the server reports with the
// mark that no write here holds or is asking for was orphaned: its UNLOCK was lost (mod_dav_fs
// can lose one when requests run at once, docs/BACKEND_TRUST.md) or its LOCK's answer never
// arrived. Such a lock only blocks its resource until its Timeout, and may be released at once.
// Another gateway, or this one's factory before a reload, has another mark: its locks are never
// taken for orphans here.
class OwnLocks {
 public:
  OwnLocks();
  // For tests: a registry with a chosen mark.
  explicit OwnLocks(std::string owner) : owner_(std::move(owner)) {}

  // The text of the LOCK request's DAV:owner element.
  const std::string& owner() const { return owner_; }

  // A LOCK of `path` is about to be sent.
  void Asking(const std::string& path);
  // That LOCK was answered (or failed): `granted` is the lock token it returned, if any.
  void Answered(const std::string& path, const std::optional<std::string>& granted);
  // The UNLOCK of `token` was answered (or failed): the write no longer holds it.
  void Released(const std::string& token);

  // Whether a lock reported on `path` with this registry's mark and `token` is an orphan: no
  // write here holds the token, and no LOCK of `path` or of a collection above it (whose lock
  // the server reports on `path` too) awaits its answer, which might be that very lock.
  bool IsOrphan(std::string_view path, const std::string& token) const;

 private:
  const std::string owner_;
  mutable std::mutex mutex_;
  std::unordered_map<std::string, unsigned> asking_;  // path -> LOCKs awaiting their answer
  std::unordered_set<std::string> held_;              // lock tokens, "<opaquelocktoken:...>"
};

}  // namespace fencegate::adapters::webdav
