#pragma once

#include <cstddef>
#include <optional>
#include <string>

#include <yaml-cpp/yaml.h>

// YAML lets an alias name a node that contains it (`a: &x {b: *x}`) and lets aliases of aliases
// multiply a small file into an enormous tree ("billion laughs"). yaml-cpp builds both as a graph
// that shares nodes, so every walk of the configuration (environment expansion, the section
// readers, the reload diff) would recurse forever or for hours. The loader refuses such a document
// before any walk.
namespace fencegate::gateway::config_reading {

struct AliasProblem {
  YAML::Mark mark;  // the node an alias leads back into, or where the walk gave up
  std::string message;
};

// Nodes a document may expand to through its aliases; far above any real configuration
// (a thousand routes with every option come to about 50,000).
inline constexpr std::size_t kMaxExpandedNodes = 1'000'000;

std::optional<AliasProblem> FindAliasProblem(const YAML::Node& root,
                                             std::size_t max_nodes = kMaxExpandedNodes);

}  // namespace fencegate::gateway::config_reading
