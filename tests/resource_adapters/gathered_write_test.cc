// MessageWriter (base/net/gathered_write.h) puts out the bytes Beast's serializer
// would: each case is checked against Beast's own serialization of the same message, or, for
// the framing of streamed pieces, against the exact bytes HTTP/1.1 prescribes.
#include "base/net/gathered_write.h"

#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <boost/asio/buffer.hpp>
#include <boost/beast/http/buffer_body.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>

namespace fencegate::adapters {
namespace {

namespace http = boost::beast::http;

std::string Bytes(const WriteGather& gather) {
  std::string out;
  for (const auto& buffer : gather)
    out.append(static_cast<const char*>(buffer.data()), buffer.size());
  return out;
}

// What Beast's serializer writes for `message` (string_body: the whole body at once).
template <bool isRequest>
std::string BeastBytes(const http::message<isRequest, http::string_body, Fields>& message) {
  std::ostringstream out;
  out << message;
  return out.str();
}

// `pieces` written one after another, the last one ending the message.
template <bool isRequest>
std::string Written(const http::message<isRequest, http::buffer_body, Fields>& message,
                    const std::vector<std::string>& pieces, bool with_body = true) {
  MessageWriter writer;
  WriteGather gather;
  writer.Start(message, with_body);
  std::string out;
  for (std::size_t i = 0; i < pieces.size(); ++i) {
    writer.Next(boost::asio::buffer(pieces[i]), i + 1 == pieces.size(), gather);
    out += Bytes(gather);
  }
  return out;
}

TEST(MessageWriterTest, RequestWithContentLengthMatchesBeast) {
  http::request<http::string_body, Fields> reference(http::verb::put, "/kv/a/x?v=1", 11);
  reference.set(http::field::host, "backend:8080");
  reference.set("Fencing-Token", "42");
  reference.insert("X-Repeated", "one");
  reference.insert("X-Repeated", "two");
  reference.body() = "hello world";
  reference.prepare_payload();

  http::request<http::buffer_body, Fields> message(reference.base());
  EXPECT_EQ(Written(message, {"hello", " world"}), BeastBytes(reference));
}

// Fields stored end to end go out as runs: fields erased or replaced in between, and a header
// larger than one text block, must still give every field once and in order.
TEST(MessageWriterTest, EditedHeaderLargerThanATextBlockMatchesBeast) {
  http::request<http::buffer_body, Fields> message(http::verb::put, "/a", 11);
  for (int i = 0; i < 40; ++i) {
    message.insert("X-Field-" + std::to_string(i),
                   std::string(20, static_cast<char>('a' + i % 26)));
  }
  message.erase("X-Field-3");
  message.erase("X-Field-39");
  message.set("X-Field-7", "replaced");
  message.insert(http::field::via, "1.1 fencegate");
  message.content_length(1);

  http::request<http::string_body, Fields> reference(message.base());
  reference.body() = "x";
  EXPECT_EQ(Written(message, {"x"}), BeastBytes(reference));
}

TEST(MessageWriterTest, ResponseStartLineAndFieldsMatchBeast) {
  for (const unsigned status : {200u, 201u, 404u, 503u}) {
    for (const unsigned version : {10u, 11u}) {
      http::response<http::string_body, Fields> reference(static_cast<http::status>(status),
                                                          version);
      reference.set(http::field::content_type, "application/problem+json");
      reference.set("X-Request-Id", "abc");
      reference.body() = "{}";
      reference.prepare_payload();
      http::response<http::buffer_body, Fields> message(reference.base());
      EXPECT_EQ(Written(message, {"{}"}), BeastBytes(reference)) << status << " " << version;
    }
  }
}

TEST(MessageWriterTest, BackendReasonPhraseIsKept) {
  http::response<http::string_body, Fields> reference(http::status::ok, 11);
  reference.reason("Fine");
  reference.content_length(0);
  http::response<http::buffer_body, Fields> message(reference.base());
  EXPECT_EQ(Written(message, {""}), "HTTP/1.1 200 Fine\r\nContent-Length: 0\r\n\r\n");
  EXPECT_EQ(Written(message, {""}), BeastBytes(reference));
}

TEST(MessageWriterTest, ChunkedPiecesAreFramedAndEndedWithTheLastChunk) {
  http::request<http::buffer_body, Fields> message(http::verb::post, "/up", 11);
  message.chunked(true);
  const std::string header = "POST /up HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n";
  const std::string big(300, 'x');
  EXPECT_EQ(Written(message, {"", "abc", big, ""}),
            header + "3\r\nabc\r\n" + "12c\r\n" + big + "\r\n" + "0\r\n\r\n");
  // Data in the last piece: its chunk, then the last chunk, in one write.
  EXPECT_EQ(Written(message, {"abc"}), header + "3\r\nabc\r\n0\r\n\r\n");
}

TEST(MessageWriterTest, WithoutBodyOnlyTheHeaderGoesOut) {
  // A response to HEAD keeps the representation's framing fields but carries no body.
  http::response<http::buffer_body, Fields> message(http::status::ok, 11);
  message.chunked(true);
  EXPECT_EQ(Written(message, {"ignored"}, /*with_body=*/false),
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n");
}

TEST(MessageWriterTest, SmallPieceGoesOutInOneBufferWithTheHeader) {
  http::response<http::buffer_body, Fields> message(http::status::ok, 11);
  message.content_length(3);
  MessageWriter writer;
  WriteGather gather;
  writer.Start(message, true);
  const std::string body = "ok\n";
  writer.Next(boost::asio::buffer(body), true, gather);
  EXPECT_EQ(Bytes(gather), "HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nok\n");
  EXPECT_EQ(gather[1].size() + gather[2].size(), 0u);
}

TEST(MessageWriterTest, LargePieceIsNotCopied) {
  http::request<http::buffer_body, Fields> message(http::verb::put, "/kv/a", 11);
  message.content_length(64 * 1024);
  MessageWriter writer;
  WriteGather gather;
  writer.Start(message, true);
  const std::string body(64 * 1024, 'b');
  writer.Next(boost::asio::buffer(body), true, gather);
  // The header's buffer, then the caller's own bytes.
  EXPECT_EQ(gather[1].data(), body.data());
  EXPECT_EQ(gather[1].size(), body.size());
  EXPECT_EQ(Bytes(gather), "PUT /kv/a HTTP/1.1\r\nContent-Length: 65536\r\n\r\n" + body);
}

TEST(MessageWriterTest, NothingIsLeftToWriteAfterTheHeaderForAnEmptyPiece) {
  http::request<http::buffer_body, Fields> message(http::verb::put, "/kv/a", 11);
  message.content_length(3);
  MessageWriter writer;
  WriteGather gather;
  writer.Start(message, true);
  writer.Next({}, false, gather);
  EXPECT_EQ(Bytes(gather), "PUT /kv/a HTTP/1.1\r\nContent-Length: 3\r\n\r\n");
  writer.Next({}, false, gather);
  EXPECT_EQ(boost::asio::buffer_size(gather), 0u);
  writer.Next(boost::asio::buffer("abc", 3), true, gather);
  EXPECT_EQ(Bytes(gather), "abc");
}

}  // namespace
}  // namespace fencegate::adapters
