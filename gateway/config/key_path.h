#pragma once

#include <string>
#include <string_view>

namespace fencegate::gateway {

// How configuration errors name a key and quote a value: "routes[0].backend", 'value'.
inline std::string Child(const std::string& path, std::string_view key) {
  return path.empty() ? std::string(key) : path + "." + std::string(key);
}

inline std::string Quote(std::string_view text) { return "'" + std::string(text) + "'"; }

}  // namespace fencegate::gateway
