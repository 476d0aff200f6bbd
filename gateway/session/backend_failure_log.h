#pragma once

#include <string_view>

#include "gateway/config/config.h"
#include "resource_adapters/adapter.h"

namespace fencegate::gateway {

// Says in the event log that `backend` could not be reached, timed out, answered with something
// that is not HTTP, or (a local backend) failed an I/O operation: which backend, its address,
// the route and the cause. At most one line a second per backend across the process
// (log::LogRateLimit), carrying how many were held back, so a dead backend under load does not
// flood the log. Nothing for other outcomes (a client that went away is not backend news).
void LogBackendFailure(const BackendConfig& backend, std::string_view route,
                       const adapters::ForwardOutcome& outcome);

}  // namespace fencegate::gateway
