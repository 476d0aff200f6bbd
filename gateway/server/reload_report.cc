#include "gateway/server/reload_report.h"

#include "base/log/event_log.h"

namespace fencegate::gateway {
namespace {

std::string Joined(const std::vector<std::string>& names) {
  std::string text;
  for (const std::string& name : names) text += (text.empty() ? "" : ",") + name;
  return text;
}

}  // namespace

void LogReload(const ReloadReport& report) {
  if (!report.applied) {
    log::Error("reload refused: the configuration in force keeps serving",
               {{"trigger", report.trigger},
                {"config", report.config_path},
                {"config_hash", report.config_hash}});
    // One line per error, each the FILE:LINE:COL text --check-config prints.
    for (const std::string& error : report.errors) {
      log::Error("reload refused", {{"trigger", report.trigger}, {"error", error}});
    }
    return;
  }
  const ConfigDiff& diff = report.diff;
  log::Info("reload applied", {{"trigger", report.trigger},
                               {"config", report.config_path},
                               {"generation", report.generation},
                               {"config_hash", report.config_hash},
                               {"routes_added", Joined(diff.routes.added)},
                               {"routes_removed", Joined(diff.routes.removed)},
                               {"routes_changed", Joined(diff.routes.changed)},
                               {"backends_added", Joined(diff.backends.added)},
                               {"backends_removed", Joined(diff.backends.removed)},
                               {"backends_changed", Joined(diff.backends.changed)}});
  for (const std::string& key : diff.restart_required) {
    log::Warn("reload: a changed key takes effect at the next restart; the running value stays",
              {{"key", key}});
  }
}

}  // namespace fencegate::gateway
