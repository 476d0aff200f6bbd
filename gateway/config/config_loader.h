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
// silently fall back to a default). Relative paths (data_dir, roots, store and log paths, every
// *_file) are resolved against the file's directory; ${VAR}, ${VAR:-default} and $VAR in values
// are expanded from the environment (gateway/config/environment_expansion.h).
std::vector<ConfigError> LoadConfigFile(const std::string& path, Config* config);

// The same, from text (for tests); `file` names it in errors.
// A key the schema allows in a mapping of the text (dotted, as in errors), and whether the text
// has it there.
struct SchemaKey {
  std::string key;
  bool present = false;
};

// `schema_keys`, when given, receives every key the schema allows in each mapping the text has:
// the test that config/examples/full-reference.yaml shows every key walks the schema with it.
std::vector<ConfigError> LoadConfigText(const std::string& text, const std::string& file,
                                        Config* config,
                                        std::vector<SchemaKey>* schema_keys = nullptr);

// The absolute directory of `file` (the base of its relative paths); "" if it cannot be told.
std::string ConfigDirectory(const std::string& file);

// Sets each filesystem backend's root from its root as written, with every "{data_dir}" replaced
// by config->data_dir and made absolute against config->config_dir. The loaders do this; call it
// again after changing data_dir.
void ExpandDataDirInPaths(Config* config);

}  // namespace fencegate::gateway
