#include "resource_adapters/filesystem/path_length.h"

#include <climits>
#include <string>

namespace fencegate::adapters {

std::optional<Problem> CheckPathLength(const ResourcePath& path, TokenStorage storage) {
  std::size_t length = path.name.size();
  for (const std::string& directory : path.directories) length += directory.size() + 1;
  if (length > PATH_MAX - 1) {
    return PathTooLong("the path below the store's root is longer than " +
                       std::to_string(PATH_MAX - 1) + " bytes");
  }
  // Names over NAME_MAX never get here; a sidecar's name must fit too.
  if (storage == TokenStorage::kSidecar && path.name.size() > NAME_MAX - kSidecarPrefix.size()) {
    return PathTooLong("the file name is longer than " +
                       std::to_string(NAME_MAX - kSidecarPrefix.size()) +
                       " bytes, which leaves no room for its token sidecar's name");
  }
  return std::nullopt;
}

}  // namespace fencegate::adapters
