#pragma once

#include <string>
#include <string_view>
#include <system_error>

#include "resource_adapters/filesystem/safe_dir.h"

namespace fencegate::adapters {

// Writes go to a temp file in the target's directory, renamed over the target at commit. A
// temp file is named kTempPrefix + 16 hex digits and is held under flock(LOCK_EX) by its
// writer for as long as it exists, so that a sweep (temp_sweep.h) can tell the temp file of a
// write still running, in this process or another one sharing the root, from one left by a
// write that was cut: the kernel drops the lock when its writer's file is closed, kill -9
// included.
inline constexpr std::string_view kTempPrefix = ".fencegate-tmp-";

bool IsTempName(std::string_view name);

// An open, locked temp file. Removing it is its owner's job (PendingWrite).
struct LockedTempFile {
  UniqueFd file;
  std::string name;
};

// Creates a temp file in `directory_fd` and takes its lock. A sweep that removed the new file
// between its creation and the lock is detected (no link left) and another name is tried.
std::error_code CreateLockedTempFile(int directory_fd, LockedTempFile& out);

}  // namespace fencegate::adapters
