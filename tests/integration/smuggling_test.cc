#include <string>

#include <gtest/gtest.h>

#include "tests/support/http_gateway_fixture.h"

namespace fencegate::integration {
namespace {

using SmugglingTest = HttpGatewayTest;

// Sends `raw` on its own connection and returns the status of the gateway's answer (0 if none).
unsigned RawStatus(std::uint16_t port, const std::string& raw) {
  HttpConnection connection(std::chrono::seconds(5));
  if (!connection.Connect(port) || !connection.WriteRaw(raw)) return 0;
  std::optional<Response> response = connection.ReadResponse();
  return response ? response->result_int() : 0;
}

TEST_F(SmugglingTest, AmbiguousFramingIsRefusedAndNeverForwarded) {
  // Each would let a second request hide in the body, read differently by the backend.
  const std::string kSmuggled = "GET /kv/hidden HTTP/1.1\r\nHost: x\r\n\r\n";
  const std::string cases[] = {
      // Content-Length together with Transfer-Encoding.
      "PUT /kv/a HTTP/1.1\r\nHost: x\r\nFencing-Token: 1\r\nContent-Length: 5\r\n"
      "Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n" +
          kSmuggled,
      // The same, on an unfenced method.
      "POST /kv/a HTTP/1.1\r\nHost: x\r\nFencing-Token: 1\r\nTransfer-Encoding: chunked\r\n"
      "Content-Length: 44\r\n\r\n0\r\n\r\n" +
          kSmuggled,
      // Two Content-Length fields.
      "PUT /kv/a HTTP/1.1\r\nHost: x\r\nFencing-Token: 1\r\nContent-Length: 0\r\n"
      "Content-Length: 44\r\n\r\n" +
          kSmuggled,
      // A folded (obs-fold) header line.
      "PUT /kv/a HTTP/1.1\r\nHost: x\r\nFencing-Token: 1\r\nX-Folded: a\r\n b\r\n"
      "Content-Length: 0\r\n\r\n",
  };
  for (const std::string& raw : cases) {
    EXPECT_EQ(RawStatus(gateway_->traffic_port(), raw), 400u) << raw;
  }
  // A well-formed request afterwards is the only thing the backend ever sees.
  Response fine = Put("/kv/a", "1");
  EXPECT_EQ(fine.result_int(), 200);
  ASSERT_TRUE(backend_.WaitForCompleted(1, std::chrono::seconds(5)));
  std::vector<RecordedRequest> seen = backend_.Requests();
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].method, "PUT");
  EXPECT_EQ(seen[0].target, "/kv/a");
}

}  // namespace
}  // namespace fencegate::integration
