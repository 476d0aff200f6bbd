#pragma once

#include <string>
#include <vector>

#include "gateway/config/config.h"

namespace fencegate::gateway {

// `fencegate store init|floor ...`: operator commands on the fence store of a stopped gateway.
// `args` starts after "store". Returns the process exit status (see StoreUsageText()).
int RunStoreCommand(const std::vector<std::string>& args);

std::string StoreUsageText();

// The fence store's directory: store.path, or <data_dir>/fences when that is empty.
std::string FenceStorePath(const Config& config);

}  // namespace fencegate::gateway
