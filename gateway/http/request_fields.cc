#include "gateway/http/request_fields.h"

#include <boost/beast/core/string.hpp>

#include "gateway/http/header_sanitizer.h"
#include "gateway/http/trace_context.h"

namespace fencegate::gateway {
namespace http = boost::beast::http;

RequestFields ScanRequestFields(const adapters::RequestHeader& header) {
  RequestFields out;
  bool expect_seen = false;
  for (const auto& field : header) {
    switch (field.name()) {
      case http::field::host:
        if (out.host_count++ == 0) out.host = field.value();
        break;
      case http::field::expect:
        if (!expect_seen) out.expect = field.value();
        expect_seen = true;
        break;
      case http::field::authorization:
        if (out.authorization_count++ == 0) out.authorization = field.value();
        break;
      case http::field::user_agent:
        if (out.user_agent.empty()) out.user_agent = field.value();
        break;
      case http::field::unknown:
        if (boost::beast::iequals(field.name_string(), kXRequestId)) {
          if (out.request_id_count++ == 0) out.request_id = field.value();
        } else if (boost::beast::iequals(field.name_string(), kFencingTokenField)) {
          if (out.fencing_token_count++ == 0) out.fencing_token = field.value();
        } else if (boost::beast::iequals(field.name_string(), kTraceparentField)) {
          if (out.traceparent_count++ == 0) out.traceparent = field.value();
        } else if (boost::beast::iequals(field.name_string(), kForwardedByField)) {
          ++out.forwarded_by_count;
        }
        break;
      default:
        break;
    }
  }
  return out;
}

}  // namespace fencegate::gateway
