#include "gateway/http/underscore_fields.h"

#include <algorithm>
#include <array>
#include <cctype>

#include <boost/beast/http/field.hpp>

namespace fencegate::gateway {
namespace http = boost::beast::http;
namespace {

// Names the gateway frames, strips as hop-by-hop, sets or reads (only those with a '-' can
// have an underscore spelling).
constexpr std::array<std::string_view, 10> kProtectedNames = {
    "content-length",          "transfer-encoding", "keep-alive",   "proxy-connection",
    "proxy-authorization",     "x-forwarded-for",   "x-request-id", "fencing-token",
    "fencing-token-signature", "idempotency-key"};

bool HasUnderscore(const adapters::Fields::value_type& field) {
  // Beast's known field names have none: only names it does not know need a look.
  return field.name() == http::field::unknown &&
         field.name_string().find('_') != std::string_view::npos;
}

bool ReadsAsProtected(std::string_view name) {
  return std::any_of(kProtectedNames.begin(), kProtectedNames.end(), [name](std::string_view p) {
    return p.size() == name.size() &&
           std::equal(p.begin(), p.end(), name.begin(), [](char a, char b) {
             const char folded =
                 b == '_' ? '-' : static_cast<char>(std::tolower(static_cast<unsigned char>(b)));
             return a == folded;
           });
  });
}

}  // namespace

UnderscoreFinding FindUnderscoreFields(const adapters::RequestHeader& header,
                                       std::string_view* lookalike) {
  UnderscoreFinding finding = UnderscoreFinding::kNone;
  for (const auto& field : header) {
    if (!HasUnderscore(field)) continue;
    if (ReadsAsProtected(field.name_string())) {
      *lookalike = field.name_string();
      return UnderscoreFinding::kLookalike;
    }
    finding = UnderscoreFinding::kOther;
  }
  return finding;
}

std::size_t DropUnderscoreFields(adapters::RequestHeader& header) {
  std::size_t dropped = 0;
  header.erase_if([&dropped](const adapters::Fields::value_type& field) {
    const bool drop = HasUnderscore(field);
    dropped += drop ? 1 : 0;
    return drop;
  });
  return dropped;
}

}  // namespace fencegate::gateway
