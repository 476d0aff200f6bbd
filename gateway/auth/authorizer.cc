#include "gateway/auth/authorizer.h"

namespace fencegate::gateway::auth {
namespace {

constexpr std::array<std::string_view, kRefusalCount> kRefusalNames = {
    "missing_credentials", "invalid_credentials", "read_not_permitted", "write_not_permitted",
    "advance_not_permitted"};

bool IsLoopback(const std::string& host) {
  return host == "localhost" || host == "::1" || host.starts_with("127.");
}

}  // namespace

std::string_view RefusalName(Refusal refusal) {
  return kRefusalNames[static_cast<std::size_t>(refusal)];
}

unsigned RefusalStatus(Refusal refusal) {
  return refusal == Refusal::kMissingCredentials || refusal == Refusal::kInvalidCredentials ? 401
                                                                                            : 403;
}

Authorizer::Authorizer(const Config& config, prometheus::Registry& registry)
    : credentials_(config.auth) {
  auto& family = prometheus::BuildCounter()
                     .Name("fencegate_auth_refusals_total")
                     .Help("Requests refused by authentication (401) or authorization (403).")
                     .Register(registry);
  for (const RouteConfig& route : config.routes) {
    if (route.policy) {
      policies_.emplace_back(std::in_place, *route.policy, credentials_);
    } else {
      policies_.emplace_back();
    }
    auto& counters = refusals_.emplace_back();
    for (std::size_t i = 0; i < kRefusalCount; ++i) {
      counters[i] =
          route.policy
              ? &family.Add({{"route", route.name}, {"reason", std::string(kRefusalNames[i])}})
              : nullptr;
    }
  }
  if (config.locks.policy) {
    lock_policy_.emplace(*config.locks.policy, credentials_);
    auto& locks = prometheus::BuildCounter()
                      .Name("fencegate_lock_auth_refusals_total")
                      .Help("Lock API requests refused by locks.policy (401 or 403).")
                      .Register(registry);
    // An advance is no lock API operation: that reason has no series.
    for (std::size_t i = 0; i < kRefusalCount; ++i) {
      if (i == static_cast<std::size_t>(Refusal::kAdvanceNotPermitted)) continue;
      lock_refusals_[i] = &locks.Add({{"reason", std::string(kRefusalNames[i])}});
    }
  }
}

Decision Authorizer::Authenticate(std::string_view authorization, std::size_t authorization_fields,
                                  const PeerIdentity* peer) const {
  Decision decision;
  decision.guarded = true;
  const Authentication who = credentials_.Authenticate(authorization, authorization_fields, peer);
  if (who.kind == Authentication::Kind::kNone) {
    decision.refused = Refusal::kMissingCredentials;
  } else if (who.kind == Authentication::Kind::kInvalid) {
    decision.refused = Refusal::kInvalidCredentials;
  } else {
    decision.principal = who.principal;
  }
  return decision;
}

Decision Authorizer::Check(std::size_t route, bool write, std::string_view authorization,
                           std::size_t authorization_fields, const PeerIdentity* peer) const {
  const std::optional<RoutePolicy>& policy = policies_[route];
  if (!policy) return {};
  Decision decision = Authenticate(authorization, authorization_fields, peer);
  if (!decision.refused &&
      (write ? !policy->MayWrite(decision.principal) : !policy->MayRead(decision.principal))) {
    decision.refused = write ? Refusal::kWriteNotPermitted : Refusal::kReadNotPermitted;
  }
  if (decision.refused) CountRefusal(route, *decision.refused);
  return decision;
}

Decision Authorizer::CheckLock(std::string_view name, bool write, std::string_view authorization,
                               std::size_t authorization_fields, const PeerIdentity* peer) const {
  if (!lock_policy_) return {};
  Decision decision = Authenticate(authorization, authorization_fields, peer);
  if (!decision.refused && (write ? !lock_policy_->MayAcquire(decision.principal, name)
                                  : !lock_policy_->MayRead(decision.principal))) {
    decision.refused = write ? Refusal::kWriteNotPermitted : Refusal::kReadNotPermitted;
  }
  if (decision.refused) lock_refusals_[static_cast<std::size_t>(*decision.refused)]->Increment();
  return decision;
}

bool Authorizer::MayAdvance(std::size_t route, const Decision& decision,
                            std::string_view fence_key) const {
  return !decision.guarded || policies_[route]->MayAdvance(decision.principal, fence_key);
}

void Authorizer::CountRefusal(std::size_t route, Refusal refusal) const {
  if (prometheus::Counter* counter = refusals_[route][static_cast<std::size_t>(refusal)]) {
    counter->Increment();
  }
}

std::vector<std::string> OpenAccessWarnings(const Config& config) {
  std::vector<std::string> warnings;
  if (!IsLoopback(config.listen.host)) {
    std::string open;
    for (const RouteConfig& route : config.routes) {
      if (!route.policy) open += (open.empty() ? "" : ", ") + route.name;
    }
    if (!open.empty()) {
      warnings.push_back("routes without a policy accept every client on " + config.listen.host +
                         ": " + open);
    }
    if (config.locks.enabled && !config.locks.policy) {
      warnings.push_back("the lock API has no locks.policy and accepts every client on " +
                         config.listen.host);
    }
  }
  if (!IsLoopback(config.admin_listen.host) && config.admin.credentials.principals.empty()) {
    warnings.push_back("the admin API has no principals and accepts every client on " +
                       config.admin_listen.host);
  }
  return warnings;
}

}  // namespace fencegate::gateway::auth
