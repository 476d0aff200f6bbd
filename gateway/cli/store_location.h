#pragma once

#include "gateway/config/config.h"
#include "lockstore/status.h"

// Relative paths in a config file once meant "relative to the working directory"; they now mean
// "relative to the file's directory". For a file run from elsewhere than its own directory that
// moves the fence store. A store found at neither place would be created new and empty, and an
// empty store admits every token, a zombie's too; so a store left at the old place stops the
// start instead.
namespace fencegate::gateway {

// The fence store's path as the working directory made it of the relative data_dir or
// store.path as written; "" when that is the configured path anyway (absolute paths, the file in
// the working directory, --data-dir).
std::string StorePathRelativeToWorkingDirectory(const Config& config);

// InvalidArgument, naming both paths, when the configured store does not exist but one stands at
// StorePathRelativeToWorkingDirectory(config); Ok otherwise.
lockstore::Status CheckStoreNotLeftBehind(const Config& config);

}  // namespace fencegate::gateway
