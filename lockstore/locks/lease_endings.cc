#include "lockstore/locks/lease_endings.h"

#include <algorithm>

namespace fencegate::lockstore {

std::string_view StaleReasonName(StaleReason reason) {
  switch (reason) {
    case StaleReason::kSuperseded:
      return "superseded";
    case StaleReason::kLeaseExpired:
      return "lease-expired";
    case StaleReason::kForceReleased:
      return "force-released";
    case StaleReason::kReleased:
      return "released";
  }
  return "superseded";
}

void LeaseEndings::BindFenceKeys(std::string_view lock, const std::vector<std::string>& keys) {
  if (keys.empty()) return;
  auto it = locks_.find(lock);
  if (it == locks_.end()) it = locks_.emplace(std::string(lock), LockEndings{}).first;
  for (const std::string& key : keys) {
    // A key raised by several locks' grants belongs to the last one that raised it.
    lock_of_fence_key_.insert_or_assign(key, it->first);
    auto& bound = it->second.fence_keys;
    if (std::find(bound.begin(), bound.end(), key) == bound.end()) bound.push_back(key);
  }
}

void LeaseEndings::Ended(std::string_view lock, Token token, StaleReason reason) {
  auto it = locks_.find(lock);
  if (it == locks_.end()) it = locks_.emplace(std::string(lock), LockEndings{}).first;
  auto& endings = it->second.endings;
  endings.push_back({token, {reason, 0}});
  if (endings.size() > kKeptEndings) endings.pop_front();
}

void LeaseEndings::SetAuditId(std::string_view lock, Token token, std::uint64_t audit_id) {
  auto it = locks_.find(lock);
  if (it == locks_.end()) return;
  for (Ending& ending : it->second.endings) {
    if (ending.token == token) ending.explanation.audit_id = audit_id;
  }
}

void LeaseEndings::Forget(std::string_view lock) {
  auto it = locks_.find(lock);
  if (it == locks_.end()) return;
  for (const std::string& key : it->second.fence_keys) {
    auto bound = lock_of_fence_key_.find(key);
    if (bound != lock_of_fence_key_.end() && bound->second == lock) lock_of_fence_key_.erase(bound);
  }
  locks_.erase(it);
}

StaleTokenExplanation LeaseEndings::Explain(std::string_view fence_key, Token token) const {
  const auto bound = lock_of_fence_key_.find(fence_key);
  if (bound == lock_of_fence_key_.end()) return {};
  const auto lock = locks_.find(bound->second);
  if (lock == locks_.end()) return {};
  for (const Ending& ending : lock->second.endings) {
    if (ending.token == token) return ending.explanation;
  }
  return {};
}

}  // namespace fencegate::lockstore
