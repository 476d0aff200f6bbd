#pragma once

#include <string_view>

#include "base/net/http_header.h"

namespace fencegate::gateway {

// Request fields whose names contain '_' (README "Header names with underscores"). CGI, WSGI,
// PHP and many application servers turn both '-' and '_' into '_' (HTTP_TRANSFER_ENCODING),
// so behind them `Transfer_Encoding: chunked` is Transfer-Encoding, a framing the gateway
// never saw. What limits.headers_with_underscores does with such fields:
enum class UnderscoreAction {
  kDrop,    // removed before routing, counted (nginx's underscores_in_headers off)
  kReject,  // the request gets 400 underscore-in-header-name
  kAllow,   // forwarded as sent
};

// What the names of a request's fields amount to.
enum class UnderscoreFinding {
  kNone,       // no name contains '_'
  kOther,      // some do; none reads as a field below
  kLookalike,  // one reads, with '_' as '-', as a framing or hop-by-hop field or one the
               // gateway sets or reads itself (Transfer_Encoding, X_Forwarded_For): refused in
               // every mode, so that it never reaches a backend
};

// `lookalike` receives the first lookalike's name as sent.
UnderscoreFinding FindUnderscoreFields(const adapters::RequestHeader& header,
                                       std::string_view* lookalike);

// Removes every field whose name contains '_'; returns how many.
std::size_t DropUnderscoreFields(adapters::RequestHeader& header);

}  // namespace fencegate::gateway
