#include "gateway/http/header_sanitizer.h"

#include <iterator>
#include <string>
#include <string_view>

#include <gtest/gtest.h>

namespace fencegate::gateway {
namespace {

namespace http = boost::beast::http;

class HeaderSanitizerTest : public ::testing::Test {
 protected:
  adapters::RequestHeader MakeHeader() {
    adapters::RequestHeader header;
    header.method(http::verb::put);
    header.target("/files/a");
    header.set(http::field::host, "files.example:8080");
    return header;
  }
  std::string scratch_;
};

TEST_F(HeaderSanitizerTest, RemovesHopByHopAndConnectionNamedFields) {
  auto header = MakeHeader();
  header.set(http::field::connection, "keep-alive, X-Secret");
  header.insert(http::field::content_type, "text/plain");
  header.insert(http::field::connection, "x-other");  // a second Connection field, not adjacent
  header.set("X-Secret", "s");
  header.set("X-Other", "o");
  header.set(http::field::keep_alive, "timeout=5");
  header.set(http::field::proxy_connection, "keep-alive");
  header.set(http::field::proxy_authorization, "Basic eDp5");
  header.set(http::field::te, "trailers");
  header.set(http::field::trailer, "X-Checksum");
  header.set(http::field::upgrade, "websocket");
  header.set(http::field::expect, "100-continue");

  SanitizeRequestHeader(header, {"192.0.2.7", "req-1"}, &scratch_);

  for (auto name : {"Connection", "X-Secret", "X-Other", "Keep-Alive", "Proxy-Connection",
                    "Proxy-Authorization", "TE", "Trailer", "Upgrade", "Expect"}) {
    EXPECT_EQ(header.count(name), 0u) << name;
  }
  EXPECT_EQ(header[http::field::content_type], "text/plain");
  EXPECT_EQ(header[http::field::host], "files.example:8080");
}

TEST_F(HeaderSanitizerTest, KeepsConditionalsAndFramingEvenWhenConnectionNamesThem) {
  auto header = MakeHeader();
  header.set(http::field::connection, "If-Match, If-None-Match, Content-Length, Host");
  header.set(http::field::if_match, "\"v1\"");
  header.set(http::field::if_none_match, "*");
  header.set(http::field::if_unmodified_since, "Wed, 21 Oct 2015 07:28:00 GMT");
  header.set(http::field::if_modified_since, "Wed, 21 Oct 2015 07:28:00 GMT");
  header.set(http::field::content_length, "5");

  SanitizeRequestHeader(header, {"192.0.2.7", "req-1"}, &scratch_);

  EXPECT_EQ(header[http::field::if_match], "\"v1\"");
  EXPECT_EQ(header[http::field::if_none_match], "*");
  EXPECT_EQ(header[http::field::if_unmodified_since], "Wed, 21 Oct 2015 07:28:00 GMT");
  EXPECT_EQ(header[http::field::if_modified_since], "Wed, 21 Oct 2015 07:28:00 GMT");
  EXPECT_EQ(header[http::field::content_length], "5");
  EXPECT_EQ(header[http::field::host], "files.example:8080");
  EXPECT_EQ(header.count(http::field::connection), 0u);
}

TEST_F(HeaderSanitizerTest, AddsViaForwardingFieldsAndRequestId) {
  auto header = MakeHeader();
  header.set(http::field::via, "1.0 edge");
  header.insert(http::field::accept, "*/*");
  header.insert("X-Forwarded-For", "203.0.113.1");
  header.insert("X-Forwarded-For", "203.0.113.2");
  header.set(http::field::forwarded, "for=203.0.113.1");
  header.set("X-Request-Id", "client-chosen");

  SanitizeRequestHeader(header, {"192.0.2.7", "req-1"}, &scratch_);

  EXPECT_EQ(header.count(http::field::via), 2u);
  EXPECT_EQ(header["X-Forwarded-For"], "203.0.113.1, 203.0.113.2, 192.0.2.7");
  EXPECT_EQ(header.count("X-Forwarded-For"), 1u);
  EXPECT_EQ(header[http::field::forwarded],
            "for=203.0.113.1, for=192.0.2.7;proto=http;host=\"files.example:8080\"");
  EXPECT_EQ(header["X-Request-Id"], "req-1");
  bool found_fencegate_via = false;
  for (const auto& field : header) {
    if (field.name() == http::field::via && field.value() == kViaValue) found_fencegate_via = true;
  }
  EXPECT_TRUE(found_fencegate_via);
}

TEST_F(HeaderSanitizerTest, QuotesIpv6ClientInForwarded) {
  auto header = MakeHeader();
  header.set(http::field::host, "files.example");
  SanitizeRequestHeader(header, {"2001:db8::1", "req-2"}, &scratch_);
  EXPECT_EQ(header[http::field::forwarded], "for=\"[2001:db8::1]\";proto=http;host=files.example");
  EXPECT_EQ(header["X-Forwarded-For"], "2001:db8::1");
}

// The element of a request without Forwarded is reused while address and Host repeat: a new
// Host or address on the same thread must not get the previous request's element.
TEST_F(HeaderSanitizerTest, ForwardedFollowsEachRequestsHostAndAddress) {
  const auto forwarded = [this](std::string_view host, std::string_view client_ip) {
    auto header = MakeHeader();
    if (host.empty()) {
      header.erase(http::field::host);
    } else {
      header.set(http::field::host, host);
    }
    SanitizeRequestHeader(header, {client_ip, "req-3"}, &scratch_);
    EXPECT_EQ(header.count(http::field::forwarded), 1u);
    return std::string(header[http::field::forwarded]);
  };
  EXPECT_EQ(forwarded("a.example", "192.0.2.7"), "for=192.0.2.7;proto=http;host=a.example");
  EXPECT_EQ(forwarded("a.example", "192.0.2.7"), "for=192.0.2.7;proto=http;host=a.example");
  EXPECT_EQ(forwarded("b.example:81", "192.0.2.7"),
            "for=192.0.2.7;proto=http;host=\"b.example:81\"");
  EXPECT_EQ(forwarded("b.example:81", "192.0.2.8"),
            "for=192.0.2.8;proto=http;host=\"b.example:81\"");
  EXPECT_EQ(forwarded("", "192.0.2.8"), "for=192.0.2.8;proto=http");
  EXPECT_EQ(forwarded("b.example:81", "192.0.2.8"),
            "for=192.0.2.8;proto=http;host=\"b.example:81\"");
}

// A request that already carries Forwarded (one a replica forwarded, say) gets this hop's element
// appended, from the same per-thread element as a request without one: it must follow each
// request's Host and address too.
TEST_F(HeaderSanitizerTest, ForwardedAppendFollowsEachRequestsHostAndAddress) {
  const auto appended = [this](std::string_view host, std::string_view client_ip) {
    auto header = MakeHeader();
    header.set(http::field::host, host);
    header.set(http::field::forwarded, "for=203.0.113.1;proto=https");
    SanitizeRequestHeader(header, {client_ip, "req-4"}, &scratch_);
    EXPECT_EQ(header.count(http::field::forwarded), 1u);
    return std::string(header[http::field::forwarded]);
  };
  EXPECT_EQ(appended("a.example", "192.0.2.7"),
            "for=203.0.113.1;proto=https, for=192.0.2.7;proto=http;host=a.example");
  EXPECT_EQ(appended("a.example", "192.0.2.7"),
            "for=203.0.113.1;proto=https, for=192.0.2.7;proto=http;host=a.example");
  EXPECT_EQ(appended("b.example", "192.0.2.7"),
            "for=203.0.113.1;proto=https, for=192.0.2.7;proto=http;host=b.example");
  EXPECT_EQ(appended("b.example", "192.0.2.9"),
            "for=203.0.113.1;proto=https, for=192.0.2.9;proto=http;host=b.example");
}

// A request that came in over TLS says so; the per-thread element must not carry one
// connection's scheme over to a plain connection from the same address and Host.
TEST_F(HeaderSanitizerTest, ForwardedNamesTheSchemeTheClientUsed) {
  const auto forwarded = [this](bool tls, bool client_sent_forwarded) {
    auto header = MakeHeader();
    header.set(http::field::host, "a.example");
    if (client_sent_forwarded) header.set(http::field::forwarded, "for=198.51.100.1");
    SanitizeRequestHeader(header, {"192.0.2.7", "req-4", tls}, &scratch_);
    return std::string(header[http::field::forwarded]);
  };
  EXPECT_EQ(forwarded(true, false), "for=192.0.2.7;proto=https;host=a.example");
  EXPECT_EQ(forwarded(false, false), "for=192.0.2.7;proto=http;host=a.example");
  EXPECT_EQ(forwarded(true, false), "for=192.0.2.7;proto=https;host=a.example");
  EXPECT_EQ(forwarded(true, true), "for=198.51.100.1, for=192.0.2.7;proto=https;host=a.example");
}

// "Connection: keep-alive" names a field cut anyway: the Keep-Alive field still goes, and
// the other fields stay in the order the client sent them, repeated ones included.
TEST_F(HeaderSanitizerTest, CutsHopByHopFieldsAndKeepsTheOrderOfTheRest) {
  auto header = MakeHeader();
  header.insert(http::field::accept, "text/plain");
  header.insert(http::field::connection, "keep-alive");
  header.insert("X-Tag", "one");
  header.insert(http::field::keep_alive, "timeout=5");
  header.insert(http::field::accept, "*/*");
  header.insert(http::field::te, "trailers");
  header.insert("x-tag", "two");

  SanitizeRequestHeader(header, {"192.0.2.7", "req-1"}, &scratch_);

  std::string order;
  for (const auto& field : header) {
    order.append(field.name_string()).append("=").append(field.value()).append(";");
  }
  EXPECT_EQ(order,
            "Host=files.example:8080;Accept=text/plain;X-Tag=one;Accept=*/*;x-tag=two;"
            "Via=1.1 fencegate;X-Forwarded-For=192.0.2.7;"
            "Forwarded=for=192.0.2.7;proto=http;host=\"files.example:8080\";X-Request-Id=req-1;");
}

// A field that Connection names is gone before the gateway adds its own: a client cannot make
// its X-Forwarded-For, Forwarded or X-Request-Id survive (or vanish) by naming them.
TEST_F(HeaderSanitizerTest, FieldsNamedByConnectionAreCutBeforeTheGatewaysOwnAreAdded) {
  auto header = MakeHeader();
  header.insert(http::field::connection, "keep-alive, X-Forwarded-For, forwarded");
  header.insert("X-Forwarded-For", "203.0.113.1");
  header.insert(http::field::forwarded, "for=203.0.113.1");
  header.insert("X-Request-Id", "req-1");
  header.insert(http::field::connection, "x-request-id");

  SanitizeRequestHeader(header, {"192.0.2.7", "req-1"}, &scratch_);

  EXPECT_EQ(header.count("X-Forwarded-For"), 1u);
  EXPECT_EQ(header["X-Forwarded-For"], "192.0.2.7");
  EXPECT_EQ(header.count(http::field::forwarded), 1u);
  EXPECT_EQ(header[http::field::forwarded], "for=192.0.2.7;proto=http;host=\"files.example:8080\"");
  EXPECT_EQ(header.count("X-Request-Id"), 1u);
  EXPECT_EQ(header["X-Request-Id"], "req-1");
  EXPECT_EQ(header.count(http::field::connection), 0u);
}

// The client's single X-Request-Id that the gateway adopted stays where it was; any other goes
// for the request's own id.
TEST_F(HeaderSanitizerTest, AnAdoptedRequestIdStaysAndOthersAreReplaced) {
  auto adopted = MakeHeader();
  adopted.insert("x-request-id", "client-id");
  adopted.insert(http::field::accept, "*/*");
  SanitizeRequestHeader(adopted, {"192.0.2.7", "client-id"}, &scratch_);
  EXPECT_EQ(adopted.count("X-Request-Id"), 1u);
  EXPECT_EQ(adopted["X-Request-Id"], "client-id");
  EXPECT_EQ(std::next(adopted.begin())->name_string(), "x-request-id");

  auto repeated = MakeHeader();
  repeated.insert("X-Request-Id", "client-id");
  repeated.insert("X-Request-Id", "client-id");
  SanitizeRequestHeader(repeated, {"192.0.2.7", "generated-id"}, &scratch_);
  EXPECT_EQ(repeated.count("X-Request-Id"), 1u);
  EXPECT_EQ(repeated["X-Request-Id"], "generated-id");

  auto other = MakeHeader();
  other.insert("X-Request-Id", "not acceptable");
  SanitizeRequestHeader(other, {"192.0.2.7", "generated-id"}, &scratch_);
  EXPECT_EQ(other.count("X-Request-Id"), 1u);
  EXPECT_EQ(other["X-Request-Id"], "generated-id");
}

TEST(ResponseSanitizerTest, RemovesHopByHopAndTransferEncoding) {
  adapters::ResponseHeader header;
  header.set(http::field::connection, "close, X-Backend-Hop");
  header.set("X-Backend-Hop", "1");
  header.set(http::field::transfer_encoding, "chunked");
  header.set(http::field::etag, "\"v2\"");
  header.set(http::field::content_length, "12");
  SanitizeResponseHeader(header);
  EXPECT_EQ(header.count(http::field::connection), 0u);
  EXPECT_EQ(header.count("X-Backend-Hop"), 0u);
  EXPECT_EQ(header.count(http::field::transfer_encoding), 0u);
  EXPECT_EQ(header[http::field::etag], "\"v2\"");
  EXPECT_EQ(header[http::field::content_length], "12");
}

TEST(ResponseSanitizerTest, KeepsFieldsConnectionDoesNotName) {
  adapters::ResponseHeader header;
  header.set(http::field::connection, "keep-alive");
  header.set(http::field::keep_alive, "timeout=5");
  header.set(http::field::etag, "\"v2\"");
  header.set(http::field::content_length, "12");
  SanitizeResponseHeader(header);
  EXPECT_EQ(header.count(http::field::connection), 0u);
  EXPECT_EQ(header.count(http::field::keep_alive), 0u);
  EXPECT_EQ(header[http::field::etag], "\"v2\"");
  EXPECT_EQ(header[http::field::content_length], "12");
}

TEST_F(HeaderSanitizerTest, PassesTheClientsTraceparentOnWhenNoneIsGenerated) {
  auto header = MakeHeader();
  const std::string sent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
  header.set("traceparent", sent);
  header.set("tracestate", "vendor=1");
  SanitizeRequestHeader(header, {"192.0.2.7", "req-1"}, &scratch_);
  EXPECT_EQ(header["traceparent"], sent);
  EXPECT_EQ(header.count("traceparent"), 1u);
  EXPECT_EQ(header["tracestate"], "vendor=1");
}

TEST_F(HeaderSanitizerTest, AGeneratedTraceparentReplacesOrJoins) {
  const std::string generated = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
  auto replaced = MakeHeader();
  replaced.insert("Traceparent", "invalid");
  replaced.insert("traceparent", "also invalid");
  SanitizeRequestHeader(replaced,
                        {.client_ip = "192.0.2.7", .request_id = "req-1", .traceparent = generated},
                        &scratch_);
  EXPECT_EQ(replaced.count("traceparent"), 1u);
  EXPECT_EQ(replaced["traceparent"], generated);

  auto added = MakeHeader();
  SanitizeRequestHeader(added,
                        {.client_ip = "192.0.2.7", .request_id = "req-1", .traceparent = generated},
                        &scratch_);
  EXPECT_EQ(added["traceparent"], generated);
}

}  // namespace
}  // namespace fencegate::gateway
