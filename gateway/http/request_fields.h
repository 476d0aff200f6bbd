#pragma once

#include <cstddef>
#include <string_view>

#include <boost/beast/http/message.hpp>

#include "base/net/http_header.h"

namespace fencegate::gateway {

inline constexpr std::string_view kFencingTokenField = "Fencing-Token";
// The field a replica adds when it forwards a fenced write to the shard's owner (several
// replicas, `cluster:`). A request that carries it is never forwarded again (loop guard): if the
// receiver does not own the shard (ownership moved meanwhile) it refuses with 503 and the client
// retries.
inline constexpr std::string_view kForwardedByField = "Fencegate-Forwarded-By";

// The request fields the gateway itself reads, found in one walk over the header: operator[],
// count and find each scan every field, and a request needs half a dozen of them. Values are the
// first field of each name (what operator[] gives), as views into the header: valid while it is not
// modified.
struct RequestFields {
  std::string_view host;
  std::size_t host_count = 0;  // RFC 9112 3.2: an HTTP/1.1 request has exactly one
  std::string_view expect;
  std::string_view request_id;  // X-Request-Id
  std::size_t request_id_count = 0;
  std::string_view fencing_token;
  std::size_t fencing_token_count = 0;
  std::string_view authorization;
  std::size_t authorization_count = 0;
  std::string_view user_agent;
  std::string_view traceparent;  // W3C Trace Context (trace_context.h)
  std::size_t traceparent_count = 0;
  std::size_t forwarded_by_count = 0;  // Fencegate-Forwarded-By
};

RequestFields ScanRequestFields(const adapters::RequestHeader& header);

}  // namespace fencegate::gateway
