#include "gateway/cli/store_location.h"

#include <filesystem>
#include <system_error>

#include "gateway/cli/store_command.h"
#include "lockstore/rocksdb/store_identity.h"

namespace fencegate::gateway {
namespace {

namespace fs = std::filesystem;

// A database directory or its identity file: a store is (or was) there.
bool StoreExistsAt(const std::string& path) {
  std::error_code error;
  return fs::exists(path, error) || fs::exists(lockstore::IdentityFilePath(path), error);
}

}  // namespace

std::string StorePathRelativeToWorkingDirectory(const Config& config) {
  std::string written;
  if (!config.store.path_as_written.empty()) {
    written = config.store.path_as_written;
  } else if (!config.store.path.empty() || config.data_dir_as_written.empty()) {
    return {};  // a store path given otherwise, or --data-dir
  } else {
    written = (fs::path(config.data_dir_as_written) / "fences").string();
  }
  if (fs::path(written).is_absolute()) return {};
  std::error_code error;
  const std::string old_place = fs::absolute(written, error).lexically_normal().string();
  if (error || old_place == fs::path(FenceStorePath(config)).lexically_normal().string()) return {};
  return old_place;
}

lockstore::Status CheckStoreNotLeftBehind(const Config& config) {
  if (config.store.kind != "rocksdb") return lockstore::Status::Ok();
  const std::string configured = FenceStorePath(config);
  if (StoreExistsAt(configured)) return lockstore::Status::Ok();
  const std::string old_place = StorePathRelativeToWorkingDirectory(config);
  if (old_place.empty() || !StoreExistsAt(old_place)) return lockstore::Status::Ok();
  return lockstore::Status::InvalidArgument(
      "no fence store at " + configured + ", but one at " + old_place +
      ", where the relative path in " + config.source_path +
      " pointed when it was read against the working directory. Relative paths are now read "
      "against the config file's directory; starting with a new, empty store would admit stale "
      "tokens. Move the store (with its .identity file) to " +
      configured + ", or write the path in the config as " + old_place);
}

}  // namespace fencegate::gateway
