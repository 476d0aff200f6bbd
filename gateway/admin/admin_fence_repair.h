#pragma once

#include <string_view>

#include "gateway/admin/admin_api.h"
#include "gateway/server/gateway_context.h"

namespace fencegate::gateway {

// Audited fence repair on the admin listener (README "Tokens"):
//   POST /admin/fences/{key}/repair   {"highest_token": N, "reason": "...", "operator": "..."}
//                                     lowers the fence to N; reason required, operator optional.
//                                     The audited operator is the authenticated admin principal
//                                     (AuditedOperator, gateway/admin/admin_request.h)
//   GET  /admin/fence-repairs?limit=N the repairs, newest first
// The only way a fence goes backwards; GET /admin/fences/{key} stays read-only. Runs on the
// admin thread, which may block on the store.
bool IsFenceRepairRequest(const AdminApi::Request& request, std::string_view path);
// `principal`: the authenticated admin principal ("" when the admin API is open).
void HandleFenceRepair(const GatewayContext& context, const AdminApi::Request& request,
                       std::string_view path, std::string_view query, std::string_view principal,
                       AdminApi::Response* response);

}  // namespace fencegate::gateway
