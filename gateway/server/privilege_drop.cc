#include "gateway/server/privilege_drop.h"

#include <grp.h>
#include <pwd.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <vector>

namespace fencegate::gateway {
namespace {

lockstore::Status Failed(const std::string& what) {
  return lockstore::Status::IOError("cannot drop privileges: " + what + ": " +
                                    std::strerror(errno));
}

// getpw*_r/getgr*_r need a caller's buffer; sysconf's hint may be -1 or too small.
std::vector<char> LookupBuffer(int hint_name) {
  const long hint = ::sysconf(hint_name);
  return std::vector<char>(hint > 0 ? static_cast<std::size_t>(hint) : 16384);
}

bool ParseId(const std::string& text, unsigned* id) {
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, *id);
  return ec == std::errc() && ptr == end;
}

lockstore::Status LookUpUser(const std::string& name, std::string* canonical, uid_t* uid,
                             gid_t* gid) {
  std::vector<char> buffer = LookupBuffer(_SC_GETPW_R_SIZE_MAX);
  passwd entry{};
  passwd* found = nullptr;
  unsigned numeric = 0;
  const int rc = ParseId(name, &numeric)
                     ? ::getpwuid_r(numeric, &entry, buffer.data(), buffer.size(), &found)
                     : ::getpwnam_r(name.c_str(), &entry, buffer.data(), buffer.size(), &found);
  if (found == nullptr) {
    return lockstore::Status::NotFound("user '" + name +
                                       "': " + (rc != 0 ? std::strerror(rc) : "no such user"));
  }
  *canonical = entry.pw_name;
  *uid = entry.pw_uid;
  *gid = entry.pw_gid;
  return lockstore::Status::Ok();
}

lockstore::Status LookUpGroup(const std::string& name, gid_t* gid) {
  std::vector<char> buffer = LookupBuffer(_SC_GETGR_R_SIZE_MAX);
  group entry{};
  group* found = nullptr;
  unsigned numeric = 0;
  const int rc = ParseId(name, &numeric)
                     ? ::getgrgid_r(numeric, &entry, buffer.data(), buffer.size(), &found)
                     : ::getgrnam_r(name.c_str(), &entry, buffer.data(), buffer.size(), &found);
  if (found == nullptr) {
    return lockstore::Status::NotFound("group '" + name +
                                       "': " + (rc != 0 ? std::strerror(rc) : "no such group"));
  }
  *gid = entry.gr_gid;
  return lockstore::Status::Ok();
}

}  // namespace

lockstore::Status PrivilegeDrop::Resolve(const std::string& user, const std::string& group,
                                         PrivilegeDrop* out) {
  *out = PrivilegeDrop();
  if (user.empty()) return lockstore::Status::Ok();
  if (lockstore::Status found = LookUpUser(user, &out->user_, &out->uid_, &out->gid_);
      !found.ok()) {
    return found;
  }
  if (!group.empty()) return LookUpGroup(group, &out->gid_);
  return lockstore::Status::Ok();
}

lockstore::Status PrivilegeDrop::Plan(const std::string& user, const std::string& group,
                                      PrivilegeDrop* out) {
  if (lockstore::Status resolved = Resolve(user, group, out); !resolved.ok()) return resolved;
  if (user.empty()) return lockstore::Status::Ok();
  if (::geteuid() == 0 && out->uid_ != 0) {
    out->active_ = true;
    return lockstore::Status::Ok();
  }
  if (::geteuid() == out->uid_ && ::getegid() == out->gid_) return lockstore::Status::Ok();
  return lockstore::Status::InvalidArgument(
      "configured to run as user " + out->user_ + " (uid " + std::to_string(out->uid_) + ", gid " +
      std::to_string(out->gid_) + ") but started as uid " + std::to_string(::geteuid()) + ", gid " +
      std::to_string(::getegid()) +
      ": only root can change its user; start it as root or as that user");
}

lockstore::Status PrivilegeDrop::ActAsUser() const {
  if (!active_) return lockstore::Status::Ok();
  if (::initgroups(user_.c_str(), gid_) != 0) return Failed("initgroups(" + user_ + ")");
  if (::setegid(gid_) != 0) return Failed("setegid(" + std::to_string(gid_) + ")");
  if (::seteuid(uid_) != 0) return Failed("seteuid(" + std::to_string(uid_) + ")");
  return lockstore::Status::Ok();
}

lockstore::Status PrivilegeDrop::RegainRootToBind() const {
  if (!active_) return lockstore::Status::Ok();
  if (::seteuid(0) != 0) return Failed("seteuid(0) to bind the listeners");
  return lockstore::Status::Ok();
}

lockstore::Status PrivilegeDrop::DropForGood() const {
  if (!active_) return lockstore::Status::Ok();
  // Order matters: groups and gid while the process still has the right to change them.
  if (::initgroups(user_.c_str(), gid_) != 0) return Failed("initgroups(" + user_ + ")");
  if (::setresgid(gid_, gid_, gid_) != 0) return Failed("setresgid(" + std::to_string(gid_) + ")");
  if (::setresuid(uid_, uid_, uid_) != 0) return Failed("setresuid(" + std::to_string(uid_) + ")");
  uid_t real = 0, effective = 0, saved = 0;
  gid_t real_gid = 0, effective_gid = 0, saved_gid = 0;
  if (::getresuid(&real, &effective, &saved) != 0 ||
      ::getresgid(&real_gid, &effective_gid, &saved_gid) != 0) {
    return Failed("getresuid");
  }
  const bool dropped = real == uid_ && effective == uid_ && saved == uid_ && real_gid == gid_ &&
                       effective_gid == gid_ && saved_gid == gid_;
  // A process that can become root again has not dropped anything.
  if (!dropped || ::setuid(0) == 0 || ::seteuid(0) == 0 || (gid_ != 0 && ::setegid(0) == 0)) {
    return lockstore::Status::IOError(
        "cannot drop privileges: root could be regained after "
        "setresuid(" +
        std::to_string(uid_) + ")");
  }
  return lockstore::Status::Ok();
}

}  // namespace fencegate::gateway
