#pragma once

#include <optional>
#include <string>
#include <vector>

#include "gateway/config/config.h"

namespace fencegate::gateway {

// The config file read without --config: <sysconfdir>/fencegate/fencegate.yaml of the install
// prefix the binary was built for (/etc/fencegate/fencegate.yaml in the package).
const char* DefaultConfigPath();

// What the fencegate command was asked to do.
struct CommandLine {
  enum class Action { kRun, kCheckConfig, kVersion, kHelp };
  Action action = Action::kRun;
  std::string config_path = DefaultConfigPath();
  std::optional<ListenAddress> listen;        // --listen HOST:PORT
  std::optional<ListenAddress> admin_listen;  // --admin-listen HOST:PORT
  std::optional<std::string> data_dir;        // --data-dir DIR
  // --accept-fence-key-change ROUTE, repeatable (gateway/server/route_bindings.h).
  std::vector<std::string> accepted_fence_key_changes;
};

// Parses argv. On error returns false and sets `error` to a one-line message.
bool ParseCommandLine(const std::vector<std::string>& args, CommandLine* out, std::string* error);

// Parses "HOST:PORT" or "[V6]:PORT".
bool ParseListenAddress(const std::string& text, ListenAddress* out, std::string* error);

// Applies --listen/--admin-listen/--data-dir over a loaded config (the data_dir override also
// moves a default store path).
void ApplyOverrides(const CommandLine& command_line, Config* config);

// The usage text for --help.
std::string UsageText();

}  // namespace fencegate::gateway
