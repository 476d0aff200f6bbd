#pragma once

#include <array>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <prometheus/counter.h>
#include <prometheus/registry.h>

#include "gateway/auth/credentials.h"
#include "gateway/auth/lock_policy.h"
#include "gateway/auth/route_policy.h"
#include "gateway/config/config.h"

namespace fencegate::gateway::auth {

// Why a request was refused by authorization: the `reason` label of
// fencegate_auth_refusals_total and of the problem document.
enum class Refusal {
  kMissingCredentials,   // 401
  kInvalidCredentials,   // 401
  kReadNotPermitted,     // 403
  kWriteNotPermitted,    // 403
  kAdvanceNotPermitted,  // 403: a fenced write that would raise the fence outside a grant
};
inline constexpr std::size_t kRefusalCount = 5;
std::string_view RefusalName(Refusal refusal);
unsigned RefusalStatus(Refusal refusal);

// The outcome of Authorizer::Check for one request.
struct Decision {
  bool guarded = false;            // the route has a policy
  std::optional<Refusal> refused;  // set: answer 401/403
  std::size_t principal = 0;       // when guarded and not refused
};

// Traffic authorization: the traffic principals plus each route's policy. Routes without a
// policy are open (today's behaviour). Immutable after construction; network threads share it.
class Authorizer {
 public:
  Authorizer(const Config& config, prometheus::Registry& registry);

  // Authenticates and checks read (GET/HEAD) or write (any other method) access on `route`;
  // counts a refusal.
  Decision Check(std::size_t route, bool write, std::string_view authorization,
                 std::size_t authorization_fields, const PeerIdentity* peer) const;

  // Whether the request may raise `fence_key` (always on an open route); if not, only a write
  // at the current highest token is admitted.
  bool MayAdvance(std::size_t route, const Decision& decision, std::string_view fence_key) const;

  void CountRefusal(std::size_t route, Refusal refusal) const;

  // The built-in lock API under `locks.policy` (unguarded without one): authenticates, then
  // checks reading a lock's state, or acquire, renew and release (`write`) of lock `name`;
  // counts a refusal in fencegate_lock_auth_refusals_total.
  Decision CheckLock(std::string_view name, bool write, std::string_view authorization,
                     std::size_t authorization_fields, const PeerIdentity* peer) const;

  // Whether the credentials name a traffic principal, on any route (a refusal on an open route
  // asks, for disclose_highest_token); counts nothing.
  bool Authenticates(std::string_view authorization, std::size_t authorization_fields,
                     const PeerIdentity* peer) const {
    return !Authenticate(authorization, authorization_fields, peer).refused;
  }

  const std::string& principal_name(std::size_t principal) const {
    return credentials_.name(principal);
  }

 private:
  // Who is asking: refused when nobody or nobody known.
  Decision Authenticate(std::string_view authorization, std::size_t authorization_fields,
                        const PeerIdentity* peer) const;

  Credentials credentials_;
  std::vector<std::optional<RoutePolicy>> policies_;  // by route index
  std::vector<std::array<prometheus::Counter*, kRefusalCount>> refusals_;
  std::optional<LockPolicy> lock_policy_;
  std::array<prometheus::Counter*, kRefusalCount> lock_refusals_{};  // advance: unused
};

// Lines for stderr at start: what is reachable without credentials from beyond this host.
std::vector<std::string> OpenAccessWarnings(const Config& config);

}  // namespace fencegate::gateway::auth
