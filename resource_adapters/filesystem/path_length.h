#pragma once

#include <optional>

#include "resource_adapters/adapter.h"
#include "resource_adapters/filesystem/file_store.h"
#include "resource_adapters/filesystem/resource_path.h"

namespace fencegate::adapters {

// The longest path the file store serves (README "Filesystem backends"). Every method refuses
// a longer one alike, with 414 path-too-long before touching the disk, so that nothing can be
// written that could not be read or deleted again:
// - the path below the root, "dir/dir/name" as decoded, is at most PATH_MAX - 1 bytes: reads
//   and deletes open its directory in one openat2 call, which takes no more (ENAMETOOLONG),
//   while writes create it a component at a time, and a path that long is one that tools on
//   the store (rm, tar, backups) could not name either;
// - each name is at most NAME_MAX bytes (MapTargetToPath refuses longer ones), and with token
//   sidecars the file's name leaves room for the sidecar's ".fencegate-meta." prefix.
std::optional<Problem> CheckPathLength(const ResourcePath& path, TokenStorage storage);

}  // namespace fencegate::adapters
