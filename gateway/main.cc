// fencegate: a fencing-aware HTTP reverse proxy. The edge of the process: parses the command
// line, loads the configuration, runs the server, and turns every failure into an exit code.

#include <cstdio>
#include <exception>
#include <iostream>
#include <string>
#include <vector>

#include "base/log/event_log.h"
#include "gateway/cli/lock_command.h"
#include "gateway/cli/store_command.h"
#include "gateway/config/command_line.h"
#include "gateway/config/config_loader.h"
#include "gateway/server/privilege_drop.h"
#include "gateway/server/server.h"
#include "gateway/server/service_notify.h"
#include "gateway/server/startup_check.h"

namespace {

using namespace fencegate::gateway;

constexpr const char* kVersionLine = "fencegate 0.1.0";

bool LoadOrReport(const std::string& path, Config* config) {
  const std::vector<ConfigError> errors = LoadConfigFile(path, config);
  for (const ConfigError& error : errors) std::cerr << error.ToString() << '\n';
  return errors.empty();
}

// --check-config: the file, then what start-up would load from it.
bool CheckOrReport(const CommandLine& command_line) {
  Config config;
  if (!LoadOrReport(command_line.config_path, &config)) return false;
  ApplyOverrides(command_line, &config);
  const std::vector<ConfigError> errors = CheckWhatStartWouldLoad(config);
  for (const ConfigError& error : errors) std::cerr << error.ToString() << '\n';
  return errors.empty();
}

int Run(int argc, char** argv) {
  const std::vector<std::string> args(argv, argv + argc);
  // `fencegate lock ...` is the lock API's client, not the server.
  if (args.size() >= 2 && args[1] == "lock") {
    return lock_client::RunLockCommand({args.begin() + 2, args.end()});
  }
  // `fencegate store ...` works on a stopped gateway's fence store.
  if (args.size() >= 2 && args[1] == "store") {
    return RunStoreCommand({args.begin() + 2, args.end()});
  }
  CommandLine command_line;
  std::string error;
  if (!ParseCommandLine(args, &command_line, &error)) {
    std::cerr << "fencegate: " << error << "\n\n" << UsageText();
    return kExitUsageError;
  }
  switch (command_line.action) {
    case CommandLine::Action::kVersion:
      std::cout << kVersionLine << std::endl;
      return kExitOk;
    case CommandLine::Action::kHelp:
      std::cout << UsageText();
      return kExitOk;
    case CommandLine::Action::kCheckConfig: {
      if (!CheckOrReport(command_line)) return kExitConfigError;
      std::cout << command_line.config_path << ": OK" << std::endl;
      return kExitOk;
    }
    case CommandLine::Action::kRun:
      break;
  }

  Config config;
  if (!LoadOrReport(command_line.config_path, &config)) return kExitConfigError;
  ApplyOverrides(command_line, &config);

  PrivilegeDrop privileges;
  if (const auto planned = PrivilegeDrop::Plan(config.user, config.group, &privileges);
      !planned.ok()) {
    std::cerr << "fencegate: start-up failed: " << planned.message() << std::endl;
    return kExitStartupFailure;
  }
  // A failed start is said in plain text on stderr, as before (the terminal, scripts and tests
  // read it, quotes and all); when events go to a file, the event log gets it too.
  const bool events_to_file = !config.log.path.empty() && config.log.path != "-";
  Server server(std::move(config), command_line, std::move(privileges));
  if (const fencegate::lockstore::Status started = server.Start(); !started.ok()) {
    std::cerr << "fencegate: start-up failed: " << started.message() << std::endl;
    if (events_to_file) fencegate::log::Error("start-up failed", {{"error", started.message()}});
    return kExitStartupFailure;
  }
  std::cout << "fencegate listening traffic=" << server.traffic_address()
            << " admin=" << server.admin_address() << std::endl;
  NotifyReady();
  return server.RunUntilSignal();
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return Run(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "fencegate: fatal: " << e.what() << std::endl;
    return kExitStartupFailure;
  }
}
