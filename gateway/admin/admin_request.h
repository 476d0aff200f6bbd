#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace fencegate::gateway {

// Pieces of request handling that the admin endpoints share.

// The query string of an admin list endpoint, checked against the parameters the endpoint
// takes: an unknown or repeated parameter, or a badly percent-encoded one, is an error that
// names it (400), never silently ignored. Values are percent-decoded; '+' stays '+' (a fence key
// is a path, not a form: a space is %20).
class AdminQuery {
 public:
  // The common `limit`: 1..kMaxLimit, kDefaultLimit when absent.
  static constexpr std::size_t kDefaultLimit = 100;
  static constexpr std::size_t kMaxLimit = 1000;

  // nullopt with `error` set when the query does not fit `allowed`.
  static std::optional<AdminQuery> Parse(std::string_view query,
                                         std::initializer_list<std::string_view> allowed,
                                         std::string* error);

  // The decoded value of `name`; nullptr when absent.
  const std::string* Find(std::string_view name) const;
  // The value of `name`, empty when absent.
  std::string Value(std::string_view name) const;

  // `limit`: nullopt with `error` set unless an integer from 1 to kMaxLimit.
  std::optional<std::size_t> Limit(std::string* error) const;

 private:
  std::vector<std::pair<std::string, std::string>> params_;
};

// Unix milliseconds of an RFC 3339 time ("2026-12-06T13:45:00Z", fractional seconds and a
// numeric offset allowed) or of a plain integer of Unix milliseconds; nullopt for anything else.
std::optional<std::int64_t> ParseTimeParameter(std::string_view text);

// Who the audit trail names for a forced operation (fence repair, forced lock release). With
// admin principals configured it is always the authenticated `principal`: a body's "operator"
// (`claimed`, may be empty) that names someone else is only appended to the free-text `reason`,
// so nobody can write another operator's name into the trail. With an open admin API
// (`principal` empty) the body's claim is all there is.
std::string AuditedOperator(std::string_view principal, std::string_view claimed,
                            std::string* reason);

}  // namespace fencegate::gateway
