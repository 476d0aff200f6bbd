// Server: reloading the configuration file (README "Reloading").
#include <latch>

#include "gateway/config/config_loader.h"
#include "gateway/http/time_format.h"
#include "gateway/server/config_text.h"
#include "gateway/server/route_bindings.h"
#include "gateway/server/server.h"
#include "gateway/server/service_notify.h"
#include "gateway/server/startup_check.h"

namespace fencegate::gateway {

void Server::RequestReload(ReloadRequest request, std::function<void(const ReloadReport&)> done) {
  reload_worker_->Post([this, request = std::move(request), done = std::move(done)] {
    // systemctl reload waits from RELOADING=1 to READY=1, applied or refused.
    NotifyReloading();
    const ReloadReport report = Reload(request);
    NotifyReady();
    LogReload(report);
    if (done) done(report);
  });
}

ReloadReport Server::Reload(const ReloadRequest& request) {
  ReloadReport report;
  report.trigger = request.trigger;
  report.config_path = generation_->config.source_path;
  report.generation = generation_->number;
  report.config_hash = generation_->config_hash;

  // Loaded exactly as --check-config loads it; read again for the hash and the diff.
  Config config;
  const std::vector<ConfigError> errors = LoadConfigFile(report.config_path, &config);
  for (const ConfigError& error : errors) report.errors.push_back(error.ToString());
  std::string file_text;
  if (errors.empty() && !ReadConfigText(report.config_path, &file_text)) {
    report.errors.push_back(report.config_path + ": cannot read the configuration file");
  }
  if (!report.errors.empty()) {
    reload_metrics_->CountFailure();
    return report;
  }
  ApplyOverrides(command_line_, &config);
  // What --check-config checks beyond the file (certificates, client TLS settings), refused alike.
  for (const ConfigError& error : CheckWhatStartWouldLoad(config)) {
    report.errors.push_back(error.ToString());
  }
  if (!report.errors.empty()) {
    reload_metrics_->CountFailure();
    return report;
  }
  // Routes and backends compared with the generation in force; what needs a restart with the
  // configuration the process started with (it keeps running on that), so it is reported by
  // every reload until the restart.
  ConfigDiff diff = DiffConfigs(generation_->config, generation_->file_text, config, file_text);
  diff.restart_required =
      DiffConfigs(config_, started_file_text_, config, file_text).restart_required;
  KeepRestartOnlyValues(generation_->config, diff, &config);

  std::shared_ptr<const ConfigGeneration> next;
  if (lockstore::Status built =
          BuildGeneration(std::move(config), std::move(file_text), generation_.get(), &diff, &next);
      !built.ok()) {
    report.errors.push_back(built.message());
    reload_metrics_->CountFailure();
    return report;
  }
  // Fence-key templates: a changed binding of a route with fences is refused unless this request
  // accepts it (the command line's --accept-fence-key-change was for the start only). Last
  // before anything applies: it records the new bindings.
  if (lockstore::Status bound =
          CheckAndRecordRouteBindings(next->config, *store_, request.accepted_fence_key_changes);
      !bound.ok()) {
    report.errors.push_back(bound.message());
    reload_metrics_->CountFailure();
    return report;
  }
  // A file-to-file move of the access log applies now (other changes to it keep the running
  // path until a restart: KeepRestartOnlyValues).
  const std::string& new_log = next->config.access_log.path;
  if (new_log != generation_->config.access_log.path) {
    if (lockstore::Status moved = access_log_->Retarget(new_log); !moved.ok()) {
      report.errors.push_back(moved.ToString());
      reload_metrics_->CountFailure();
      return report;
    }
  }
  // Certificates are re-read from the same files (tls: itself needs a restart); a failure keeps
  // the certificate in force and is counted by the listener.
  traffic_tls_->Reload();
  admin_tls_->Reload();
  generation_ = next;
  generation_slot_.Set(next);
  PublishGeneration(std::move(next));
  reload_metrics_->CountSuccess(generation_->config_hash, NowUnixMs());
  report.applied = true;
  report.generation = generation_->number;
  report.config_hash = generation_->config_hash;
  report.diff = diff;
  return report;
}

void Server::PublishGeneration(std::shared_ptr<const ConfigGeneration> generation) {
  // Answered only once every thread has it: a request sent after the answer sees it.
  std::latch adopted(static_cast<std::ptrdiff_t>(threads_.size()));
  for (auto& thread : threads_) {
    thread->AdoptGeneration(generation, [&adopted] { adopted.count_down(); });
  }
  adopted.wait();
}

}  // namespace fencegate::gateway
