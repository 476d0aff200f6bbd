#pragma once

#include <string_view>

#include "gateway/admin/admin_api.h"
#include "gateway/server/gateway_context.h"

namespace fencegate::gateway {

// The operator's view of the built-in locks, on the admin listener:
//   GET  /admin/locks                        every known lock
//   GET  /admin/locks/{name}                 one lock: holder (owner id = truncated hash of the
//                                            owner token, never the token), token, expiry, waiters
//   POST /admin/locks/{name}/force-release   {"reason": "...", "operator": "..."} both required;
//                                            with admin principals configured the audited
//                                            operator is the authenticated principal,
//                                            "operator" may be left out, and another name in
//                                            it only lands in the reason (AuditedOperator)
//   GET  /admin/lock-audit?limit=N           forced releases, newest first
// Runs on the admin thread, which may block on the store.
bool IsAdminLockPath(std::string_view path);
// Allowed methods for `path` ("GET, HEAD" or "POST").
std::string_view AdminLockAllow(std::string_view path);
// `principal`: the authenticated admin principal ("" when the admin API is open).
void HandleAdminLock(const GatewayContext& context, const AdminApi::Request& request,
                     std::string_view path, std::string_view query, std::string_view principal,
                     AdminApi::Response* response);

}  // namespace fencegate::gateway
