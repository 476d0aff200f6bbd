#pragma once

#include <string>
#include <vector>

#include "gateway/config/config.h"

namespace fencegate::gateway {

// Named entries (routes, backends) of two configurations, by name.
struct NamedChanges {
  std::vector<std::string> added;
  std::vector<std::string> removed;
  std::vector<std::string> changed;  // present in both, written differently

  bool empty() const { return added.empty() && removed.empty() && changed.empty(); }
};

// What a reload changes (README "Reloading"): the routes and backends added, removed or changed,
// and the keys whose new value takes effect only at the next start (the listeners' addresses,
// data_dir, user and group, the store, the cluster, the thread count, the built-in locks, the
// listeners' TLS settings, the relay buffer budget, the drain time, the access log's error-line
// cap, the event log (`log`), and an access log turned on or off or moved to or from standard
// output). Entries are compared as written in the files (a file a key names, such as a key file, is
// not compared), the command-line overrides as applied.
struct ConfigDiff {
  NamedChanges routes;
  NamedChanges backends;
  std::vector<std::string> restart_required;  // dotted keys, e.g. "listen", "store"
};

// `before_text` and `after_text` are the YAML files `before` and `after` were loaded from;
// both must have loaded without errors.
ConfigDiff DiffConfigs(const Config& before, const std::string& before_text, const Config& after,
                       const std::string& after_text);

// Sets in `next` the running values of every key DiffConfigs counts as needing a restart, so
// that a reloaded configuration never half-applies one (a lock policy with the old lock service,
// say). `diff` is DiffConfigs(running, ..., *next, ...).
void KeepRestartOnlyValues(const Config& running, const ConfigDiff& diff, Config* next);

}  // namespace fencegate::gateway
