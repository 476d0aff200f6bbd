#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <boost/json/value.hpp>

namespace fencegate::integration {

// GETs `target` from the admin listener and parses the body as JSON; nullopt (with `error`)
// if the request failed, the status was not 200 or the body is not JSON.
std::optional<boost::json::value> FetchAdminJson(std::uint16_t admin_port,
                                                 const std::string& target,
                                                 std::string* error = nullptr);

// The server `url` of backend `backend` in a GET /admin/backends body; null if absent.
boost::json::value FindBackendServer(const boost::json::value& backends, std::string_view backend,
                                     std::string_view url);

// GET /metrics as text; empty on failure.
std::string FetchMetricsText(std::uint16_t admin_port);

// The value of the sample `series` (name plus labels exactly as exposed, e.g.
// `fencegate_writes_admitted_total{route="kv"}`) in Prometheus text, or nullopt if absent.
// Label order is the exposition's; the helper matches the label set regardless of order.
std::optional<double> MetricValue(std::string_view exposition, std::string_view name,
                                  const std::string& labels);

// Waits until the gateway's /metrics report no open client connection and no request in
// flight; false if that did not happen within `limit`.
bool GatewayIdle(std::uint16_t admin_port,
                 std::chrono::milliseconds limit = std::chrono::seconds(30));

}  // namespace fencegate::integration
