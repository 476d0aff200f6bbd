#pragma once

#include <string_view>

#include "base/net/http_header.h"
#include "gateway/http/underscore_action.h"

namespace fencegate::gateway {

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
