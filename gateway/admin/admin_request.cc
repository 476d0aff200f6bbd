#include "gateway/admin/admin_request.h"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdint>

#include "base/encoding/percent.h"

namespace fencegate::gateway {
namespace {

// Reads exactly `digits` decimal digits at `at` of `text`.
bool ReadDigits(std::string_view text, std::size_t at, std::size_t digits, int* out) {
  if (at + digits > text.size()) return false;
  *out = 0;
  for (std::size_t i = at; i < at + digits; ++i) {
    if (text[i] < '0' || text[i] > '9') return false;
    *out = *out * 10 + (text[i] - '0');
  }
  return true;
}

std::optional<std::int64_t> ParseRfc3339Ms(std::string_view text) {
  // 2026-12-06T13:45:00[.fff…](Z|+hh:mm|-hh:mm)
  int year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0;
  if (text.size() < 20 || !ReadDigits(text, 0, 4, &year) || text[4] != '-' ||
      !ReadDigits(text, 5, 2, &month) || text[7] != '-' || !ReadDigits(text, 8, 2, &day) ||
      (text[10] != 'T' && text[10] != 't') || !ReadDigits(text, 11, 2, &hour) || text[13] != ':' ||
      !ReadDigits(text, 14, 2, &minute) || text[16] != ':' || !ReadDigits(text, 17, 2, &second)) {
    return std::nullopt;
  }
  std::size_t at = 19;
  std::int64_t millis = 0;
  if (text[at] == '.') {
    std::size_t digits = 0;
    for (++at; at < text.size() && text[at] >= '0' && text[at] <= '9'; ++at, ++digits) {
      if (digits < 3) millis = millis * 10 + (text[at] - '0');
    }
    if (digits == 0) return std::nullopt;
    for (; digits < 3; ++digits) millis *= 10;
  }
  std::int64_t offset_minutes = 0;
  const std::string_view zone = text.substr(std::min(at, text.size()));
  if (zone == "Z" || zone == "z") {
  } else if (zone.size() == 6 && (zone[0] == '+' || zone[0] == '-') && zone[3] == ':') {
    int zone_hours = 0, zone_minutes = 0;
    if (!ReadDigits(zone, 1, 2, &zone_hours) || !ReadDigits(zone, 4, 2, &zone_minutes) ||
        zone_hours > 23 || zone_minutes > 59) {
      return std::nullopt;
    }
    offset_minutes = (zone[0] == '+' ? 1 : -1) * (zone_hours * 60 + zone_minutes);
  } else {
    return std::nullopt;
  }
  const std::chrono::year_month_day date{std::chrono::year(year),
                                         std::chrono::month(static_cast<unsigned>(month)),
                                         std::chrono::day(static_cast<unsigned>(day))};
  if (!date.ok() || hour > 23 || minute > 59 || second > 60) return std::nullopt;
  const std::int64_t days = std::chrono::sys_days(date).time_since_epoch().count();
  const std::int64_t seconds = days * 86400 + hour * 3600 + minute * 60 + second;
  return (seconds - offset_minutes * 60) * 1000 + millis;
}

}  // namespace

std::optional<AdminQuery> AdminQuery::Parse(std::string_view query,
                                            std::initializer_list<std::string_view> allowed,
                                            std::string* error) {
  AdminQuery parsed;
  while (!query.empty()) {
    const auto amp = query.find('&');
    const std::string_view pair = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view{} : query.substr(amp + 1);
    if (pair.empty()) continue;
    const auto equals = pair.find('=');
    const std::optional<std::string> name = encoding::PercentDecode(pair.substr(0, equals));
    const std::optional<std::string> value = encoding::PercentDecode(
        equals == std::string_view::npos ? std::string_view{} : pair.substr(equals + 1));
    if (!name || !value) {
      *error = "the query parameter '" + std::string(pair) + "' is badly percent-encoded";
      return std::nullopt;
    }
    if (std::find(allowed.begin(), allowed.end(), *name) == allowed.end()) {
      *error = "unknown query parameter '" + *name + "'";
      if (allowed.size() == 0) {
        *error += ": this resource takes none";
      } else {
        *error += "; this resource takes";
        for (const std::string_view known : allowed) {
          *error += ' ';
          *error += known;
        }
      }
      return std::nullopt;
    }
    if (parsed.Find(*name) != nullptr) {
      *error = "the query parameter '" + *name + "' is repeated";
      return std::nullopt;
    }
    parsed.params_.emplace_back(*name, *value);
  }
  return parsed;
}

const std::string* AdminQuery::Find(std::string_view name) const {
  for (const auto& [key, value] : params_) {
    if (key == name) return &value;
  }
  return nullptr;
}

std::string AdminQuery::Value(std::string_view name) const {
  const std::string* value = Find(name);
  return value == nullptr ? std::string() : *value;
}

std::optional<std::size_t> AdminQuery::Limit(std::string* error) const {
  const std::string* text = Find("limit");
  if (text == nullptr) return kDefaultLimit;
  std::size_t limit = 0;
  const auto result = std::from_chars(text->data(), text->data() + text->size(), limit);
  if (result.ec != std::errc() || result.ptr != text->data() + text->size() || limit == 0 ||
      limit > kMaxLimit) {
    *error = "limit must be an integer from 1 to " + std::to_string(kMaxLimit);
    return std::nullopt;
  }
  return limit;
}

std::optional<std::int64_t> ParseTimeParameter(std::string_view text) {
  if (!text.empty() &&
      std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    std::int64_t unix_ms = 0;
    const auto result = std::from_chars(text.data(), text.data() + text.size(), unix_ms);
    if (result.ec != std::errc()) return std::nullopt;
    return unix_ms;
  }
  return ParseRfc3339Ms(text);
}

std::string AuditedOperator(std::string_view principal, std::string_view claimed,
                            std::string* reason) {
  if (principal.empty()) return std::string(claimed);
  if (!claimed.empty() && claimed != principal) {
    *reason += " (operator field: ";
    *reason += claimed;
    *reason += ')';
  }
  return std::string(principal);
}

}  // namespace fencegate::gateway
