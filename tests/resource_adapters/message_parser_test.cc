// MessageParser (base/net/message_parser.h): Beast's parsing rules into FlatFields.
#include "base/net/message_parser.h"

#include <string>
#include <string_view>

#include <gtest/gtest.h>
#include <boost/beast/http/empty_body.hpp>
#include <boost/beast/http/string_body.hpp>

namespace fencegate::adapters {
namespace {

namespace http = boost::beast::http;

// Feeds `text` to `parser` in pieces of `piece` bytes, as reads would; returns the error.
template <class Parser>
boost::beast::error_code Feed(Parser& parser, std::string_view text, std::size_t piece) {
  std::string pending;
  boost::beast::error_code ec;
  for (std::size_t at = 0; at < text.size() && !parser.is_done(); at += piece) {
    pending.append(text.substr(at, piece));
    while (!pending.empty() && !parser.is_done()) {
      const std::size_t used = parser.put(boost::asio::buffer(pending), ec);
      if (ec == http::error::need_more) {
        ec = {};
        break;
      }
      if (ec) return ec;
      pending.erase(0, used);
      if (used == 0) break;
    }
  }
  return ec;
}

TEST(MessageParserTest, ParsesARequestInAnyPieces) {
  const std::string request =
      "PUT /kv/a?x=1 HTTP/1.1\r\nHost: backend\r\nFencing-Token:  17 \r\nX-Two: a\r\n"
      "x-two: b\r\nContent-Length: 5\r\n\r\nhello";
  for (std::size_t piece : {std::size_t{1}, std::size_t{7}, request.size()}) {
    MessageParser<true, http::string_body> parser;
    parser.eager(true);
    ASSERT_FALSE(Feed(parser, request, piece)) << piece;
    ASSERT_TRUE(parser.is_done());
    const auto& message = parser.get();
    EXPECT_EQ(message.method(), http::verb::put);
    EXPECT_EQ(message.target(), "/kv/a?x=1");
    EXPECT_EQ(message.version(), 11u);
    EXPECT_EQ(message[http::field::host], "backend");
    EXPECT_EQ(message["fencing-token"], "17");
    EXPECT_EQ(message.count("X-Two"), 2u);
    EXPECT_EQ(message.body(), "hello");
    EXPECT_EQ(parser.content_length().value_or(0), 5u);
  }
}

TEST(MessageParserTest, KeepsAnUnknownMethodAndAResponsesReason) {
  MessageParser<true, http::empty_body> request;
  ASSERT_FALSE(Feed(request, "FROB /x HTTP/1.0\r\n\r\n", 64));
  EXPECT_EQ(request.get().method(), http::verb::unknown);
  EXPECT_EQ(request.get().method_string(), "FROB");
  EXPECT_FALSE(request.keep_alive());

  MessageParser<false, http::string_body> response;
  ASSERT_FALSE(Feed(response,
                    "HTTP/1.1 412 Not Today\r\nETag: \"v2\"\r\nTransfer-Encoding: chunked\r\n\r\n"
                    "3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n",
                    5));
  ASSERT_TRUE(response.is_done());
  const auto message = response.release();
  EXPECT_EQ(message.result_int(), 412u);
  EXPECT_EQ(message.reason(), "Not Today");
  EXPECT_EQ(message[http::field::etag], "\"v2\"");
  EXPECT_TRUE(message.chunked());
  EXPECT_EQ(message.body(), "abcde");
}

// A whole header block parsed at once: the fields refer to a copy of the client's lines (the
// input may be reused at once), those not laid out as they go on the wire are stored trimmed,
// and each field's line reads as it is forwarded.
TEST(MessageParserTest, AHeaderBlockIsCopiedOnceAndItsLinesKept) {
  std::string block =
      "PUT /kv/a HTTP/1.1\r\nHost: backend\r\nX-Padded:   17  \r\nX-Tight:a\r\n"
      "X-Empty: \r\nx-two: b\r\nContent-Length: 5\r\n\r\n";
  MessageParser<true, http::string_body> parser;
  boost::beast::error_code ec;
  EXPECT_EQ(parser.put_header_block(block, ec), block.size());
  EXPECT_FALSE(ec);
  ASSERT_TRUE(parser.is_header_done());
  block.assign(block.size(), '#');  // the read buffer is reused

  const auto& message = parser.get();
  EXPECT_EQ(message.target(), "/kv/a");
  std::string lines;
  for (const auto& field : message) lines.append(field.line());
  EXPECT_EQ(lines,
            "Host: backend\r\nX-Padded: 17\r\nX-Tight: a\r\nX-Empty: \r\nx-two: b\r\n"
            "Content-Length: 5\r\n");
  EXPECT_EQ(message["X-Padded"], "17");
  EXPECT_EQ(message["X-Empty"], "");

  // The body still follows through put().
  const std::string body = "hello";
  EXPECT_EQ(parser.put(boost::asio::buffer(body), ec), body.size());
  EXPECT_FALSE(ec);
  EXPECT_TRUE(parser.is_done());
  EXPECT_EQ(parser.get().body(), "hello");
}

// An obs-fold's value is Beast's unfolded copy, not a line of the block: stored as a copy too.
TEST(MessageParserTest, AFoldedFieldOfAHeaderBlockIsStoredUnfolded) {
  const std::string block = "GET / HTTP/1.1\r\nX-A: one\r\n two\r\nHost: h\r\n\r\n";
  MessageParser<true, http::empty_body> parser;
  boost::beast::error_code ec;
  parser.put_header_block(block, ec);
  ASSERT_FALSE(ec);
  EXPECT_EQ(parser.get()["X-A"], "one two");
  EXPECT_EQ(parser.get()[http::field::host], "h");
}

TEST(MessageParserTest, RefusesWhatBeastRefuses) {
  MessageParser<true, http::empty_body> bad_field;
  EXPECT_EQ(Feed(bad_field, "GET / HTTP/1.1\r\nBad Name: x\r\n\r\n", 64), http::error::bad_field);

  MessageParser<true, http::string_body> too_large;
  too_large.body_limit(3);
  EXPECT_EQ(Feed(too_large, "PUT / HTTP/1.1\r\nContent-Length: 4\r\n\r\nabcd", 64),
            http::error::body_limit);

  MessageParser<true, http::empty_body> header_limit;
  header_limit.header_limit(32);
  EXPECT_EQ(Feed(header_limit, "GET / HTTP/1.1\r\nX-Long: " + std::string(64, 'x') + "\r\n\r\n", 8),
            http::error::header_limit);
}

}  // namespace
}  // namespace fencegate::adapters
