#include "gateway/cli/store_command.h"

#include <iostream>
#include <memory>
#include <optional>

#include "gateway/cli/store_location.h"
#include "gateway/config/command_line.h"
#include "gateway/config/config_loader.h"
#include "gateway/http/time_format.h"
#include "gateway/server/server.h"
#include "lockstore/rocksdb/rocksdb_fence_store_impl.h"

namespace fencegate::gateway {
namespace {

struct StoreArgs {
  std::string verb;                                       // init | floor
  std::vector<std::string> gateway_args = {"fencegate"};  // --config, --data-dir
  std::optional<std::string> prefix;                      // floor: "" for --all
  lockstore::Token floor = 0;
};

bool ParseToken(const std::string& text, lockstore::Token* token, std::string* error) {
  const std::optional<lockstore::Token> parsed = lockstore::ParseToken(text);
  if (!parsed) {
    *error = "'" + text + "' is not a token (0 .. 2^63-1)";
    return false;
  }
  *token = *parsed;
  return true;
}

bool ParseStoreArgs(const std::vector<std::string>& args, StoreArgs* out, std::string* error) {
  if (args.empty() || (args[0] != "init" && args[0] != "floor")) {
    *error = args.empty() ? "which store command? (init or floor)"
                          : "unknown store command '" + args[0] + "'";
    return false;
  }
  out->verb = args[0];
  for (std::size_t i = 1; i < args.size(); ++i) {
    const std::string& arg = args[i];
    const auto missing = [&](std::size_t count) {
      if (i + count < args.size()) return false;
      *error = arg + " needs " + (count == 1 ? "a value" : std::to_string(count) + " values");
      return true;
    };
    if (out->verb == "floor" && (arg == "--all" || arg == "--prefix")) {
      if (out->prefix) {
        *error = "give one of --all N and --prefix P N";
        return false;
      }
      if (arg == "--all") {
        if (missing(1) || !ParseToken(args[++i], &out->floor, error)) return false;
        out->prefix = "";
      } else {
        if (missing(2)) return false;
        out->prefix = args[++i];
        if (!ParseToken(args[++i], &out->floor, error)) return false;
      }
    } else if (arg == "--config" || arg == "--data-dir") {
      if (missing(1)) return false;
      out->gateway_args.push_back(arg);
      out->gateway_args.push_back(args[++i]);
    } else if (arg.starts_with("--config=") || arg.starts_with("--data-dir=")) {
      out->gateway_args.push_back(arg);
    } else {
      *error = "unknown argument '" + arg + "'";
      return false;
    }
  }
  if (out->verb == "floor" && !out->prefix) {
    *error = "store floor needs --all N or --prefix P N";
    return false;
  }
  return true;
}

int Init(const std::string& path) {
  lockstore::RocksDbFenceStoreOptions options;
  options.path = path;
  options.creation = lockstore::StoreCreation::kIfAbsent;
  std::unique_ptr<lockstore::RocksDbFenceStore> store;
  const lockstore::Status status = lockstore::RocksDbFenceStore::Open(options, &store);
  if (!status.ok()) {
    std::cerr << "fencegate store init: " << path << ": " << status.ToString() << std::endl;
    return kExitStartupFailure;
  }
  store->Close();
  std::cout << "fence store ready at " << path << " (identity in "
            << lockstore::IdentityFilePath(path) << ")" << std::endl;
  return kExitOk;
}

int Floor(const std::string& path, const std::string& prefix, lockstore::Token floor) {
  lockstore::RocksDbFenceStoreOptions options;
  options.path = path;
  options.salvage = true;
  // Only an existing store: a floor on an empty one made here would hide that it was lost.
  options.creation = lockstore::StoreCreation::kNever;
  std::unique_ptr<lockstore::RocksDbFenceStore> store;
  lockstore::Status status = lockstore::RocksDbFenceStore::Open(options, &store);
  lockstore::RocksDbFenceStore::FloorResult result;
  if (status.ok()) status = store->RaiseFloor(prefix, floor, NowUnixMs(), &result);
  if (store) store->Close();
  if (!status.ok()) {
    std::cerr << "fencegate store floor: " << path << ": " << status.ToString() << std::endl;
    return kExitStartupFailure;
  }
  std::cout << "fence store " << path << ": every fence "
            << (prefix.empty() ? std::string("") : "under \"" + prefix + "\" ")
            << "is now at least " << floor << " (" << result.raised << " of " << result.examined
            << " stored fences raised; keys never written start at " << floor << ")" << std::endl;
  return kExitOk;
}

}  // namespace

std::string FenceStorePath(const Config& config) {
  return config.store.path.empty() ? config.data_dir + "/fences" : config.store.path;
}

std::string StoreUsageText() {
  return "Usage: fencegate store init  [--config FILE] [--data-dir DIR]\n"
         "       fencegate store floor [--config FILE] [--data-dir DIR] (--all N | --prefix P N)\n"
         "\n"
         "Operator commands on the fence store of a stopped gateway (the rocksdb store).\n"
         "  init    create the fence store if there is none (a first start in a data dir that is\n"
         "          not empty needs it); an existing store is left as it is\n"
         "  floor   every fence (--all) or every fence whose key starts with P, stored or not,\n"
         "          is at least N from now on: after restoring a backup or losing the store's\n"
         "          log, pick N above every token handed out. Opens a store whose log is\n"
         "          damaged or missing, keeping what it holds up to the damage.\n"
         "\n"
         "Exit codes: 0 ok, 1 configuration error, 2 usage error, 3 the store cannot be opened\n"
         "or written (missing, damaged, or in use by a running gateway).\n";
}

int RunStoreCommand(const std::vector<std::string>& args) {
  if (!args.empty() && (args[0] == "--help" || args[0] == "-h")) {
    std::cout << StoreUsageText();
    return kExitOk;
  }
  StoreArgs store_args;
  CommandLine command_line;
  std::string error;
  if (!ParseStoreArgs(args, &store_args, &error) ||
      !ParseCommandLine(store_args.gateway_args, &command_line, &error)) {
    std::cerr << "fencegate store: " << error << "\n\n" << StoreUsageText();
    return kExitUsageError;
  }
  Config config;
  const std::vector<ConfigError> errors = LoadConfigFile(command_line.config_path, &config);
  for (const ConfigError& config_error : errors) std::cerr << config_error.ToString() << '\n';
  if (!errors.empty()) return kExitConfigError;
  ApplyOverrides(command_line, &config);
  if (config.store.kind != "rocksdb") {
    std::cerr << "fencegate store: the configured store is '" << config.store.kind
              << "': these commands work on the rocksdb store. An etcd store's fences are etcd "
                 "keys: back up and restore etcd itself (README.md, Operations)."
              << std::endl;
    return kExitUsageError;
  }
  const std::string path = FenceStorePath(config);
  if (lockstore::Status kept = CheckStoreNotLeftBehind(config); !kept.ok()) {
    std::cerr << "fencegate store: " << kept.message() << '\n';
    return kExitStartupFailure;
  }
  if (store_args.verb == "init") return Init(path);
  return Floor(path, *store_args.prefix, store_args.floor);
}

}  // namespace fencegate::gateway
