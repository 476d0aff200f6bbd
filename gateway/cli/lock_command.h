#pragma once

#include <string>
#include <vector>

namespace fencegate::gateway::lock_client {

// `fencegate lock acquire|renew|release|run NAME ...`: a client of the built-in lock API.
// `args` starts after "lock". Returns the process exit status (see LockUsageText()).
int RunLockCommand(const std::vector<std::string>& args);

std::string LockUsageText();

}  // namespace fencegate::gateway::lock_client
