#include "lockstore/rocksdb/store_identity.h"

#include <fcntl.h>
#include <unistd.h>

#include <rocksdb/db.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <system_error>

#include "lockstore/rocksdb/rocksdb_status.h"

namespace fencegate::lockstore {
namespace {

namespace fs = std::filesystem;

constexpr char kIdentityKey[] = "fencegate.identity";
constexpr char kFileHeader[] =
    "# fencegate store identity. Do not edit or copy: it is how fencegate notices that the "
    "store beside it was lost or swapped (README.md, Operations).\n";

// The store's directory without a trailing separator, so that "var/fences/" has a file name.
fs::path StoreDir(const std::string& store_path) {
  fs::path dir = fs::path(store_path).lexically_normal();
  if (!dir.has_filename()) dir = dir.parent_path();
  return dir;
}

bool HasWriteAheadLog(const fs::path& dir) {
  std::error_code ec;
  for (const fs::directory_entry& entry : fs::directory_iterator(dir, ec)) {
    const fs::path name = entry.path().filename();
    if (name.extension() != ".log") continue;
    const std::string stem = name.stem().string();
    if (!stem.empty() && stem.find_first_not_of("0123456789") == std::string::npos) return true;
  }
  return false;
}

bool IsMissingOrEmpty(const fs::path& dir) {
  std::error_code ec;
  if (!fs::exists(dir, ec)) return true;
  return fs::is_empty(dir, ec) && !ec;
}

// A data dir that holds nothing but the (empty) store directory: a first start that failed
// after creating it left it so.
bool HoldsNothingBut(const fs::path& parent, const fs::path& store_dir) {
  std::error_code ec;
  for (const fs::directory_entry& entry : fs::directory_iterator(parent, ec)) {
    if (entry.path().filename() != store_dir.filename()) return false;
  }
  return !ec;
}

std::string Describe(const StoreIdentity& identity) {
  return "store " + identity.id + " created " + identity.created;
}

Status ReadIdentityFile(const std::string& path, std::optional<StoreIdentity>* out) {
  std::error_code ec;
  if (!fs::exists(path, ec)) return Status::Ok();
  std::ifstream in(path);
  StoreIdentity identity;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("id: ", 0) == 0) identity.id = line.substr(4);
    if (line.rfind("created: ", 0) == 0) identity.created = line.substr(9);
  }
  if (!in.eof() || identity.id.empty()) {
    return Status::Corruption("cannot read the store identity in " + path +
                              " (no \"id:\" line); it was written by fencegate and must not be "
                              "edited");
  }
  *out = identity;
  return Status::Ok();
}

Status SyncedWrite(const std::string& path, const std::string& text) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return Status::IOError("cannot create " + path + ": " + std::strerror(errno));
  const bool written = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  const bool synced = written && ::fsync(fd) == 0;
  const int error = errno;
  ::close(fd);
  if (!synced) return Status::IOError("cannot write " + path + ": " + std::strerror(error));
  return Status::Ok();
}

// Written whole or not at all: a temporary file, synced, renamed over the identity file, and the
// directory synced so that the rename survives a power loss.
Status WriteIdentityFile(const std::string& path, const std::string& what,
                         const StoreIdentity& identity) {
  const std::string temporary = path + ".tmp";
  Status status =
      SyncedWrite(temporary, std::string(kFileHeader) + "store: " + what + "\nid: " + identity.id +
                                 "\ncreated: " + identity.created + "\n");
  if (!status.ok()) return status;
  if (::rename(temporary.c_str(), path.c_str()) != 0) {
    return Status::IOError("cannot rename " + temporary + ": " + std::strerror(errno));
  }
  const fs::path parent = fs::path(path).parent_path();
  const int dir = ::open(parent.empty() ? "." : parent.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir < 0 || ::fsync(dir) != 0) {
    const int error = errno;
    if (dir >= 0) ::close(dir);
    return Status::IOError("cannot sync " + parent.string() + ": " + std::strerror(error));
  }
  ::close(dir);
  return Status::Ok();
}

StoreIdentity NewIdentity() {
  std::random_device random;
  std::ostringstream id;
  id << std::hex;
  for (int i = 0; i < 4; ++i) {
    id.width(8);
    id.fill('0');
    id << random();
  }
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  ::gmtime_r(&now, &utc);
  char created[32];
  std::strftime(created, sizeof created, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return {id.str(), created};
}

// Stored in the database as "<id> <created>".
std::string EncodeIdentity(const StoreIdentity& identity) {
  return identity.id + " " + identity.created;
}

StoreIdentity DecodeIdentity(const std::string& value) {
  const std::size_t space = value.find(' ');
  if (space == std::string::npos) return {value, ""};
  return {value.substr(0, space), value.substr(space + 1)};
}

}  // namespace

