// FlatFields (base/net/flat_fields.h): the field operations, the Fields concept's rules
// checked against Beast's basic_fields on the same inputs, and the serialized header.
#include "base/net/flat_fields.h"

#include <random>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>
#include <boost/beast/http/fields.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>

namespace fencegate::adapters {
namespace {

namespace http = boost::beast::http;
using Pairs = std::vector<std::pair<std::string, std::string>>;

template <class FieldsT>
Pairs PairsOf(const FieldsT& fields) {
  Pairs out;
  for (const auto& f : fields) out.emplace_back(f.name_string(), f.value());
  return out;
}

// Same-named fields in their relative order, names sorted: what basic_fields and FlatFields
// must agree on (basic_fields groups a repeated name; FlatFields keeps arrival order).
template <class FieldsT>
Pairs Grouped(const FieldsT& fields) {
  Pairs out = PairsOf(fields);
  std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
    std::string x = a.first, y = b.first;
    for (char& c : x) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    for (char& c : y) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return x < y;
  });
  return out;
}

TEST(FlatFieldsTest, InsertFindCountAndEraseByFieldAndByName) {
  FlatFields fields;
  fields.insert(http::field::host, "backend");
  fields.insert("X-Custom", "  padded\t");
  fields.insert("x-custom", "second");
  fields.insert(http::field::content_length, "12");

  EXPECT_EQ(PairsOf(fields), (Pairs{{"Host", "backend"},
                                    {"X-Custom", "padded"},
                                    {"x-custom", "second"},
                                    {"Content-Length", "12"}}));
  EXPECT_EQ(fields.count("X-CUSTOM"), 2u);
  EXPECT_EQ(fields.count(http::field::host), 1u);
  EXPECT_EQ(fields.count("host"), 1u);      // a known field, looked up by its name
  EXPECT_EQ(fields["x-custom"], "padded");  // the first of the name
  EXPECT_EQ(fields[http::field::content_length], "12");
  EXPECT_EQ(fields[http::field::expect], "");
  EXPECT_TRUE(fields.contains("Content-Length"));
  EXPECT_FALSE(fields.contains(http::field::expect));
  EXPECT_EQ(fields.at(http::field::host), "backend");
  EXPECT_THROW(fields.at("Missing"), std::out_of_range);

  EXPECT_EQ(fields.erase("X-Custom"), 2u);
  EXPECT_EQ(fields.erase(http::field::expect), 0u);
  EXPECT_EQ(PairsOf(fields), (Pairs{{"Host", "backend"}, {"Content-Length", "12"}}));
  const auto next = fields.erase(fields.find(http::field::host));
  ASSERT_NE(next, fields.end());
  EXPECT_EQ(next->name(), http::field::content_length);
  fields.clear();
  EXPECT_EQ(fields.begin(), fields.end());
}

TEST(FlatFieldsTest, SetReplacesTheFirstInPlaceAndDropsTheOthers) {
  FlatFields fields;
  fields.insert("A", "1");
  fields.insert(http::field::connection, "close");
  fields.insert("B", "2");
  fields.insert(http::field::connection, "upgrade");
  fields.set(http::field::connection, "keep-alive");  // longer: new text
  EXPECT_EQ(PairsOf(fields), (Pairs{{"A", "1"}, {"Connection", "keep-alive"}, {"B", "2"}}));
  fields.set("connection", "x");  // shorter: over the old value
  EXPECT_EQ(PairsOf(fields), (Pairs{{"A", "1"}, {"connection", "x"}, {"B", "2"}}));
  fields.set("C", "3");  // absent: appended
  EXPECT_EQ(PairsOf(fields).back(), (std::pair<std::string, std::string>{"C", "3"}));
  // A value taken from the field itself.
  fields.set("A", fields["A"]);
  fields.set("B", fields["B"].substr(0, 0));
  EXPECT_EQ(fields["A"], "1");
  EXPECT_EQ(fields["B"], "");
}

TEST(FlatFieldsTest, ManyFieldsAndLongValuesGrowTheStorage) {
  FlatFields fields;
  const std::string long_value(3000, 'v');
  for (int i = 0; i < 100; ++i) fields.insert("X-" + std::to_string(i), std::to_string(i));
  fields.insert("X-Long", long_value);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(fields["x-" + std::to_string(i)], std::to_string(i));
  EXPECT_EQ(fields["X-Long"], long_value);
  EXPECT_THROW(fields.insert("X-Huge", std::string(70000, 'h')), std::length_error);
  EXPECT_EQ(fields.count("X-Huge"), 0u);  // nothing half-made
}

TEST(FlatFieldsTest, CopyMoveAndSwapCarryFieldsMethodAndTarget) {
  http::request_header<FlatFields> header;
  header.method_string("PROPFIND");
  header.target("/a/b");
  header.insert("X-Repeated", "one");
  header.insert("X-Repeated", "two");
  http::request_header<FlatFields> copy = header;
  http::request_header<FlatFields> moved = std::move(header);
  for (const auto* h : {&copy, &moved}) {
    EXPECT_EQ(h->method_string(), "PROPFIND");
    EXPECT_EQ(h->target(), "/a/b");
    EXPECT_EQ(h->count("x-repeated"), 2u);
  }
  copy.target("/changed");
  EXPECT_EQ(moved.target(), "/a/b");
  http::request_header<FlatFields> other;
  other.method(http::verb::get);
  other.target("/other");
  swap(other, moved);  // http::swap: the fields, the version and the method
  EXPECT_EQ(other.target(), "/a/b");
  EXPECT_EQ(moved.target(), "/other");
  EXPECT_EQ(moved.method(), http::verb::get);
  moved = copy;
  EXPECT_EQ(moved.target(), "/changed");
  EXPECT_EQ(PairsOf(moved), PairsOf(copy));
}

