#include "gateway/http/header_sanitizer.h"

#include <array>

#include <boost/beast/core/string.hpp>
#include <boost/beast/http/field.hpp>
#include <boost/container/small_vector.hpp>

#include "base/net/field_lists.h"
#include "gateway/http/http_token.h"
#include "gateway/http/trace_context.h"

namespace fencegate::gateway {
namespace http = boost::beast::http;
namespace {

// Fields that a Connection option must never remove: framing, routing, and the client's own
// preconditions (dropping those would turn a conditional write into an unconditional one).
bool IsProtectedFromConnection(http::field f, bool is_request) {
  switch (f) {
    case http::field::content_length:
    case http::field::transfer_encoding:
    case http::field::connection:  // removed last, as a whole
      return true;
    case http::field::host:
    case http::field::if_match:
    case http::field::if_none_match:
    case http::field::if_modified_since:
    case http::field::if_unmodified_since:
    case http::field::if_range:
      return is_request;
    default:
      return false;
  }
}

// The fields RemoveConnectionOptions drops whatever Connection says.
constexpr http::field kHopByHop[] = {http::field::connection,       http::field::keep_alive,
                                     http::field::proxy_connection, http::field::te,
                                     http::field::trailer,          http::field::upgrade};

bool IsHopByHop(http::field f) {
  for (const http::field hop_by_hop : kHopByHop) {
    if (f == hop_by_hop) return true;
  }
  return false;
}

template <bool isRequest>
void RemoveConnectionOptions(http::header<isRequest, adapters::Fields>& header) {
  // The option names are views of the Connection values (a field's text stays where it is
  // while fields are erased), so one pass erases the hop-by-hop fields and those named.
  boost::container::small_vector<std::string_view, 8> options;
  bool hop_by_hop = false;
  for (const auto& field : header) {
    hop_by_hop = hop_by_hop || IsHopByHop(field.name());
    if (field.name() != http::field::connection) continue;
    adapters::ForEachListItem(field.value(),
                              [&options](std::string_view name) { options.push_back(name); });
  }
  if (!hop_by_hop) return;
  header.erase_if([&options](const adapters::Fields::value_type& field) {
    if (IsHopByHop(field.name())) return true;
    if (field.name() != http::field::unknown &&
        IsProtectedFromConnection(field.name(), isRequest)) {
      return false;
    }
    const std::string_view name = field.name_string();
    for (const std::string_view option : options) {
      if (option.size() == name.size() && boost::beast::iequals(name, option)) return true;
    }
    return false;
  });
}

// Starts a new value of the comma-separated list field `name` in `scratch`: the values of all
// its current fields, each followed by ", ". The caller appends its item and sets the field,
// which merges repeated fields into one.
void BeginListAppend(const adapters::RequestHeader& header, std::string_view name,
                     std::string* scratch) {
  scratch->clear();
  for (const auto& field : header) {
    if (!boost::beast::iequals(field.name_string(), name)) continue;
    const std::string_view value = adapters::TrimOws(field.value());
    if (value.empty()) continue;
    scratch->append(value);
    scratch->append(", ");
  }
}

// Appends `value` as an RFC 7239 value: a token as is, anything else as a quoted-string. Runs
// without a quote or backslash are appended whole, not a character at a time.
void AppendForwardedValue(std::string_view value, std::string* out) {
  if (IsHttpToken(value)) {
    out->append(value);
    return;
  }
  out->push_back('"');
  while (!value.empty()) {
    const std::size_t special = value.find_first_of("\"\\");
    out->append(value.substr(0, special));
    if (special == std::string_view::npos) break;
    out->push_back('\\');
    out->push_back(value[special]);
    value.remove_prefix(special + 1);
  }
  out->push_back('"');
}

// Appends this hop's RFC 7239 element: for=<client>;proto=http(s)[;host=<Host>].
void AppendForwardedElement(std::string_view client_ip, bool tls, std::string_view host,
                            std::string* out) {
  out->append("for=");
  if (client_ip.find(':') != std::string_view::npos) {
    out->append("\"[").append(client_ip).append("]\"");
  } else {
    AppendForwardedValue(client_ip, out);
  }
  out->append(tls ? ";proto=https" : ";proto=http");
  if (!host.empty()) {
    out->append(";host=");
    AppendForwardedValue(host, out);
  }
}

struct ForwardedElementCache {
  bool valid = false;
  bool tls = false;
  std::string client_ip;
  std::string host;
  std::string element;
};

}  // namespace

void SanitizeRequestHeader(adapters::RequestHeader& header, const ForwardingFacts& facts,
                           std::string* scratch) {
  RemoveConnectionOptions(header);
  // One walk records which of the fields below the client sent, so that absent ones cost
  // neither an erase nor a set (each a scan of the fields) but a plain insert.
  bool proxy_authorization = false;
  bool expect = false;
  bool x_forwarded_for = false;
  bool forwarded = false;
  bool x_request_id = false;
  bool traceparent = false;
  std::string_view host;
  bool host_seen = false;
  for (const auto& field : header) {
    switch (field.name()) {
      case http::field::proxy_authorization:
        proxy_authorization = true;
        break;
      case http::field::expect:
        expect = true;
        break;
      case http::field::forwarded:
        forwarded = true;
        break;
      case http::field::host:
        if (!host_seen) host = field.value();  // the first, as header[field::host] would give
        host_seen = true;
        break;
      case http::field::unknown:
        x_forwarded_for =
            x_forwarded_for || boost::beast::iequals(field.name_string(), kXForwardedFor);
        x_request_id = x_request_id || boost::beast::iequals(field.name_string(), kXRequestId);
        traceparent = traceparent || boost::beast::iequals(field.name_string(), kTraceparentField);
        break;
      default:
        break;
    }
  }
  if (proxy_authorization) header.erase(http::field::proxy_authorization);
  if (expect) header.erase(http::field::expect);

  header.insert(http::field::via, kViaValue);

  if (x_forwarded_for) {
    scratch->clear();
    BeginListAppend(header, kXForwardedFor, scratch);
    scratch->append(facts.client_ip);
    header.set(kXForwardedFor, *scratch);
  } else {
    header.insert(http::field::unknown, kXForwardedFor, facts.client_ip);
  }

  if (forwarded) {
    scratch->clear();
    BeginListAppend(header, "Forwarded", scratch);
    AppendForwardedElement(facts.client_ip, facts.tls, host, scratch);
    header.set(http::field::forwarded, *scratch);
  } else {
    // A keep-alive connection sends the same Host from the same address request after
    // request: the element composed for the previous request of this thread is reused.
    thread_local ForwardedElementCache cache;
    if (!cache.valid || cache.tls != facts.tls || cache.client_ip != facts.client_ip ||
        cache.host != host) {
      cache.tls = facts.tls;
      cache.client_ip.assign(facts.client_ip);
      cache.host.assign(host);
      cache.element.clear();
      AppendForwardedElement(facts.client_ip, facts.tls, host, &cache.element);
      cache.valid = true;
    }
    header.insert(http::field::forwarded, cache.element);
  }

  if (x_request_id) {
    header.set(kXRequestId, facts.request_id);
  } else {
    header.insert(http::field::unknown, kXRequestId, facts.request_id);
  }

  if (facts.traceparent.empty()) return;
  if (traceparent) {
    header.set(kTraceparentField, facts.traceparent);
  } else {
    header.insert(http::field::unknown, kTraceparentField, facts.traceparent);
  }
}

void SanitizeResponseHeader(adapters::ResponseHeader& header) {
  RemoveConnectionOptions(header);
  header.erase(http::field::transfer_encoding);
}

}  // namespace fencegate::gateway
