#pragma once

#include <functional>
#include <string_view>

#include <boost/asio/any_io_executor.hpp>

#include "gateway/admin/admin_json.h"
#include "gateway/server/reload_report.h"

namespace fencegate::gateway {

// POST /admin/reload (README "Reloading"): re-reads the configuration file off the admin thread.
//   200 application/json: {"result":"applied","generation":N,"config_hash":"...",
//        "routes":{"added":[],"removed":[],"changed":[]},"backends":{...},
//        "restart_required":["listen",...]}
//   422 application/problem+json (config-invalid) with "errors": ["FILE:LINE:COL: KEY: MESSAGE"]
// Query: accept_fence_key_change=ROUTE, repeatable.

// Starts a reload; the reload thread calls back with its report.
using AdminReloader =
    std::function<void(ReloadRequest request, std::function<void(const ReloadReport&)> done)>;

inline constexpr std::string_view kAdminReloadPath = "/admin/reload";

// Asks `reloader` for a reload; once it is done, fills `response` on `admin_executor` (the admin
// listener's thread) and calls `answered` there. `query` is the request's query string.
void StartAdminReload(const AdminReloader& reloader, boost::asio::any_io_executor admin_executor,
                      std::string_view query, AdminResponse* response,
                      std::function<void()> answered);

// The answer to a finished reload, as above.
void SetReloadAnswer(const ReloadReport& report, AdminResponse* response);

}  // namespace fencegate::gateway
