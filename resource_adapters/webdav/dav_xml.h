#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fencegate::adapters::webdav {

// The dead property that keeps, with each resource, the highest fencing token that wrote it.
inline constexpr std::string_view kTokenNamespace = "urn:fencegate";
inline constexpr std::string_view kTokenProperty = "fencing-token";

// The LOCK request body: an exclusive write lock whose DAV:owner is `owner` (plain text, no
// markup: the fenced writes' mark, see own_locks.h).
std::string LockRequestBody(std::string_view owner = "fencegate");
// The PROPFIND (Depth 0) request body asking for the locks that apply to a resource.
std::string PropfindLockDiscoveryBody();
// The PROPFIND (Depth 0) request body asking for one token property only: the resource's own
// (kTokenProperty) or a member's on its parent (see member_property.h), in kTokenNamespace.
std::string PropfindTokenBody(std::string_view property = kTokenProperty);
// The PROPPATCH request body that sets that property to `token`.
std::string ProppatchTokenBody(std::uint64_t token, std::string_view property = kTokenProperty);

// What a PROPFIND multistatus says about the token property.
struct StoredToken {
  enum class Kind { kAbsent, kValue, kMalformed, kUnreadable };
  Kind kind = Kind::kAbsent;
  std::uint64_t value = 0;
};

// Finds the token property `property` (in kTokenNamespace, under any prefix) in a PROPFIND
// response. A property listed without content, or under a propstat whose status is not 2xx
// (servers list a missing property under a 404 propstat), is absent; content that is not a
// decimal number is malformed (someone else wrote the property, so nothing can be concluded); a
// body that is not well-formed XML is unreadable.
StoredToken ParseStoredToken(std::string_view multistatus,
                             std::string_view property = kTokenProperty);

// True when a PROPPATCH multistatus reports `property` set: a 2xx propstat lists it and no
// propstat or response reports a failure (a PROPPATCH is all or nothing, RFC 4918 9.2).
bool ProppatchSucceeded(std::string_view multistatus, std::string_view property = kTokenProperty);

// True when a multistatus (a 207 answer to LOCK) reports 423 Locked for any resource or
// property: another holder's lock stands in the way.
bool MultistatusReportsLocked(std::string_view multistatus);

// One DAV:activelock a PROPFIND of DAV:lockdiscovery reports: its token as a Coded-URL
// ("<opaquelocktoken:...>") and its DAV:owner's text, trimmed.
struct ActiveLock {
  std::string token;
  std::string owner;
};
// The active locks in a PROPFIND multistatus (under 2xx propstats only); none when the body is
// not well-formed XML. Locks without a usable token are left out.
std::vector<ActiveLock> ParseActiveLocks(std::string_view multistatus);

// The lock token a LOCK response body names (DAV:lockdiscovery/activelock/locktoken/href) as a
// Coded-URL, "<opaquelocktoken:...>", for a server that leaves out the Lock-Token header;
// nullopt unless the body names exactly one.
std::optional<std::string> ParseLockDiscoveryToken(std::string_view lock_response);

// The Lock-Token response header value, "<opaquelocktoken:...>" as sent (Coded-URL, RFC 4918
// 10.5), or nullopt when the value is not a Coded-URL.
std::optional<std::string> ParseLockTokenHeader(std::string_view value);

}  // namespace fencegate::adapters::webdav