std::string IdentityFilePath(const std::string& store_path) {
  return StoreDir(store_path).string() + ".identity";
}

Status CheckStorePresence(const StoreCheckOptions& options, StorePresence* presence) {
  const fs::path dir = StoreDir(options.path);
  const std::string identity_path = IdentityFilePath(options.path);
  *presence = {};
  if (Status read = ReadIdentityFile(identity_path, &presence->identity); !read.ok()) return read;
  std::error_code ec;
  if (fs::exists(dir / "CURRENT", ec)) {
    if (options.require_wal && !HasWriteAheadLog(dir)) {
      return Status::Corruption("the " + options.what +
                                "'s write-ahead log is missing: " + dir.string() +
                                " holds no *.log file, so writes acknowledged since its last "
                                "flush may be lost. " +
                                options.if_log_lost);
    }
    return Status::Ok();
  }
  if (presence->identity) {
    return Status::NotFound("the " + options.what + " is missing: " + dir.string() +
                            " holds no database, but " + identity_path + " records " +
                            Describe(*presence->identity) + ". " + options.if_lost);
  }
  if (!IsMissingOrEmpty(dir)) {
    return Status::Corruption(dir.string() + " holds files but no database (no CURRENT file). " +
                              options.if_lost);
  }
  if (options.creation == StoreCreation::kNever) {
    return Status::NotFound("no " + options.what + " at " + dir.string() + ". " + options.if_lost);
  }
  fs::path parent = dir.parent_path();
  if (parent.empty()) parent = ".";
  if (options.creation == StoreCreation::kIfParentEmpty && !IsMissingOrEmpty(parent) &&
      !HoldsNothingBut(parent, dir)) {
    return Status::NotFound(
        "no " + options.what + " at " + dir.string() + " and no " + identity_path + ", but " +
        parent.string() +
        " is not a new, empty data dir, so a store may have been here and been lost. On a first "
        "start, create the store with 'fencegate store init'. If a store was lost: " +
        options.if_lost);
  }
  presence->create = true;
  return Status::Ok();
}

Status ReconcileStoreIdentity(rocksdb::DB& db, rocksdb::ColumnFamilyHandle* metadata,
                              const StoreCheckOptions& options, const StorePresence& presence,
                              StoreIdentity* identity) {
  const std::string identity_path = IdentityFilePath(options.path);
  std::string stored;
  rocksdb::Status s = db.Get(rocksdb::ReadOptions(), metadata, kIdentityKey, &stored);
  if (!s.ok() && !s.IsNotFound()) return Status::IOError(s.ToString());
  if (presence.identity) {
    const std::string in_database = s.ok() ? Describe(DecodeIdentity(stored)) : "no identity";
    if (!s.ok() || DecodeIdentity(stored).id != presence.identity->id) {
      return Status::Corruption(StoreDir(options.path).string() + " holds " + in_database +
                                ", but " + identity_path + " records " +
                                Describe(*presence.identity) +
                                ": the store was swapped for another one. Put the store that "
                                "belongs here back. " +
                                options.if_lost);
    }
    *identity = *presence.identity;
    return Status::Ok();
  }
  if (s.ok()) {
    // The database is the store; only the file beside it was lost.
    *identity = DecodeIdentity(stored);
  } else {
    *identity = NewIdentity();
    rocksdb::WriteOptions sync;
    sync.sync = true;
    s = db.Put(sync, metadata, kIdentityKey, EncodeIdentity(*identity));
    if (!s.ok()) return Status::IOError(s.ToString());
  }
  return WriteIdentityFile(identity_path, options.what, *identity);
}

Status OpenError(const StoreCheckOptions& check, const rocksdb::Status& status) {
  const std::string detail = status.ToString();
  if (status.IsIOError() && detail.find("/LOCK") != std::string::npos) {
    return Status::Unavailable(check.path +
                               " is in use by another process (a gateway running on this data "
                               "dir?): stop it first (" +
                               detail + ")");
  }
  if (status.IsCorruption()) {
    return Status::Corruption("the " + check.what + " is damaged (" + detail +
                              "): what was written after the damage would be lost. " +
                              check.if_log_lost);
  }
  if (status.IsInvalidArgument() && detail.find("does not exist") != std::string::npos) {
    return Status::NotFound("no " + check.what + " at " + check.path + " (" + detail + "). " +
                            check.if_lost);
  }
  return FromRocksDb(status);
}

}  // namespace fencegate::lockstore
