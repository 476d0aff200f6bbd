#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include <yaml-cpp/yaml.h>

// `${VAR}`, `${VAR:-default}` and `$VAR` in the config file's values, as shells and Compose files
// write them; `$$` is a literal '$'. Expanded in every scalar value (never in keys) before the
// sections are read, so each reader sees the final text.
namespace fencegate::gateway::config_reading {

// The value of an environment variable, or nullopt when it is not set. std::getenv by default;
// tests pass their own.
using EnvironmentLookup = std::function<std::optional<std::string>(const std::string& name)>;

EnvironmentLookup ProcessEnvironment();

// Expands `text` into *out. On error (an unset variable without default, an unclosed "${", a
// '$' followed by nothing it can expand) returns false and sets *error.
bool ExpandEnvironment(std::string_view text, const EnvironmentLookup& lookup, std::string* out,
                       std::string* error);

// Expands every scalar value under `root` in place, reporting each error with the scalar's node.
void ExpandEnvironmentInTree(
    YAML::Node root, const EnvironmentLookup& lookup,
    const std::function<void(const YAML::Node&, const std::string&)>& report);

}  // namespace fencegate::gateway::config_reading
