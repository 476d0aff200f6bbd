#pragma once

#include <string>
#include <vector>

#include "gateway/config/config.h"

namespace fencegate::gateway {

// One problem found in a configuration file, located for the operator.
struct ConfigError {
  std::string file;
  int line = 0;     // 1-based; 0 when unknown
  int column = 0;   // 1-based; 0 when unknown
  std::string key;  // dotted path, e.g. "routes[1].fence_key"
  std::string message;
  std::string ToString() const;  // "FILE:LINE:COL: KEY: MESSAGE"
};

// Loads and validates a YAML configuration file. Returns every error found (not only the first);
// `config` is meaningful only when the result is empty. Unknown keys are errors (a typo must not
// silently fall back to a default). Relative paths stay relative to the working directory.
std::vector<ConfigError> LoadConfigFile(const std::string& path, Config* config);

// The same, from text (for tests); `file` names it in errors.
std::vector<ConfigError> LoadConfigText(const std::string& text, const std::string& file,
                                        Config* config);

// Sets each filesystem backend's root from its root as written, with every "{data_dir}" replaced
// by config->data_dir. The loaders do this; call it again after changing data_dir.
void ExpandDataDirInPaths(Config* config);

}  // namespace fencegate::gateway
