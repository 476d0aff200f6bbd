#include <cstdint>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <boost/beast/http/rfc7230.hpp>

#include "tests/support/http_gateway_fixture.h"

namespace fencegate::integration {
namespace {

constexpr char kHeader[] =
    "PUT /kv/c/blob HTTP/1.1\r\nHost: 127.0.0.1\r\nFencing-Token: 1\r\n"
    "Transfer-Encoding: chunked\r\n\r\n";

// Bytes that differ by position and by piece, so a lost, repeated or reordered run shows.
std::string Piece(std::size_t size, std::uint32_t seed) {
  std::string piece(size, '\0');
  std::uint32_t state = seed * 2654435761u + 1;
  for (char& byte : piece) {
    state = state * 1664525u + 1013904223u;
    byte = static_cast<char>(state >> 24);
  }
  return piece;
}

std::string Hex(std::size_t size) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string hex;
  do {
    hex.insert(hex.begin(), kDigits[size & 0xf]);
    size >>= 4;
  } while (size != 0);
  return hex;
}

std::string Chunk(const std::string& data, const std::string& extension = {}) {
  return Hex(data.size()) + extension + "\r\n" + data + "\r\n";
}

class ChunkedBodyTest : public HttpGatewayTest {
 protected:
  // Sends `writes` (header included) one after the other on one connection, expects a 200,
  // and checks that the backend got exactly `body`, chunked.
  void ExpectRelayedWhole(const std::vector<std::string>& writes, const std::string& body) {
    HttpConnection connection(std::chrono::seconds(30));
    ASSERT_TRUE(connection.Connect(gateway_->traffic_port())) << connection.error();
    for (const std::string& bytes : writes) {
      ASSERT_TRUE(connection.WriteRaw(bytes)) << connection.error();
    }
    std::optional<Response> response = connection.ReadResponse();
    ASSERT_TRUE(response.has_value()) << connection.error();
    EXPECT_EQ(response->result_int(), 200) << response->body();

    ASSERT_TRUE(backend_.WaitForCompleted(1, std::chrono::seconds(30)));
    std::vector<RecordedRequest> seen = backend_.Requests();
    ASSERT_EQ(seen.size(), 1u);
    EXPECT_EQ(seen[0].body_bytes, body.size());
    EXPECT_EQ(seen[0].body_digest, BodyDigest(kBodyDigestSeed, body.data(), body.size()));
    EXPECT_EQ(seen[0].body_prefix, body.substr(0, RecordingBackend::kBodyPrefixBytes));
    EXPECT_TRUE(
        http::token_list(seen[0].headers[http::field::transfer_encoding]).exists("chunked"));
  }
};

// The whole chunked body arrives in one write: many small chunks, with extensions, the last
// chunk and a trailer all sit in the gateway's read buffer at once. Each must be relayed
// without waiting for more bytes from the client, which has none left to send.
TEST_F(ChunkedBodyTest, ManySmallChunksInOneWriteArriveWhole) {
  std::string body;
  std::string wire = kHeader;
  for (std::uint32_t i = 0; i < 300; ++i) {
    const std::string piece = Piece(7 + i, i);
    body += piece;
    wire += Chunk(piece, i % 3 == 0 ? ";ext=" + std::to_string(i) : "");
  }
  wire += "0;end\r\nX-Trailer: one\r\nX-Other: two\r\n\r\n";
  ExpectRelayedWhole({wire}, body);
}

// Chunks of 100 KiB and more, one larger than a relay buffer (256 KiB), each its own write, as
// Python's http.client sends them with encode_chunked=True; the last chunk is written alone.
TEST_F(ChunkedBodyTest, LargeChunksWrittenOneByOneArriveWhole) {
  std::string body;
  std::vector<std::string> writes = {kHeader};
  for (std::uint32_t i = 0; i < 12; ++i) {
    const std::string piece = Piece(100 * 1024 + i, 1000 + i);
    body += piece;
    writes.push_back(Chunk(piece));
  }
  const std::string huge = Piece(700 * 1024 + 3, 7);
  body += huge;
  writes.push_back(Chunk(huge, ";name=\"quoted value\""));
  writes.push_back("0\r\n\r\n");
  ExpectRelayedWhole(writes, body);
}

// The large chunks and the last one in a single write: body bytes, chunk boundaries and the
// end of the body all come out of the gateway's buffered bytes, not straight off the socket.
TEST_F(ChunkedBodyTest, LargeChunksInOneWriteArriveWhole) {
  std::string body;
  std::string wire = kHeader;
  for (std::uint32_t i = 0; i < 12; ++i) {
    const std::string piece = Piece(100 * 1024 + i, 2000 + i);
    body += piece;
    wire += Chunk(piece);
  }
  wire += "0\r\nX-Trailer: end\r\n\r\n";
  ExpectRelayedWhole({wire}, body);
}

// A chunked body that is only the last chunk reaches the backend as an empty body.
TEST_F(ChunkedBodyTest, OnlyTheLastChunkIsAnEmptyBody) {
  ExpectRelayedWhole({std::string(kHeader) + "0\r\n\r\n"}, "");
}

}  // namespace
}  // namespace fencegate::integration
