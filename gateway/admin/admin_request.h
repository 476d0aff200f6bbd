#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace fencegate::gateway {

// Pieces of request handling that the admin endpoints share.

// The `limit=N` of a listing's query string: `fallback` when absent, nullopt unless N is an
// integer from 1 to 10000.
std::optional<std::size_t> ParseLimitQuery(std::string_view query, std::size_t fallback = 100);

// Who the audit trail names for a forced operation (fence repair, forced lock release). With
// admin principals configured it is always the authenticated `principal`: a body's "operator"
// (`claimed`, may be empty) that names someone else is only appended to the free-text `reason`,
// so nobody can write another operator's name into the trail. With an open admin API
// (`principal` empty) the body's claim is all there is.
std::string AuditedOperator(std::string_view principal, std::string_view claimed,
                            std::string* reason);

}  // namespace fencegate::gateway
