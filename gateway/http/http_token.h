#pragma once

#include <array>
#include <string_view>

namespace fencegate::gateway {

// RFC 9110 tchar, as a table: the sanitizer checks every character of two Forwarded values per
// forwarded request with it.
inline constexpr std::array<bool, 256> kHttpTokenChars = [] {
  std::array<bool, 256> table{};
  for (int c = 'a'; c <= 'z'; ++c) table[c] = true;
  for (int c = 'A'; c <= 'Z'; ++c) table[c] = true;
  for (int c = '0'; c <= '9'; ++c) table[c] = true;
  for (const char c : std::string_view("!#$%&'*+-.^_`|~")) {
    table[static_cast<unsigned char>(c)] = true;
  }
  return table;
}();

// True for an RFC 9110 token (1*tchar): a field name, a method, an unquoted parameter value.
inline bool IsHttpToken(std::string_view value) {
  if (value.empty()) return false;
  for (const char c : value) {
    if (!kHttpTokenChars[static_cast<unsigned char>(c)]) return false;
  }
  return true;
}

}  // namespace fencegate::gateway
