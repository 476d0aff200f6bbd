#include "lockstore/locks/lock_rules.h"

#include <algorithm>

namespace fencegate::lockstore {
namespace {

constexpr std::size_t kMaxLockName = 128;
constexpr std::string_view kNamePlaceholder = "{name}";

bool IsNameChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
         c == '_' || c == ':' || c == '-';
}

}  // namespace

bool IsValidLockName(std::string_view name) {
  return !name.empty() && name.size() <= kMaxLockName &&
         std::all_of(name.begin(), name.end(), IsNameChar);
}

bool IsValidLockPattern(std::string_view pattern) {
  return !pattern.empty() && pattern.size() <= kMaxLockName &&
         std::all_of(pattern.begin(), pattern.end(),
                     [](char c) { return IsNameChar(c) || c == '*'; });
}

bool GlobMatch(std::string_view pattern, std::string_view name) {
  // Iterative matcher with one backtrack point: linear in practice for '*' globs.
  std::size_t p = 0, n = 0, star = std::string_view::npos, resume = 0;
  while (n < name.size()) {
    if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      resume = n;
    } else if (p < pattern.size() && pattern[p] == name[n]) {
      ++p;
      ++n;
    } else if (star != std::string_view::npos) {
      p = star + 1;
      n = ++resume;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

Status ValidateLockFenceKeyTemplate(std::string_view text) {
  if (text.empty()) return Status::InvalidArgument("empty fence key");
  std::string rest(text);
  for (auto at = rest.find(kNamePlaceholder); at != std::string::npos;
       at = rest.find(kNamePlaceholder)) {
    rest.erase(at, kNamePlaceholder.size());
  }
  if (rest.find_first_of("{}") != std::string::npos) {
    return Status::InvalidArgument("the only placeholder is {name}");
  }
  return Status::Ok();
}

std::string RenderLockFenceKey(std::string_view text, std::string_view name) {
  std::string out;
  std::size_t start = 0;
  for (auto at = text.find(kNamePlaceholder); at != std::string_view::npos;
       at = text.find(kNamePlaceholder, start)) {
    out.append(text.substr(start, at - start));
    out.append(name);
    start = at + kNamePlaceholder.size();
  }
  out.append(text.substr(start));
  return out;
}

LockPolicy LockRules::Resolve(std::string_view name) const {
  LockPolicy policy;
  for (const LockRule& rule : rules_) {
    if (!GlobMatch(rule.pattern, name)) continue;
    for (const std::string& key : rule.fence_keys) {
      policy.fence_keys.push_back(RenderLockFenceKey(key, name));
    }
    policy.quarantine = rule.quarantine;
    break;
  }
  return policy;
}

}  // namespace fencegate::lockstore
