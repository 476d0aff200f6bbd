#include "gateway/config/config_diff.h"

#include "gateway/config/config_loader.h"

#include <algorithm>
#include <map>

#include <yaml-cpp/yaml.h>

namespace fencegate::gateway {
namespace {

// Structural equality of two YAML nodes: the same scalars in the same shape (mapping order and
// formatting do not count).
bool SameNode(const YAML::Node& a, const YAML::Node& b) {
  if (!a || !b) return !a && !b;
  if (a.Type() != b.Type()) return false;
  switch (a.Type()) {
    case YAML::NodeType::Scalar:
      return a.Scalar() == b.Scalar();
    case YAML::NodeType::Sequence:
      if (a.size() != b.size()) return false;
      for (std::size_t i = 0; i < a.size(); ++i) {
        if (!SameNode(a[i], b[i])) return false;
      }
      return true;
    case YAML::NodeType::Map: {
      if (a.size() != b.size()) return false;
      for (const auto& entry : a) {
        const YAML::Node other = b[entry.first.Scalar()];
        if (!other || !SameNode(entry.second, other)) return false;
      }
      return true;
    }
    default:
      return true;  // both null or undefined
  }
}

// The entries of a `routes` list (by their `name`) or a `backends` mapping (by key).
std::map<std::string, YAML::Node> NamedEntries(const YAML::Node& node) {
  std::map<std::string, YAML::Node> entries;
  if (!node) return entries;
  if (node.IsSequence()) {
    for (const YAML::Node& entry : node) {
      if (entry.IsMap() && entry["name"]) entries.emplace(entry["name"].Scalar(), entry);
    }
  } else if (node.IsMap()) {
    for (const auto& entry : node) entries.emplace(entry.first.Scalar(), entry.second);
  }
  return entries;
}

NamedChanges DiffNamed(const YAML::Node& before, const YAML::Node& after) {
  NamedChanges changes;
  const auto old_entries = NamedEntries(before);
  const auto new_entries = NamedEntries(after);
  for (const auto& [name, node] : new_entries) {
    const auto old = old_entries.find(name);
    if (old == old_entries.end()) {
      changes.added.push_back(name);
    } else if (!SameNode(old->second, node)) {
      changes.changed.push_back(name);
    }
  }
  for (const auto& [name, node] : old_entries) {
    if (new_entries.count(name) == 0) changes.removed.push_back(name);
  }
  return changes;
}

// The text was loaded before; should the file have changed between the loader's read and ours,
// nothing compares equal (every entry counts as new, nothing is reused).
YAML::Node ParseOrEmpty(const std::string& text) {
  try {
    return YAML::Load(text);
  } catch (const YAML::Exception&) {
    return YAML::Node();
  }
}

bool SameAddress(const ListenAddress& a, const ListenAddress& b) {
  return a.host == b.host && a.port == b.port;
}

}  // namespace

ConfigDiff DiffConfigs(const Config& before, const std::string& before_text, const Config& after,
                       const std::string& after_text) {
  const YAML::Node old_root = ParseOrEmpty(before_text);
  const YAML::Node new_root = ParseOrEmpty(after_text);
  ConfigDiff diff;
  diff.routes = DiffNamed(old_root["routes"], new_root["routes"]);
  diff.backends = DiffNamed(old_root["backends"], new_root["backends"]);

  // Compared as applied: the command line's overrides count, not what the file says.
  if (!SameAddress(before.listen, after.listen)) diff.restart_required.push_back("listen");
  if (!SameAddress(before.admin_listen, after.admin_listen)) {
    diff.restart_required.push_back("admin_listen");
  }
  if (before.data_dir != after.data_dir) diff.restart_required.push_back("data_dir");
  if (before.threads != after.threads) diff.restart_required.push_back("threads");
  if (before.user != after.user) diff.restart_required.push_back("user");
  if (before.group != after.group) diff.restart_required.push_back("group");
  if (before.limits.relay_buffer_memory != after.limits.relay_buffer_memory) {
    diff.restart_required.push_back("limits.relay_buffer_memory");
  }
  if (before.timeouts.shutdown_drain != after.timeouts.shutdown_drain) {
    diff.restart_required.push_back("timeouts.shutdown_drain");
  }
  // The access log moves from one file to another live; turning it on or off, or to or from
  // standard output, needs a restart.
  const auto is_file = [](const std::string& path) { return !path.empty() && path != "-"; };
  if (before.access_log.path != after.access_log.path &&
      !(is_file(before.access_log.path) && is_file(after.access_log.path))) {
    diff.restart_required.push_back("access_log.path");
  }
  if (before.access_log.error_lines_per_second != after.access_log.error_lines_per_second) {
    diff.restart_required.push_back("access_log.error_lines_per_second");
  }
  // The event log's file and level are taken at start (a reload's own events go to it).
  for (const char* section : {"store", "cluster", "locks", "tls", "log"}) {
    if (!SameNode(old_root[section], new_root[section])) {
      diff.restart_required.push_back(section);
    }
  }
  return diff;
}

void KeepRestartOnlyValues(const Config& running, const ConfigDiff& diff, Config* next) {
  next->listen = running.listen;
  next->admin_listen = running.admin_listen;
  next->threads = running.threads;
  next->user = running.user;
  next->group = running.group;
  next->limits.relay_buffer_memory = running.limits.relay_buffer_memory;
  next->timeouts.shutdown_drain = running.timeouts.shutdown_drain;
  next->store = running.store;
  next->cluster = running.cluster;
  next->locks = running.locks;
  next->tls = running.tls;
  next->log = running.log;
  next->access_log.error_lines_per_second = running.access_log.error_lines_per_second;
  if (std::find(diff.restart_required.begin(), diff.restart_required.end(), "access_log.path") !=
      diff.restart_required.end()) {
    next->access_log.path = running.access_log.path;
  }
  if (next->data_dir != running.data_dir) {
    next->data_dir = running.data_dir;
    ExpandDataDirInPaths(next);  // "{data_dir}" in backends' paths stays the running one
  }
}

}  // namespace fencegate::gateway