// The Fields concept's rules (keep-alive, chunked, content length, their setters) against
// basic_fields on the same headers.
TEST(FlatFieldsTest, MessageRulesMatchBasicFields) {
  const std::vector<Pairs> inputs = {
      {},
      {{"Connection", "close"}},
      {{"Connection", "keep-alive"}},
      {{"Connection", "Keep-Alive, Upgrade"}, {"Upgrade", "websocket"}},
      {{"Connection", "foo, close, bar"}},
      {{"Transfer-Encoding", "chunked"}},
      {{"Transfer-Encoding", "gzip, chunked"}},
      {{"Transfer-Encoding", "chunked, gzip"}},
      {{"Transfer-Encoding", "gzip"}, {"Content-Length", "5"}},
      {{"Content-Length", "10"}, {"X-A", "1"}, {"Content-Length", "10"}},
  };
  for (const Pairs& input : inputs) {
    for (unsigned version : {10u, 11u}) {
      for (int op = 0; op < 7; ++op) {
        http::response<http::string_body, http::fields> beast;
        http::response<http::string_body, FlatFields> flat;
        for (const auto& [name, value] : input) {
          beast.insert(name, value);
          flat.insert(name, value);
        }
        beast.version(version);
        flat.version(version);
        SCOPED_TRACE(::testing::Message() << "version " << version << " op " << op << " input "
                                          << (input.empty() ? "" : input[0].second));
        EXPECT_EQ(flat.keep_alive(), beast.keep_alive());
        EXPECT_EQ(flat.chunked(), beast.chunked());
        EXPECT_EQ(flat.has_content_length(), beast.has_content_length());
        switch (op) {
          case 0:
            flat.keep_alive(true), beast.keep_alive(true);
            break;
          case 1:
            flat.keep_alive(false), beast.keep_alive(false);
            break;
          case 2:
            flat.chunked(true), beast.chunked(true);
            break;
          case 3:
            flat.chunked(false), beast.chunked(false);
            break;
          case 4:
            flat.content_length(42), beast.content_length(42);
            break;
          case 5:
            flat.content_length(boost::none), beast.content_length(boost::none);
            break;
          case 6:
            flat.body() = "hello", beast.body() = "hello";
            flat.prepare_payload(), beast.prepare_payload();
            break;
        }
        EXPECT_EQ(Grouped(flat), Grouped(beast));
        EXPECT_EQ(flat.keep_alive(), beast.keep_alive());
        EXPECT_EQ(flat.chunked(), beast.chunked());
      }
    }
  }
}

// Random inserts, sets and erases on both: the same fields, each name's values in the same
// order.
TEST(FlatFieldsTest, RandomEditsAgreeWithBasicFields) {
  const std::vector<std::string> names = {
      "Host", "host", "X-A", "x-a", "X-B", "Connection", "Content-Length", "Via", "X-Request-Id"};
  std::mt19937 random(20261203);
  for (int round = 0; round < 200; ++round) {
    http::fields beast;
    FlatFields flat;
    for (int step = 0; step < 30; ++step) {
      const std::string& name = names[random() % names.size()];
      const std::string value = std::string(random() % 4, ' ') + std::to_string(random() % 1000);
      switch (random() % 4) {
        case 0:
        case 1:
          beast.insert(name, value);
          flat.insert(name, value);
          break;
        case 2:
          beast.set(name, value);
          flat.set(name, value);
          break;
        case 3:
          EXPECT_EQ(flat.erase(name), beast.erase(name));
          break;
      }
      ASSERT_EQ(Grouped(flat), Grouped(beast)) << "round " << round << " step " << step;
      EXPECT_EQ(flat.count(name), beast.count(name));
      EXPECT_EQ(flat[name], beast[name]);
    }
  }
}

TEST(FlatFieldsTest, WriterSerializesRequestAndResponseHeaders) {
  http::request<http::string_body, FlatFields> request;
  request.method(http::verb::put);
  request.target("/k/1");
  request.version(11);
  request.set(http::field::host, "backend");
  request.insert("Fencing-Token", "7");
  request.body() = "abc";
  request.prepare_payload();
  std::ostringstream written;
  written << request;
  EXPECT_EQ(written.str(),
            "PUT /k/1 HTTP/1.1\r\nHost: backend\r\nFencing-Token: 7\r\nContent-Length: 3\r\n\r\n"
            "abc");

  http::response<http::string_body, FlatFields> response;
  response.result(http::status::conflict);
  response.version(10);
  response.set(http::field::server, "x");
  std::ostringstream head;
  head << response.base();
  EXPECT_EQ(head.str(), "HTTP/1.0 409 Conflict\r\nServer: x\r\n\r\n");
  response.reason("Stale");
  http::request<http::string_body, FlatFields> unknown_method;
  unknown_method.method_string("PROPFIND");
  unknown_method.target("/");
  std::ostringstream other;
  other << response.base() << unknown_method.base();
  EXPECT_EQ(other.str(), "HTTP/1.0 409 Stale\r\nServer: x\r\n\r\nPROPFIND / HTTP/1.1\r\n\r\n");
}

}  // namespace
}  // namespace fencegate::adapters
