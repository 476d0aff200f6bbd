#pragma once

#include <string>
#include <string_view>

#include <boost/beast/http/message.hpp>

#include "base/net/http_header.h"

namespace fencegate::gateway {

// What the gateway knows about the client side of a request, for the forwarding fields.
struct ForwardingFacts {
  std::string_view client_ip;  // textual address, IPv6 without brackets
  std::string_view request_id;
  bool tls = false;  // the request came in over TLS: Forwarded says proto=https
  // A traceparent the gateway generated (trace_context.h), set in place of any the client sent;
  // empty: the client's is passed on as it is.
  std::string_view traceparent{};
};

// Prepares a request header for the backend (RFC 9110 7.6.1): removes Connection, every field
// Connection names, Keep-Alive, Proxy-Connection, Proxy-Authorization, TE, Trailer, Upgrade and
// Expect (the gateway answers 100-continue itself), keeping framing (Content-Length,
// Transfer-Encoding), Host and the client's conditional fields even if Connection names them.
// Adds Via, appends to X-Forwarded-For and Forwarded, and sets X-Request-Id (a client's single
// X-Request-Id that already holds facts.request_id, the one the gateway adopted, stays as sent)
// and traceparent when facts.traceparent is set. The other fields keep their order and their
// bytes. `scratch` is a reusable buffer for composed values.
void SanitizeRequestHeader(adapters::RequestHeader& header, const ForwardingFacts& facts,
                           std::string* scratch);

// Removes hop-by-hop fields from a backend's response header, including Transfer-Encoding:
// the gateway chooses the framing towards its client itself.
void SanitizeResponseHeader(adapters::ResponseHeader& header);

inline constexpr std::string_view kViaValue = "1.1 fencegate";
inline constexpr std::string_view kXRequestId = "X-Request-Id";
inline constexpr std::string_view kXForwardedFor = "X-Forwarded-For";

}  // namespace fencegate::gateway
