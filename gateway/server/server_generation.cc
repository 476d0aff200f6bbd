// Server: building a ConfigGeneration, at start and at each reload (README "Reloading").
#include <algorithm>

#include "base/log/event_log.h"
#include "base/tls_client/client_tls.h"
#include "gateway/server/config_text.h"
#include "gateway/server/server.h"
#include "lockstore/etcd/etcd_token_verifier.h"
#include "resource_adapters/registry/registry.h"
#include "resource_adapters/transport/condition_book.h"

namespace fencegate::gateway {
namespace {

// Turning name verification off must be explicit (config) and loud (here, at every start and
// reload).
void WarnIfUnverified(const std::string& name, const adapters::UpstreamOptions& upstream) {
  if (!upstream.tls || upstream.tls_options.verify_hostname) return;
  log::Warn("WARNING: backend '" + name +
                "': tls_verify_hostname is off: any certificate from the configured CA is "
                "accepted for " +
                upstream.host,
            {{"backend", name}});
}

// `conditions: trust` skips the probes that would catch a server ignoring the conditions fenced
// writes rely on: said at every start and reload (docs/BACKEND_TRUST.md). A kept backend is
// probed again instead, under `verify`.
void WarnIfTrustedOrProbeAgain(const std::string& name, const std::string& kind,
                               adapters::AdapterFactory& factory, bool kept) {
  const std::shared_ptr<const adapters::ConditionBook> book = factory.condition_book();
  if (book == nullptr) return;
  if (book->options().policy == adapters::ConditionProbeOptions::Policy::kVerify) {
    if (kept) factory.ProbeConditionsAgain();
    return;
  }
  const std::string relied_on =
      kind == "s3" ? "If-Match and If-None-Match on PUT"
                   : "an exclusive LOCK, the If header and dead properties (PROPPATCH)";
  log::Warn("WARNING: backend '" + name +
                "': conditions: trust: not probed; fenced writes rely on " +
                "the server honouring " + relied_on +
                " without checking it (a server that ignores them lets a zombie's write through "
                "a second gateway or after the gateway's store was lost)",
            {{"backend", name}, {"conditions", "trust"}});
}

bool Contains(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

bool KeepsIdempotencyRecords(const Config& config) {
  return std::any_of(config.routes.begin(), config.routes.end(), [](const RouteConfig& route) {
    return route.idempotency && route.idempotency->mode == IdempotencyConfig::Mode::kStore;
  });
}

// One etcd client set for a route's verify_tokens: routes may ask different lock services.
lockstore::Status MakeTokenVerifier(const RouteConfig& route,
                                    std::unique_ptr<lockstore::TokenVerifier>* out) {
  const TokenVerifyConfig& verify = *route.verify_tokens;
  lockstore::etcd::EtcdTokenVerifierOptions options;
  options.client.endpoints = verify.endpoints;
  // One bound for the whole check, shared so that a silent member leaves the others time.
  options.client.request_timeout =
      std::max(std::chrono::milliseconds(1),
               verify.timeout / static_cast<std::int64_t>(verify.endpoints.size()));
  options.client.operation_timeout = verify.timeout;
  options.client.tls = verify.tls;
  if (verify.tls) {
    std::string error;
    options.client.tls_context = tls_client::BuildClientContext(*verify.tls, &error);
    if (!options.client.tls_context) {
      return lockstore::Status::InvalidArgument("route '" + route.name +
                                                "': verify_tokens.etcd.tls: " + error);
    }
    if (!verify.tls->verify_hostname) {
      log::Warn("WARNING: route '" + route.name +
                    "': verify_tokens.etcd.tls.verify_hostname is off: any certificate from "
                    "the configured CA is accepted for every etcd member",
                {{"route", route.name}});
    }
  }
  *out = std::make_unique<lockstore::etcd::EtcdTokenVerifier>(std::move(options));
  return lockstore::Status::Ok();
}

}  // namespace

lockstore::Status Server::BuildGeneration(Config config, std::string file_text,
                                          const ConfigGeneration* previous, const ConfigDiff* diff,
                                          std::shared_ptr<const ConfigGeneration>* out) {
  auto generation = std::make_shared<ConfigGeneration>();
  generation->number = previous != nullptr ? previous->number + 1 : 1;
  generation->config = std::move(config);
  generation->config_hash = ConfigHash(file_text);
  generation->file_text = std::move(file_text);
  const Config& cfg = generation->config;
  if (KeepsIdempotencyRecords(cfg)) {
    if (lockstore::Status opened = OpenIdempotencyStore(); !opened.ok()) return opened;
    generation->idempotency = idempotency_.get();
  }
  if (lockstore::Status built = BuildBackendFactories(previous, diff, *generation); !built.ok()) {
    return built;
  }
  generation->router = std::make_unique<Router>(cfg.routes);
  // Metric families merge by name: a reload's authorizer counts into the same series.
  generation->authorizer = std::make_unique<auth::Authorizer>(cfg, metrics_->registry());
  generation->admin_guard = std::make_unique<auth::AdminGuard>(cfg.admin, metrics_->registry());
  generation->routes = ResolveRoutes(cfg, generation->backend_names, *metrics_);
  if (lockstore::Status resolved = ResolveTokenVerifiers(diff, *generation); !resolved.ok()) {
    return resolved;
  }
  *out = std::move(generation);
  return lockstore::Status::Ok();
}

// A backend whose entry did not change keeps its factory (and each thread its adapter, with its
// upstream connections); the others get new ones. Relay buffers stay one process-wide budget.
lockstore::Status Server::BuildBackendFactories(const ConfigGeneration* previous,
                                                const ConfigDiff* diff,
                                                ConfigGeneration& generation) {
  std::vector<std::unique_ptr<adapters::AdapterFactory>> made;
  for (const auto& [name, backend] : generation.config.backends) {
    adapters::AdapterFactory* factory = nullptr;
    bool kept = false;
    if (previous != nullptr && diff != nullptr && !Contains(diff->backends.changed, name) &&
        !Contains(diff->backends.added, name)) {
      const auto& names = previous->backend_names;
      const auto found = std::find(names.begin(), names.end(), name);
      if (found != names.end()) factory = previous->backend_factories[found - names.begin()];
      kept = factory != nullptr;
    }
    if (factory == nullptr) {
      const adapters::BackendKindRow* kind = adapters::FindBackendKind(backend.kind);
      if (kind == nullptr) {
        return lockstore::Status::InvalidArgument("backend '" + name + "' has unsupported kind '" +
                                                  backend.kind + "'");
      }
      std::string error;
      made.push_back(kind->make_factory(backend, relay_budget_, &error));
      if (!made.back()) {
        return lockstore::Status::InvalidArgument("backend '" + name + "': " + error);
      }
      if (const adapters::UpstreamOptions* upstream = kind->upstream(backend)) {
        WarnIfUnverified(name, *upstream);
      }
      factory = made.back().get();
    }
    WarnIfTrustedOrProbeAgain(name, backend.kind, *factory, kept);
    generation.backend_names.push_back(name);
    generation.backend_factories.push_back(factory);
  }
  generation.peer_adapter_base = generation.backend_factories.size();
  // Kept until shutdown with every other factory (a thread may still use an older one).
  for (auto& factory : made) factories_.push_back(std::move(factory));
  return lockstore::Status::Ok();
}

// A route whose entry did not change keeps its verifier; an older generation's sessions may
// still ask a replaced one, so every verifier lives until shutdown.
lockstore::Status Server::ResolveTokenVerifiers(const ConfigDiff* diff,
                                                ConfigGeneration& generation) {
  const std::vector<RouteConfig>& routes = generation.config.routes;
  std::map<std::string, lockstore::TokenVerifier*> current;
  std::vector<std::unique_ptr<lockstore::TokenVerifier>> made;
  for (std::size_t i = 0; i < routes.size(); ++i) {
    const RouteConfig& route = routes[i];
    if (!route.verify_tokens) continue;
    const auto kept = verifier_of_route_.find(route.name);
    if (diff != nullptr && kept != verifier_of_route_.end() &&
        !Contains(diff->routes.changed, route.name) && !Contains(diff->routes.added, route.name)) {
      generation.routes[i].token_verifier = kept->second;
    } else {
      std::unique_ptr<lockstore::TokenVerifier> verifier;
      if (lockstore::Status status = MakeTokenVerifier(route, &verifier); !status.ok()) {
        return status;
      }
      generation.routes[i].token_verifier = verifier.get();
      made.push_back(std::move(verifier));
    }
    current[route.name] = generation.routes[i].token_verifier;
  }
  for (auto& verifier : made) token_verifiers_.push_back(std::move(verifier));
  verifier_of_route_ = std::move(current);
  return lockstore::Status::Ok();
}

}  // namespace fencegate::gateway
