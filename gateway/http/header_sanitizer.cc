#include "gateway/http/header_sanitizer.h"

#include <string_view>

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

// The fields cut whatever Connection says (RFC 9110 7.6.1). A switch: the sanitizers ask it for
// every field of every request and response.
bool IsHopByHop(http::field f) {
  switch (f) {
    case http::field::connection:
    case http::field::keep_alive:
    case http::field::proxy_connection:
    case http::field::te:
    case http::field::trailer:
    case http::field::upgrade:
      return true;
    default:
      return false;
  }
}

// The Connection options of a header that name a field not cut anyway: "keep-alive", the usual
// option, names a hop-by-hop field, so a typical request has none and no field is compared with
// them. The names are views of the Connection values (a field's text stays where it is while
// fields are erased).
using ConnectionOptions = boost::container::small_vector<std::string_view, 8>;

void AddConnectionOptions(std::string_view value, ConnectionOptions* options) {
  adapters::ForEachListItem(value, [options](std::string_view name) {
    if (!IsHopByHop(http::string_to_field(name))) options->push_back(name);
  });
}

// True for a field that a Connection option names and that may go.
bool NamedByConnection(const adapters::Fields::value_type& field, const ConnectionOptions& options,
                       bool is_request) {
  if (field.name() != http::field::unknown && IsProtectedFromConnection(field.name(), is_request)) {
    return false;
  }
  const std::string_view name = field.name_string();
  for (const std::string_view option : options) {
    if (option.size() == name.size() && boost::beast::iequals(name, option)) return true;
  }
  return false;
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

// A keep-alive connection sends the same Host from the same address request after request (and
// a forwarding replica's connection to the owner carries its writes from one address): the
// element composed for the previous request of this thread is reused.
const std::string& ForwardedElement(std::string_view client_ip, bool tls, std::string_view host) {
  struct Cache {
    bool valid = false;
    bool tls = false;
    std::string client_ip;
    std::string host;
    std::string element;
  };
  thread_local Cache cache;
  if (!cache.valid || cache.tls != tls || cache.client_ip != client_ip || cache.host != host) {
    cache.tls = tls;
    cache.client_ip.assign(client_ip);
    cache.host.assign(host);
    cache.element.clear();
    AppendForwardedElement(client_ip, tls, host, &cache.element);
    cache.valid = true;
  }
  return cache.element;
}

// What one walk over a request header finds for the rules of SanitizeRequestHeader.
struct RequestFieldsFound {
  ConnectionOptions options;
  bool cut = false;  // a field that goes whatever Connection says is present
  bool x_forwarded_for = false;
  bool forwarded = false;
  std::size_t x_request_ids = 0;
  std::string_view x_request_id;  // the first
  bool traceparent = false;
  std::string_view host;  // the first, as header[field::host] would give
  bool host_seen = false;
};

RequestFieldsFound WalkRequestFields(const adapters::RequestHeader& header) {
  RequestFieldsFound found;
  for (const auto& field : header) {
    switch (field.name()) {
      case http::field::connection:
        found.cut = true;
        AddConnectionOptions(field.value(), &found.options);
        break;
      case http::field::keep_alive:
      case http::field::proxy_connection:
      case http::field::te:
      case http::field::trailer:
      case http::field::upgrade:
      case http::field::proxy_authorization:
      case http::field::expect:  // the gateway answers 100-continue itself
        found.cut = true;
        break;
      case http::field::forwarded:
        found.forwarded = true;
        break;
      case http::field::host:
        if (!found.host_seen) found.host = field.value();
        found.host_seen = true;
        break;
      case http::field::unknown:
        if (boost::beast::iequals(field.name_string(), kXForwardedFor)) {
          found.x_forwarded_for = true;
        } else if (boost::beast::iequals(field.name_string(), kXRequestId)) {
          if (found.x_request_ids++ == 0) found.x_request_id = field.value();
        } else if (boost::beast::iequals(field.name_string(), kTraceparentField)) {
          found.traceparent = true;
        }
        break;
      default:
        break;
    }
  }
  return found;
}

bool IsCutFromRequest(http::field f) {
  return IsHopByHop(f) || f == http::field::proxy_authorization || f == http::field::expect;
}

}  // namespace

void SanitizeRequestHeader(adapters::RequestHeader& header, const ForwardingFacts& facts,
                           std::string* scratch) {
  // One walk finds the fields to cut and those the rules below replace or extend, so that absent
  // ones cost neither an erase nor a set (each a scan of the fields) but a plain insert.
  RequestFieldsFound found = WalkRequestFields(header);
  if (found.cut) {
    const bool named = !found.options.empty();
    header.erase_if([&found](const adapters::Fields::value_type& field) {
      return IsCutFromRequest(field.name()) ||
             (!found.options.empty() && NamedByConnection(field, found.options, true));
    });
    // A field Connection named may be one of those below: what is left is walked again (the
    // options are views of erased text, which stays valid but is no longer wanted).
    if (named) found = WalkRequestFields(header);
  }

  header.insert(http::field::via, kViaValue);

  if (found.x_forwarded_for) {
    BeginListAppend(header, kXForwardedFor, scratch);
    scratch->append(facts.client_ip);
    header.set(kXForwardedFor, *scratch);
  } else {
    header.insert(http::field::unknown, kXForwardedFor, facts.client_ip);
  }

  const std::string& element = ForwardedElement(facts.client_ip, facts.tls, found.host);
  if (found.forwarded) {
    BeginListAppend(header, "Forwarded", scratch);
    scratch->append(element);
    header.set(http::field::forwarded, *scratch);
  } else {
    header.insert(http::field::forwarded, element);
  }

  // The gateway adopts a client's single acceptable X-Request-Id as the request's id: that field
  // then already says what it must, and stays as it is.
  const bool adopted = found.x_request_ids == 1 && found.x_request_id == facts.request_id;
  if (found.x_request_ids == 0) {
    header.insert(http::field::unknown, kXRequestId, facts.request_id);
  } else if (!adopted) {
    header.set(kXRequestId, facts.request_id);
  }

  if (facts.traceparent.empty()) return;
  if (found.traceparent) {
    header.set(kTraceparentField, facts.traceparent);
  } else {
    header.insert(http::field::unknown, kTraceparentField, facts.traceparent);
  }
}

void SanitizeResponseHeader(adapters::ResponseHeader& header) {
  // Transfer-Encoding goes too: the gateway frames its response to the client itself.
  ConnectionOptions options;
  bool cut = false;
  for (const auto& field : header) {
    if (field.name() == http::field::connection) AddConnectionOptions(field.value(), &options);
    cut = cut || IsHopByHop(field.name()) || field.name() == http::field::transfer_encoding;
  }
  if (!cut) return;
  header.erase_if([&options](const adapters::Fields::value_type& field) {
    return IsHopByHop(field.name()) || field.name() == http::field::transfer_encoding ||
           (!options.empty() && NamedByConnection(field, options, false));
  });
}

}  // namespace fencegate::gateway
