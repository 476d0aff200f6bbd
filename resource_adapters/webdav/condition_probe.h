#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include <boost/asio/io_context.hpp>

#include "resource_adapters/transport/condition_book.h"
#include "resource_adapters/webdav/dav_connection.h"

namespace fencegate::adapters::webdav {

// The behaviours FencedWrite relies on, as probed (docs/BACKEND_TRUST.md, "WebDAV"). Required
// unless said otherwise.
namespace probe_names {
// A second exclusive LOCK of a locked resource is refused (423).
inline constexpr std::string_view kLockExclusive = "lock-exclusive";
// A PUT to a locked resource without its lock token is refused (423).
inline constexpr std::string_view kWriteWithoutLockToken = "write-without-lock-token-refused";
// A PUT presenting the lock token in the If header is accepted.
inline constexpr std::string_view kWriteWithLockToken = "write-with-lock-token-accepted";
// A dead property set by PROPPATCH is read back by PROPFIND (the stored fencing token).
inline constexpr std::string_view kDeadProperty = "proppatch-dead-property-read-back";
// A PUT whose If header names a state token the resource does not have is refused (412): what
// stops a write whose lock lapsed.
inline constexpr std::string_view kIfStateToken = "if-wrong-state-token-refused";
// A depth-0 LOCK of a collection refuses the creation of a member without its token (423).
inline constexpr std::string_view kCollectionLock = "collection-lock-guards-members";
// Optional (the fenced write does not rely on them; a client's own conditions do):
// PUT If-Match with a wrong ETag, and PUT If-None-Match: * on an existing resource, refused.
inline constexpr std::string_view kIfMatch = "put-if-match-wrong-etag";
inline constexpr std::string_view kIfNoneMatch = "put-if-none-match-existing";
}  // namespace probe_names

// The probes' scratch collection on the server: `prefix` as an absolute path ending in '/'
// (".fencegate-probe/" -> "/.fencegate-probe/").
std::string ProbeCollection(std::string_view prefix);

// Probes every server of `backend`, on `ioc`, in a collection of its own under the prefix
// (options.conditions.prefix; created if missing, the run's collection deleted afterwards,
// locks released): a probe holds when it holds on every server that answered. `done` gets
// the report of scope "": kUnreachable (with `error`) when no server could be probed to the
// end, or a server answered a setup step (MKCOL, the first PUT) unexpectedly; else the verdict
// from the probes.
void ProbeWebdavConditions(boost::asio::io_context& ioc,
                           std::shared_ptr<const WebdavBackend> backend,
                           std::function<void(ConditionReport)> done);

}  // namespace fencegate::adapters::webdav
