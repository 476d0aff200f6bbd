#include "gateway/config/value_parsers.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <initializer_list>
#include <limits>
#include <utility>

namespace fencegate::gateway::config_reading {

namespace {

constexpr std::string_view kDataDirToken = "{data_dir}";

// Splits "10s" into "10" and "s".
std::pair<std::string_view, std::string_view> SplitNumberAndUnit(std::string_view text) {
  std::size_t digits = 0;
  while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') ++digits;
  return {text.substr(0, digits), text.substr(digits)};
}

struct DurationUnit {
  std::string_view name;
  std::uint64_t ticks;  // of the duration type parsed into
};

// "<decimal><unit>" into a count of ticks; false on a unit not in `units` or on overflow.
bool ParseTicks(std::string_view text, std::initializer_list<DurationUnit> units,
                std::int64_t* out) {
  auto [number, unit] = SplitNumberAndUnit(text);
  std::uint64_t value = 0;
  if (!ParseDecimal(number, &value)) return false;
  for (const DurationUnit& candidate : units) {
    if (candidate.name != unit) continue;
    constexpr auto kMax = static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
    if (value > kMax / candidate.ticks) return false;
    *out = static_cast<std::int64_t>(value * candidate.ticks);
    return true;
  }
  return false;
}

}  // namespace

bool ParseDecimal(std::string_view text, std::uint64_t* out) {
  if (text.empty() || text.size() > 20) return false;
  std::uint64_t value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
    std::uint64_t digit = static_cast<std::uint64_t>(c - '0');
    if (value > (std::numeric_limits<std::uint64_t>::max() - digit) / 10) return false;
    value = value * 10 + digit;
  }
  *out = value;
  return true;
}

bool ParseDuration(std::string_view text, std::chrono::milliseconds* out) {
  std::int64_t ms = 0;
  if (!ParseTicks(text, {{"ms", 1}, {"s", 1000}, {"m", 60 * 1000}, {"h", 60 * 60 * 1000}}, &ms)) {
    return false;
  }
  *out = std::chrono::milliseconds(ms);
  return true;
}

// For waits shorter than a millisecond: units us, ms and s.
bool ParseMicroseconds(std::string_view text, std::chrono::microseconds* out) {
  std::int64_t us = 0;
  if (!ParseTicks(text, {{"us", 1}, {"ms", 1000}, {"s", 1000 * 1000}}, &us)) return false;
  *out = std::chrono::microseconds(us);
  return true;
}

bool ParseSize(std::string_view text, std::uint64_t* out) {
  auto [number, unit] = SplitNumberAndUnit(text);
  std::uint64_t value = 0;
  if (!ParseDecimal(number, &value)) return false;
  struct Unit {
    std::string_view name;
    std::uint64_t bytes;
  };
  static constexpr Unit kUnits[] = {
      {"", 1},
      {"B", 1},
      {"KiB", 1ull << 10},
      {"MiB", 1ull << 20},
      {"GiB", 1ull << 30},
      {"TiB", 1ull << 40},
      {"KB", 1000ull},
      {"MB", 1000ull * 1000},
      {"GB", 1000ull * 1000 * 1000},
      {"TB", 1000ull * 1000 * 1000 * 1000},
  };
  for (const Unit& candidate : kUnits) {
    if (candidate.name != unit) continue;
    if (value > std::numeric_limits<std::uint64_t>::max() / candidate.bytes) return false;
    *out = value * candidate.bytes;
    return true;
  }
  return false;
}

std::string ResolveAgainst(const std::string& base_dir, const std::string& path) {
  if (path.empty()) return path;
  const std::filesystem::path given(path);
  if (given.is_absolute() || base_dir.empty()) return given.lexically_normal().string();
  return (std::filesystem::path(base_dir) / given).lexically_normal().string();
}

std::string ExpandDataDir(const std::string& text, const std::string& data_dir) {
  std::string out;
  std::size_t start = 0;
  for (std::size_t found = text.find(kDataDirToken); found != std::string::npos;
       found = text.find(kDataDirToken, start)) {
    out.append(text, start, found - start);
    out += data_dir;
    start = found + kDataDirToken.size();
  }
  out.append(text, start);
  return out;
}

// Parses "http://HOST[:PORT][/]" into host and port; returns an error message or "".
std::string ParseBackendUrl(std::string_view url, adapters::UpstreamOptions* out) {
  const std::string_view kForm = "expected http://HOST:PORT or https://HOST:PORT";
  std::size_t scheme_end = url.find("://");
  if (scheme_end == std::string_view::npos) return std::string(kForm) + ", got " + Quote(url);
  std::string scheme(url.substr(0, scheme_end));
  std::transform(scheme.begin(), scheme.end(), scheme.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (scheme != "http" && scheme != "https")
    return "unsupported scheme " + Quote(scheme) + "; " + std::string(kForm);

  std::string_view rest = url.substr(scheme_end + 3);
  std::size_t authority_end = rest.find_first_of("/?#");
  std::string_view authority = rest.substr(0, authority_end);
  std::string_view tail =
      authority_end == std::string_view::npos ? std::string_view() : rest.substr(authority_end);
  if (!tail.empty() && tail != "/") {
    return "a backend url has no path, query or fragment (the client's path is forwarded "
           "unchanged); got " +
           Quote(tail);
  }
  if (authority.find('@') != std::string_view::npos)
    return "credentials in the url are not supported";

  std::string_view host;
  std::string_view port_text;
  if (!authority.empty() && authority.front() == '[') {
    std::size_t close = authority.find(']');
    if (close == std::string_view::npos) return "unterminated '[' in the IPv6 address";
    host = authority.substr(1, close - 1);
    std::string_view after = authority.substr(close + 1);
    if (!after.empty()) {
      if (after.front() != ':') return std::string(kForm) + ", got " + Quote(url);
      port_text = after.substr(1);
    }
  } else {
    std::size_t colon = authority.rfind(':');
    host = authority.substr(0, colon);
    if (colon != std::string_view::npos) port_text = authority.substr(colon + 1);
    bool name_ok = std::all_of(host.begin(), host.end(), [](char c) {
      return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.';
    });
    if (!name_ok) return "invalid host " + Quote(host);
  }
  if (host.empty()) return "the url has no host; " + std::string(kForm);

  out->tls = scheme == "https";
  std::uint64_t port = out->tls ? 443 : 80;
  if (!port_text.empty() || authority.back() == ':') {
    if (!ParseDecimal(port_text, &port) || port == 0 || port > 65535) {
      return "invalid port " + Quote(port_text) + " (expected 1..65535)";
    }
  }
  out->host = std::string(host);
  out->port = static_cast<std::uint16_t>(port);
  return {};
}

}  // namespace fencegate::gateway::config_reading
