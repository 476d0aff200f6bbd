#include "gateway/header_sanitizer.h"

#include <boost/beast/core/string.hpp>
#include <boost/beast/http/field.hpp>

namespace fencegate::gateway {
namespace http = boost::beast::http;
namespace {

std::string_view TrimOws(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

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

template <bool isRequest>
void RemoveConnectionOptions(http::header<isRequest, http::fields>& header) {
  // Beast's equal_range spans list order, not just same-name fields, and erasing while walking
  // it invalidates the walk: copy the option names out first.
  thread_local std::string options;
  options.clear();
  for (const auto& field : header) {
    if (field.name() != http::field::connection) continue;
    options.append(field.value());
    options.push_back(',');
  }
  std::string_view list = options;
  while (!list.empty()) {
    const auto comma = list.find(',');
    const std::string_view name = TrimOws(list.substr(0, comma));
    list = comma == std::string_view::npos ? std::string_view{} : list.substr(comma + 1);
    if (name.empty()) continue;
    const http::field known = http::string_to_field(name);
    if (known != http::field::unknown) {
      if (!IsProtectedFromConnection(known, isRequest)) header.erase(known);
    } else {
      header.erase(name);
    }
  }
  header.erase(http::field::connection);
  header.erase(http::field::keep_alive);
  header.erase(http::field::proxy_connection);
  header.erase(http::field::te);
  header.erase(http::field::trailer);
  header.erase(http::field::upgrade);
}

// Starts a new value of the comma-separated list field `name` in `scratch`: the values of all
// its current fields, each followed by ", ". The caller appends its item and sets the field,
// which merges repeated fields into one.
void BeginListAppend(const http::request_header<>& header, std::string_view name,
                     std::string* scratch) {
  scratch->clear();
  for (const auto& field : header) {
    if (!boost::beast::iequals(field.name_string(), name)) continue;
    const std::string_view value = TrimOws(field.value());
    if (value.empty()) continue;
    scratch->append(value);
    scratch->append(", ");
  }
}

bool IsTokenChar(char c) {
  if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) return true;
  switch (c) {
    case '!':
    case '#':
    case '$':
    case '%':
    case '&':
    case '\'':
    case '*':
    case '+':
    case '-':
    case '.':
    case '^':
    case '_':
    case '`':
    case '|':
    case '~':
      return true;
    default:
      return false;
  }
}

// Appends `value` as an RFC 7239 value: a token as is, anything else as a quoted-string.
void AppendForwardedValue(std::string_view value, std::string* out) {
  bool token = !value.empty();
  for (const char c : value) token = token && IsTokenChar(c);
  if (token) {
    out->append(value);
    return;
  }
  out->push_back('"');
  for (const char c : value) {
    if (c == '"' || c == '\\') out->push_back('\\');
    out->push_back(c);
  }
  out->push_back('"');
}

}  // namespace

void SanitizeRequestHeader(http::request_header<>& header, const ForwardingFacts& facts,
                           std::string* scratch) {
  RemoveConnectionOptions(header);
  header.erase(http::field::proxy_authorization);
  header.erase(http::field::expect);

  header.insert(http::field::via, kViaValue);

  BeginListAppend(header, kXForwardedFor, scratch);
  scratch->append(facts.client_ip);
  header.set(kXForwardedFor, *scratch);

  BeginListAppend(header, "Forwarded", scratch);
  scratch->append("for=");
  if (facts.client_ip.find(':') != std::string_view::npos) {
    scratch->append("\"[").append(facts.client_ip).append("]\"");
  } else {
    AppendForwardedValue(facts.client_ip, scratch);
  }
  scratch->append(";proto=http");
  const std::string_view host = header[http::field::host];
  if (!host.empty()) {
    scratch->append(";host=");
    AppendForwardedValue(host, scratch);
  }
  header.set(http::field::forwarded, *scratch);

  header.set(kXRequestId, facts.request_id);
}

void SanitizeResponseHeader(http::response_header<>& header) {
  RemoveConnectionOptions(header);
  header.erase(http::field::transfer_encoding);
}

}  // namespace fencegate::gateway
