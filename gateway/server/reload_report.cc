#include "gateway/server/reload_report.h"

#include <cstdio>

namespace fencegate::gateway {
namespace {

std::string Joined(const std::vector<std::string>& names) {
  std::string text;
  for (const std::string& name : names) text += (text.empty() ? "" : ",") + name;
  return text.empty() ? "-" : text;
}

}  // namespace

void LogReload(const ReloadReport& report) {
  if (!report.applied) {
    std::fprintf(stderr,
                 "fencegate: reload (%s) of %s refused: the configuration in force (hash %s) "
                 "keeps serving\n",
                 report.trigger.c_str(), report.config_path.c_str(), report.config_hash.c_str());
    for (const std::string& error : report.errors) {
      std::fprintf(stderr, "fencegate: reload: %s\n", error.c_str());
    }
    return;
  }
  const ConfigDiff& diff = report.diff;
  std::fprintf(stderr,
               "fencegate: reload (%s) of %s applied: generation %llu, hash %s; routes added=%s "
               "removed=%s changed=%s; backends added=%s removed=%s changed=%s\n",
               report.trigger.c_str(), report.config_path.c_str(),
               static_cast<unsigned long long>(report.generation), report.config_hash.c_str(),
               Joined(diff.routes.added).c_str(), Joined(diff.routes.removed).c_str(),
               Joined(diff.routes.changed).c_str(), Joined(diff.backends.added).c_str(),
               Joined(diff.backends.removed).c_str(), Joined(diff.backends.changed).c_str());
  for (const std::string& key : diff.restart_required) {
    std::fprintf(stderr,
                 "fencegate: reload: '%s' changed: it takes effect at the next restart; the "
                 "running value stays\n",
                 key.c_str());
  }
}

}  // namespace fencegate::gateway
