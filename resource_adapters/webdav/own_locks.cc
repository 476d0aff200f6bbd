#include "resource_adapters/webdav/own_locks.h"

#include <cstdint>
#include <cstdio>
#include <random>

namespace fencegate::adapters::webdav {
namespace {

std::string RandomMark() {
  std::random_device device;
  const std::uint64_t value = (static_cast<std::uint64_t>(device()) << 32) | device();
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(value));
  return "fencegate-write " + std::string(hex);
}

std::string_view WithoutTrailingSlash(std::string_view path) {
  while (path.size() > 1 && path.back() == '/') path.remove_suffix(1);
  return path;
}

// `ancestor` is `path` itself or a collection above it.
bool IsSelfOrAncestor(std::string_view ancestor, std::string_view path) {
  ancestor = WithoutTrailingSlash(ancestor);
  path = WithoutTrailingSlash(path);
  if (ancestor == path || ancestor == "/") return true;
  return path.size() > ancestor.size() && path.starts_with(ancestor) &&
         path[ancestor.size()] == '/';
}

}  // namespace

OwnLocks::OwnLocks() : owner_(RandomMark()) {}

void OwnLocks::Asking(const std::string& path) {
  std::lock_guard lock(mutex_);
  ++asking_[path];
}

void OwnLocks::Answered(const std::string& path, const std::optional<std::string>& granted) {
  std::lock_guard lock(mutex_);
  // In one step with the grant: a lock is never seen neither asked for nor held.
  if (granted) held_.insert(*granted);
  auto it = asking_.find(path);
  if (it != asking_.end() && --it->second == 0) asking_.erase(it);
}

void OwnLocks::Released(const std::string& token) {
  std::lock_guard lock(mutex_);
  held_.erase(token);
}

bool OwnLocks::IsOrphan(std::string_view path, const std::string& token) const {
  std::lock_guard lock(mutex_);
  if (held_.contains(token)) return false;
  for (const auto& [asked, count] : asking_) {
    if (IsSelfOrAncestor(asked, path)) return false;
  }
  return true;
}

}  // namespace fencegate::adapters::webdav
