#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gateway/config/config_diff.h"

namespace fencegate::gateway {

// A request to reload the configuration file (README "Reloading").
struct ReloadRequest {
  std::string trigger;  // "SIGHUP" or "POST /admin/reload", for the log
  // Routes whose fence-key template may change (the POST's accept_fence_key_change=ROUTE).
  std::vector<std::string> accepted_fence_key_changes;
};

// What a reload did: applied (with what changed), or refused with the reasons.
struct ReloadReport {
  bool applied = false;
  std::string trigger;
  std::string config_path;
  std::uint64_t generation = 0;  // the generation in force afterwards
  std::string config_hash;       // of the file in force afterwards
  ConfigDiff diff;               // when applied
  // When refused: the file's errors as --check-config prints them ("FILE:LINE:COL: KEY: MESSAGE"),
  // or why the new configuration could not be built.
  std::vector<std::string> errors;
};

// Logs the result of a reload to stderr: one line, then one per error (refused) or per key that
// needs a restart (applied).
void LogReload(const ReloadReport& report);

}  // namespace fencegate::gateway
