#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include <boost/beast/http/message.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include "gateway/http/refusal.h"

namespace fencegate::gateway {

// The JSON answers and request-body reading that the admin endpoints share.

using AdminResponse = boost::beast::http::response<boost::beast::http::string_body>;

// `value` as an application/json body with `status` (200 unless given).
void SetJson(boost::beast::http::status status, const boost::json::value& value,
             AdminResponse* response);
void SetJson(const boost::json::value& value, AdminResponse* response);

// The refusal's RFC 9457 problem as the body, with its status; `detail` empty: the table's.
void SetProblem(Refusal refusal, std::string_view detail, std::string_view instance,
                AdminResponse* response);

// RFC 3339 UTC text of Unix milliseconds, or null for 0 (never happened).
boost::json::value Rfc3339OrNull(std::int64_t unix_ms);

// The longest free-text member (reason, operator) an admin request body may carry.
inline constexpr std::size_t kMaxAdminTextMember = 1024;

// Reads the string member `key` of an admin request body into `out`: a non-empty string of at
// most kMaxAdminTextMember bytes. An absent member is fine unless `required` (and leaves `out`
// alone); anything else is false.
bool ReadTextMember(const boost::json::object& body, std::string_view key, bool required,
                    std::string* out);

}  // namespace fencegate::gateway
