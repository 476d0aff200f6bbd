#include "gateway/config/alias_check.h"

#include <vector>

namespace fencegate::gateway::config_reading {
namespace {

class AliasWalk {
 public:
  explicit AliasWalk(std::size_t max_nodes) : max_nodes_(max_nodes) {}

  // Depth first; `path_` holds the nodes from the root down to the current one, so a node met
  // again among them was reached through an alias inside itself.
  bool Visit(const YAML::Node& node) {
    for (const YAML::Node& ancestor : path_) {
      if (ancestor.is(node)) {
        problem_ = AliasProblem{node.Mark(),
                                "an alias refers to a node that contains it (a recursive anchor); "
                                "the configuration would never end"};
        return false;
      }
    }
    if (++visited_ > max_nodes_) {
      problem_ = AliasProblem{node.Mark(), "aliases expand the document to more than " +
                                               std::to_string(max_nodes_) +
                                               " nodes; write the repeated parts out"};
      return false;
    }
    if (!node.IsMap() && !node.IsSequence()) return true;
    path_.push_back(node);
    for (auto it = node.begin(); it != node.end(); ++it) {
      const bool ok = node.IsMap() ? Visit(it->first) && Visit(it->second) : Visit(*it);
      if (!ok) return false;
    }
    path_.pop_back();
    return true;
  }

  std::optional<AliasProblem> problem() const { return problem_; }

 private:
  std::size_t max_nodes_;
  std::size_t visited_ = 0;
  std::vector<YAML::Node> path_;
  std::optional<AliasProblem> problem_;
};

}  // namespace

std::optional<AliasProblem> FindAliasProblem(const YAML::Node& root, std::size_t max_nodes) {
  AliasWalk walk(max_nodes);
  walk.Visit(root);
  return walk.problem();
}

}  // namespace fencegate::gateway::config_reading
