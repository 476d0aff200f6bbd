#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace fencegate::adapters::webdav {

// Where the token of a member outlives the member: a dead property of its parent collection,
// named after the member, in kTokenNamespace. Deleting or moving a resource away removes its
// own fencing-token property with it; the parent keeps this one, and every fenced write that
// creates, removes or replaces the member checks and updates it under a depth-0 LOCK of the
// parent (which, in mod_dav, guards the collection's membership).
struct MemberProperty {
  std::string parent;    // the parent collection's path, with a trailing '/'
  std::string property;  // the property's local name, "member-<hex of the member's name>"
};

// The member property for `path` (a server path without query); nullopt for "/" and paths
// that are not absolute. The member's name is percent-decoded first, so that the encodings
// of one name share one property; hex keeps any name a valid XML local name.
std::optional<MemberProperty> MemberPropertyOf(std::string_view path);

}  // namespace fencegate::adapters::webdav
