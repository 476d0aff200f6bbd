#pragma once

#include <string_view>

#include <boost/json/object.hpp>

#include "gateway/admin/admin_json.h"
#include "gateway/server/gateway_context.h"

// The fence listing and a fence's history (docs/OPERATIONS.md "Admin API").

namespace fencegate::gateway {

inline constexpr std::string_view kAdminFenceListPath = "/admin/fences";

// GET /admin/fences?prefix=P&limit=N&after=KEY -> {"fences":[...],"next":KEY|null} in key
// order: one range scan of the store. Blocks on the store: admin thread.
void HandleFenceList(const GatewayContext& context, std::string_view query, std::string_view path,
                     AdminResponse* response);

// The "history" member of GET /admin/fences/{key}: {"advances":[...],"refusals":[...]}, newest
// first, at most kFenceHistoryLength each. Advances since the process started (the in-process
// AdvanceHistory), refusals from the store's trail.
inline constexpr std::size_t kFenceHistoryLength = 20;
boost::json::object FenceHistoryJson(const GatewayContext& context, const std::string& key);

}  // namespace fencegate::gateway
