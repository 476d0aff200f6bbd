#include "gateway/http/host_canonical.h"

#include <array>

namespace fencegate::gateway {
namespace {

char Lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// RFC 3986 reg-name without pct-encoded: unreserved and sub-delims. A table: every byte of
// every request's Host is looked up (a search of the punctuation cost a call per '.').
constexpr std::array<bool, 256> kRegNameChars = [] {
  std::array<bool, 256> table{};
  for (int c = 'A'; c <= 'Z'; ++c) table[c] = table[c - 'A' + 'a'] = true;
  for (int c = '0'; c <= '9'; ++c) table[c] = true;
  for (const char c : std::string_view("-._~!$&'()*+,;=")) {
    table[static_cast<unsigned char>(c)] = true;
  }
  return table;
}();

bool IsRegNameChar(char c) { return kRegNameChars[static_cast<unsigned char>(c)]; }

// What an IPv6 (or IPv4-in-IPv6) literal is made of between its brackets.
bool IsIpLiteralChar(char c) {
  return IsDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F') || c == ':' || c == '.';
}

// An empty port (RFC 3986 allows "host:") or 1-5 digits.
bool IsPort(std::string_view port) {
  if (port.size() > 5) return false;
  for (char c : port) {
    if (!IsDigit(c)) return false;
  }
  return true;
}

}  // namespace

bool CanonicaliseHost(std::string_view value, std::string* out) {
  out->clear();
  std::string_view host = value;
  std::string_view port;
  if (value.starts_with('[')) {
    const std::size_t close = value.find(']');
    if (close == std::string_view::npos || close == 1) return false;
    host = value.substr(0, close + 1);
    for (char c : host.substr(1, host.size() - 2)) {
      if (!IsIpLiteralChar(c)) return false;
    }
    const std::string_view rest = value.substr(close + 1);
    if (!rest.empty()) {
      if (rest.front() != ':') return false;
      port = rest.substr(1);
    }
  } else {
    const std::size_t colon = value.find(':');
    if (colon != std::string_view::npos) {
      host = value.substr(0, colon);
      port = value.substr(colon + 1);
    }
    if (host.ends_with('.')) host.remove_suffix(1);
    if (host.empty() && !value.empty()) return false;
    char previous = '.';
    for (char c : host) {
      if (!IsRegNameChar(c) || (c == '.' && previous == '.')) return false;
      previous = c;
    }
    if (previous == '.' && !host.empty()) return false;
  }
  if (!IsPort(port)) return false;
  out->assign(host);
  for (char& c : *out) c = Lower(c);
  return true;
}

}  // namespace fencegate::gateway
