#pragma once

#include <chrono>
#include <string>
#include <string_view>
#include <vector>

#include "lockstore/status.h"

namespace fencegate::lockstore {

// What configuration says about the locks whose names match `pattern` ('*' matches any run of
// characters, everything else itself).
struct LockRule {
  std::string pattern;
  // Fence-key templates raised to a lock's token when it is granted or forcibly released;
  // "{name}" is replaced by the lock name ("kv:{name}").
  std::vector<std::string> fence_keys;
  // Lock-delay: after a lease expires without release, no grant for this long.
  std::chrono::milliseconds quarantine{0};
};

// The policy of one lock: the first matching rule's, or none.
struct LockPolicy {
  std::vector<std::string> fence_keys;  // rendered
  std::chrono::milliseconds quarantine{0};
};

class LockRules {
 public:
  LockRules() = default;
  explicit LockRules(std::vector<LockRule> rules) : rules_(std::move(rules)) {}

  LockPolicy Resolve(std::string_view name) const;
  const std::vector<LockRule>& rules() const { return rules_; }

 private:
  std::vector<LockRule> rules_;
};

// Lock names: 1 to 128 characters from [A-Za-z0-9._:-], so they fit in one path segment.
bool IsValidLockName(std::string_view name);
// Patterns: lock-name characters and '*'.
bool IsValidLockPattern(std::string_view pattern);
bool GlobMatch(std::string_view pattern, std::string_view name);
// A fence-key template: non-empty, and the only placeholder is "{name}".
Status ValidateLockFenceKeyTemplate(std::string_view text);
std::string RenderLockFenceKey(std::string_view text, std::string_view name);

}  // namespace fencegate::lockstore
