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
}

Decision Authorizer::Check(std::size_t route, bool write, std::string_view authorization,
                           std::size_t authorization_fields, const PeerIdentity* peer) const {
  Decision decision;
  const std::optional<RoutePolicy>& policy = policies_[route];
  if (!policy) return decision;
  decision.guarded = true;
  const Authentication who = credentials_.Authenticate(authorization, authorization_fields, peer);
  if (who.kind == Authentication::Kind::kNone) {
    decision.refused = Refusal::kMissingCredentials;
  } else if (who.kind == Authentication::Kind::kInvalid) {
    decision.refused = Refusal::kInvalidCredentials;
  } else {
    decision.principal = who.principal;
    if (write ? !policy->MayWrite(who.principal) : !policy->MayRead(who.principal)) {
      decision.refused = write ? Refusal::kWriteNotPermitted : Refusal::kReadNotPermitted;
    }
  }
  if (decision.refused) CountRefusal(route, *decision.refused);
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
  }
  if (!IsLoopback(config.admin_listen.host) && config.admin.credentials.principals.empty()) {
    warnings.push_back("the admin API has no principals and accepts every client on " +
                       config.admin_listen.host);
  }
  return warnings;
}

}  // namespace fencegate::gateway::auth
