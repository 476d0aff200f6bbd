#include <string>

#include <gtest/gtest.h>

#include "tests/support/gateway_instance.h"
#include "tests/support/http_client.h"
#include "tests/support/temp_dir.h"

namespace fencegate::integration {
namespace {

// The shipped default configuration, with only --data-dir changed: a fenced file store.
TEST(FilesystemTest, DefaultConfigRoundTrip) {
  TempDir dir;
  std::string error;
  std::unique_ptr<GatewayInstance> gateway = GatewayInstance::Start(
      std::string(FENCEGATE_SOURCE_DIR) + "/config/fencegate.yaml", dir.Join("data"), &error);
  ASSERT_NE(gateway, nullptr) << error;
  const std::uint16_t port = gateway->traffic_port();

  std::optional<Response> written = Fetch(
      port, MakeRequest(http::verb::put, "/files/notes.txt", {{"Fencing-Token", "3"}}, "hello"),
      &error);
  ASSERT_TRUE(written.has_value()) << error;
  EXPECT_TRUE(written->result_int() == 201 || written->result_int() == 204)
      << written->result_int() << " " << written->body();
  EXPECT_FALSE((*written)[http::field::etag].empty());
  EXPECT_EQ((*written)["Fencing-Token"], "3");

  std::optional<Response> read = Fetch(port, MakeRequest(http::verb::get, "/files/notes.txt"));
  ASSERT_TRUE(read.has_value());
  EXPECT_EQ(read->result_int(), 200);
  EXPECT_EQ(read->body(), "hello");

  std::optional<Response> stale = Fetch(
      port, MakeRequest(http::verb::put, "/files/notes.txt", {{"Fencing-Token", "2"}}, "evil"));
  ASSERT_TRUE(stale.has_value());
  EXPECT_EQ(stale->result_int(), 409);

  read = Fetch(port, MakeRequest(http::verb::get, "/files/notes.txt"));
  ASSERT_TRUE(read.has_value());
  EXPECT_EQ(read->body(), "hello");
  // The root is "{data_dir}/files": the file lives under the --data-dir given.
  EXPECT_EQ(ReadWholeFile(dir.Join("data/files/notes.txt")), "hello");
}

}  // namespace
}  // namespace fencegate::integration
