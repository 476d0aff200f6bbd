#pragma once

#include <string_view>

#include "gateway/admin/admin_json.h"
#include "gateway/server/config_generation.h"
#include "gateway/server/gateway_context.h"

// GET /admin/summary (docs/OPERATIONS.md "Admin API"): the console's overview in one answer,
// from what the process keeps in bounded memory (TrafficSeries, RefusalTops) plus the state of
// the store, cluster, backends and locks.

namespace fencegate::gateway {

inline constexpr std::string_view kAdminSummaryPath = "/admin/summary";
// The longest top lists the summary shows.
inline constexpr std::size_t kSummaryTopLength = 10;

void HandleSummary(const GatewayContext& context, const ConfigGeneration& generation,
                   std::string_view query, std::string_view path, AdminResponse* response);

}  // namespace fencegate::gateway
