#pragma once

#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "resource_adapters/adapter.h"

namespace fencegate::adapters {

// Names starting with this belong to the adapter itself (temp files, token sidecars); clients
// can neither read nor write them.
inline constexpr std::string_view kReservedNamePrefix = ".fencegate-";

// 414 path-too-long: a name or path longer than the store can serve by every method
// (path_length.h).
Problem PathTooLong(std::string detail);

// A request target mapped below the store's root: plain names only, no "." or "..", no '/'.
struct ResourcePath {
  std::vector<std::string> directories;
  // The final component; empty when the target names a directory (ends in '/', or is the
  // route prefix itself).
  std::string name;

  // The path relative to root ("a/b/c"), for locking and messages.
  std::string RelativePath() const;
};

// Maps a request target under `route_prefix` to a ResourcePath: the query is dropped, the
// prefix stripped and each segment percent-decoded on its own. Refuses with a Problem:
//   400 bad-path           invalid percent escape, NUL, empty inner segment, target outside
//                          the prefix;
//   414 path-too-long      a name longer than NAME_MAX bytes;
//   403 path-escapes-root  "." or ".." (raw or decoded), an encoded '/', a backslash, an
//                          absolute component ("//" right after the prefix);
//   403 reserved-name      a component starting with kReservedNamePrefix.
// Symlinks are not a concern here: the file store never follows them.
std::variant<ResourcePath, Problem> MapTargetToPath(std::string_view target,
                                                    std::string_view route_prefix);

}  // namespace fencegate::adapters
