#pragma once

#include <cstddef>
#include <string_view>

namespace fencegate::adapters {

// Header field values as RFC 9110 reads them: optional whitespace (space, tab) around a value
// and around each item of a comma-separated list. Shared by the fields container, the adapters
// and the gateway's sanitizer so that all three split a Connection value the same way.

inline std::string_view TrimOws(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// Calls `visit(item)` for each non-empty item of the comma-separated `list`, trimmed; the items
// are views of `list`. For lists of tokens (Connection, TE): no quoted commas to care about.
template <class Visit>
void ForEachListItem(std::string_view list, Visit&& visit) {
  while (!list.empty()) {
    const std::size_t comma = list.find(',');
    const std::string_view item = TrimOws(list.substr(0, comma));
    list = comma == std::string_view::npos ? std::string_view{} : list.substr(comma + 1);
    if (!item.empty()) visit(item);
  }
}

}  // namespace fencegate::adapters
