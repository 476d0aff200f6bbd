#include "gateway/admin/admin_request.h"

#include <charconv>

namespace fencegate::gateway {
namespace {

constexpr std::size_t kMaxLimit = 10000;

}  // namespace

std::optional<std::size_t> ParseLimitQuery(std::string_view query, std::size_t fallback) {
  std::size_t limit = fallback;
  while (!query.empty()) {
    const auto amp = query.find('&');
    const std::string_view pair = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view{} : query.substr(amp + 1);
    if (!pair.starts_with("limit=")) continue;
    const std::string_view value = pair.substr(6);
    const auto result = std::from_chars(value.data(), value.data() + value.size(), limit);
    if (result.ec != std::errc() || result.ptr != value.data() + value.size() || limit == 0 ||
        limit > kMaxLimit) {
      return std::nullopt;
    }
  }
  return limit;
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
