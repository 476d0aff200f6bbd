#include "gateway/config/environment_expansion.h"

#include <cstdlib>
#include <vector>

namespace fencegate::gateway::config_reading {
namespace {

bool IsNameStart(char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_'; }
bool IsNameChar(char c) { return IsNameStart(c) || (c >= '0' && c <= '9'); }

// Appends the value of `name` (or `fallback` when unset and given) to *out.
bool AppendVariable(const std::string& name, const std::optional<std::string_view>& fallback,
                    const EnvironmentLookup& lookup, std::string* out, std::string* error) {
  const std::optional<std::string> value = lookup(name);
  // ${VAR:-default}, as in the shell: the default also stands in for an empty value.
  if (value && !(value->empty() && fallback)) {
    *out += *value;
  } else if (fallback) {
    *out += *fallback;
  } else {
    *error = "the environment variable " + name + " is not set (write ${" + name +
             ":-DEFAULT} to give a default, or $$ for a literal '$')";
    return false;
  }
  return true;
}

}  // namespace

EnvironmentLookup ProcessEnvironment() {
  return [](const std::string& name) -> std::optional<std::string> {
    const char* value = std::getenv(name.c_str());
    if (value == nullptr) return std::nullopt;
    return std::string(value);
  };
}

bool ExpandEnvironment(std::string_view text, const EnvironmentLookup& lookup, std::string* out,
                       std::string* error) {
  out->clear();
  std::size_t i = 0;
  while (i < text.size()) {
    const std::size_t dollar = text.find('$', i);
    out->append(
        text.substr(i, dollar == std::string_view::npos ? std::string_view::npos : dollar - i));
    if (dollar == std::string_view::npos) break;
    const std::string_view rest = text.substr(dollar + 1);
    if (rest.starts_with('$')) {
      *out += '$';
      i = dollar + 2;
    } else if (rest.starts_with('{')) {
      const std::size_t close = rest.find('}');
      if (close == std::string_view::npos) {
        *error = "\"${\" without a closing '}' (write $$ for a literal '$')";
        return false;
      }
      const std::string_view inside = rest.substr(1, close - 1);
      const std::size_t colon = inside.find(":-");
      const std::string_view name = inside.substr(0, colon);
      if (name.empty() || !IsNameStart(name.front()) ||
          name.find_first_not_of(
              "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_") !=
              std::string_view::npos) {
        *error = "\"${" + std::string(inside) +
                 "}\" is not a variable: expected ${NAME} or ${NAME:-DEFAULT}";
        return false;
      }
      std::optional<std::string_view> fallback;
      if (colon != std::string_view::npos) fallback = inside.substr(colon + 2);
      if (!AppendVariable(std::string(name), fallback, lookup, out, error)) return false;
      i = dollar + 1 + close + 1;
    } else if (!rest.empty() && IsNameStart(rest.front())) {
      std::size_t end = 1;
      while (end < rest.size() && IsNameChar(rest[end])) ++end;
      if (!AppendVariable(std::string(rest.substr(0, end)), std::nullopt, lookup, out, error)) {
        return false;
      }
      i = dollar + 1 + end;
    } else {
      *error = "a '$' that starts no variable: write $$ for a literal '$'";
      return false;
    }
  }
  return true;
}

void ExpandEnvironmentInTree(
    YAML::Node root, const EnvironmentLookup& lookup,
    const std::function<void(const YAML::Node&, const std::string&)>& report) {
  // An anchored node reached again through an alias is the same node: expanding it twice would
  // turn "$$X" into "$X" and then into X's value.
  std::vector<YAML::Node> expanded;
  std::function<void(YAML::Node)> visit = [&](YAML::Node node) {
    if (node.IsMap()) {
      for (auto it = node.begin(); it != node.end(); ++it) visit(it->second);
    } else if (node.IsSequence()) {
      for (auto it = node.begin(); it != node.end(); ++it) visit(*it);
    } else if (node.IsScalar() && node.Scalar().find('$') != std::string::npos) {
      for (const YAML::Node& done : expanded) {
        if (done.is(node)) return;
      }
      std::string value, error;
      if (!ExpandEnvironment(node.Scalar(), lookup, &value, &error)) {
        report(node, error);
        return;
      }
      node = value;  // keeps the node's mark: later errors still point into the file
      expanded.push_back(node);
    }
  };
  visit(root);
}

}  // namespace fencegate::gateway::config_reading
