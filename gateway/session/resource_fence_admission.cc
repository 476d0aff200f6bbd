#include "gateway/session/resource_fence_admission.h"

#include <algorithm>
#include <utility>

#include <boost/url/encode.hpp>
#include <boost/url/rfc/unreserved_chars.hpp>

#include "gateway/http/path_canonical.h"

namespace fencegate::gateway {

namespace {

// `path` (decoded bytes) in the canonical spelling a client's request for it would get: every
// byte but '/' and the unreserved ones escaped, then canonicalised, so the same checks refuse
// what a request could not name ("." segments, control bytes, broken UTF-8).
PathViolation CanonicalPath(std::string_view path, std::string* out) {
  static constexpr auto kUnreservedOrSlash = boost::urls::unreserved_chars + '/';
  std::string escaped;
  boost::urls::encode(path, kUnreservedOrSlash, {}, boost::urls::string_token::assign_to(escaped));
  std::string scratch;
  std::string_view canonical;
  const PathViolation violation = CanonicaliseTarget(escaped, &scratch, &canonical);
  if (violation == PathViolation::kNone) out->assign(canonical);
  return violation;
}

}  // namespace

void ResourceFenceAdmission::Begin(Context context) {
  context_ = std::move(context);
  done_ = nullptr;
  keys_.clear();
  paths_.clear();
  next_ = 0;
  advance_forbidden_ = false;
  stale_key_.clear();
  stale_highest_.reset();
}

void ResourceFenceAdmission::AdmitAll(std::vector<std::string> paths, Handler done) {
  done_ = std::move(done);
  std::vector<std::pair<std::string, std::string>> keyed;  // key, path
  keyed.reserve(paths.size());
  for (std::string& path : paths) {
    std::string canonical;
    if (const PathViolation violation = CanonicalPath(path, &canonical);
        violation != PathViolation::kNone) {
      Refuse({400, "bad-path", "Bad request path",
              "the resource '" + path +
                  "' has no usable path: " + std::string(PathViolationDetail(violation))});
      return;
    }
    std::string key;
    const lockstore::RequestFacts facts{canonical, context_.host, context_.route};
    if (!context_.fence_key->Render(facts, &key)) {
      Refuse({400, "no-fence-key", "No fence key",
              "the route's fence_key template does not resolve for the resource '" + path + "'"});
      return;
    }
    keyed.emplace_back(std::move(key), std::move(path));
  }
  // One order for every request, so two of them never hold a key the other waits for.
  std::sort(keyed.begin(), keyed.end());
  for (auto& [key, path] : keyed) {
    if (!keys_.empty() && keys_.back() == key) continue;
    keys_.push_back(std::move(key));
    paths_.push_back(std::move(path));
  }
  AdmitNext();
}

void ResourceFenceAdmission::AdmitNext() {
  while (next_ < keys_.size()) {
    const KeyPolicy policy = context_.policy(keys_[next_]);
    if (policy.refused) {
      Refuse(*policy.refused);
      return;
    }
    advance_forbidden_ = policy.advance_forbidden;
    auto decision = context_.admission->Admit(
        keys_[next_], context_.token, context_.request_id,
        [this, post = context_.post](const lockstore::AdmissionDecision& late) {
          // On a store thread or another network thread: back to the session's. The session
          // lives until the adapter's exchange ends, which waits for this verdict.
          post([this, late] { OnDecision(late); });
        },
        policy.max_advance);
    if (!decision) return;  // OnDecision comes later
    if (decision->kind != lockstore::AdmissionDecision::Kind::kAdmitted) {
      OnDecision(*decision);
      return;
    }
    ++next_;
  }
  Deliver({.admitted = true, .disclose_highest_token = context_.disclose_highest_token});
}

void ResourceFenceAdmission::OnDecision(const lockstore::AdmissionDecision& decision) {
  using Kind = lockstore::AdmissionDecision::Kind;
  const std::string& path = paths_[next_];
  switch (decision.kind) {
    case Kind::kAdmitted:
      ++next_;
      AdmitNext();
      return;
    case Kind::kStale: {
      stale_key_ = keys_[next_];
      stale_highest_ = decision.highest;
      std::string detail = "nothing was deleted: the fence of '" + path + "' (" + stale_key_ +
                           ") has seen a higher token than the presented " +
                           std::to_string(context_.token);
      if (context_.disclose_highest_token) {
        detail += " (highest " + std::to_string(decision.highest) + ")";
      }
      Refuse({409, std::string(adapters::kStaleAtGatewayProblemType), "Stale fencing token",
              std::move(detail)});
      return;
    }
    case Kind::kTooFarAhead:
      Refuse({403, "token-advance-too-large", "Fencing token too far ahead",
              advance_forbidden_
                  ? "the token would raise the fence of '" + path +
                        "', and the route's policy grants this principal no advance on it"
                  : "the token is more than the route's max_token_advance above the highest "
                    "seen for '" +
                        path + "'; only a signed token may jump further"});
      return;
    case Kind::kRepairing:
      Refuse({.status = 503,
              .type = "fence-repair-in-progress",
              .title = "Fence being repaired",
              .detail = "an operator is lowering the fence of '" + path + "'",
              .retry_after = true});
      return;
    case Kind::kStoreError:
      Refuse({.status = 503,
              .type = "store-error",
              .title = "Store unavailable",
              .detail = decision.status.ToString(),
              .retry_after = true});
      return;
  }
}

void ResourceFenceAdmission::Refuse(adapters::Problem problem) {
  // All or none: what was admitted before the refusal is released at once.
  for (std::size_t i = 0; i < next_; ++i) context_.admission->Complete(keys_[i], context_.token);
  next_ = 0;
  Deliver(
      {.problem = std::move(problem), .disclose_highest_token = context_.disclose_highest_token});
}

void ResourceFenceAdmission::Deliver(Verdict verdict) {
  // Never inside AdmitAll: the adapter's handler may not run within its own call.
  context_.post([done = std::move(done_), verdict = std::move(verdict)]() mutable {
    done(std::move(verdict));
  });
}

void ResourceFenceAdmission::CompleteAll() {
  if (!engaged()) return;
  for (std::size_t i = 0; i < next_; ++i) context_.admission->Complete(keys_[i], context_.token);
  next_ = 0;
}

void ResourceFenceAdmission::Reset() {
  CompleteAll();
  Begin(Context{});
}

}  // namespace fencegate::gateway
