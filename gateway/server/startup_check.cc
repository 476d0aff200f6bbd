#include "gateway/server/startup_check.h"

#include <string>

#include <prometheus/registry.h>

#include "base/tls_client/client_tls.h"
#include "gateway/cli/store_location.h"
#include "gateway/server/privilege_drop.h"
#include "gateway/tls/listener_tls.h"
#include "resource_adapters/registry/registry.h"

namespace fencegate::gateway {
namespace {

void CheckListenerTls(const Config& config, const std::string& listener,
                      const tls::ServerTlsSettings& settings, std::vector<ConfigError>* errors) {
  if (!settings.enabled) return;
  prometheus::Registry scratch;  // the check's counters are nobody's
  tls::ListenerTls loaded(listener, settings, scratch);
  if (const lockstore::Status status = loaded.Load(); !status.ok()) {
    errors->push_back({config.source_path, 0, 0, "tls." + listener, status.message()});
  }
}

void CheckClientTls(const Config& config, const std::string& key,
                    const tls_client::ClientTlsOptions& options, std::vector<ConfigError>* errors) {
  std::string error;
  if (!tls_client::BuildClientContext(options, &error)) {
    errors->push_back({config.source_path, 0, 0, key, error});
  }
}

}  // namespace

std::vector<ConfigError> CheckWhatStartWouldLoad(const Config& config) {
  std::vector<ConfigError> errors;
  CheckListenerTls(config, "traffic", config.tls.traffic, &errors);
  CheckListenerTls(config, "admin", config.tls.admin, &errors);
  for (const auto& [name, backend] : config.backends) {
    const adapters::BackendKindRow* kind = adapters::FindBackendKind(backend.kind);
    const adapters::UpstreamOptions* upstream = kind != nullptr ? kind->upstream(backend) : nullptr;
    if (upstream != nullptr && upstream->tls) {
      CheckClientTls(config, "backends." + name, upstream->tls_options, &errors);
    }
  }
  if (config.store.tls) CheckClientTls(config, "store.tls", *config.store.tls, &errors);
  if (config.cluster.tls) CheckClientTls(config, "cluster.tls", *config.cluster.tls, &errors);
  for (std::size_t i = 0; i < config.routes.size(); ++i) {
    const RouteConfig& route = config.routes[i];
    if (route.verify_tokens && route.verify_tokens->tls) {
      CheckClientTls(config, "routes[" + std::to_string(i) + "].verify_tokens.tls",
                     *route.verify_tokens->tls, &errors);
    }
  }
  // Whoever checks, the account must exist where the gateway will run.
  PrivilegeDrop privileges;
  if (const lockstore::Status resolved =
          PrivilegeDrop::Resolve(config.user, config.group, &privileges);
      !resolved.ok()) {
    errors.push_back({config.source_path, 0, 0, "user", resolved.message()});
  }
  if (const lockstore::Status kept = CheckStoreNotLeftBehind(config); !kept.ok()) {
    errors.push_back({config.source_path, 0, 0, "data_dir", kept.message()});
  }
  return errors;
}

}  // namespace fencegate::gateway
