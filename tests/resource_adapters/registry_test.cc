#include "resource_adapters/registry/registry.h"

#include <chrono>
#include <set>
#include <string>

#include <gtest/gtest.h>

namespace fencegate::adapters {
namespace {

using std::chrono::milliseconds;

TEST(BackendKindRegistryTest, EveryKindHasOneRowFoundByItsName) {
  ASSERT_EQ(BackendKindRows().size(), kBackendKindCount);
  std::set<std::string_view> names;
  for (std::size_t i = 0; i < kBackendKindCount; ++i) {
    const auto kind = static_cast<BackendKind>(i);
    const BackendKindRow& row = RowOf(kind);
    EXPECT_EQ(row.kind, kind);
    EXPECT_FALSE(row.name.empty());
    EXPECT_TRUE(names.insert(row.name).second) << "two rows named " << row.name;
    EXPECT_EQ(FindBackendKind(row.name), &row);
    EXPECT_NE(row.make_factory, nullptr) << row.name;
    EXPECT_NE(row.longest_response, nullptr) << row.name;
    EXPECT_NE(row.upstream, nullptr) << row.name;
    EXPECT_NE(row.data_dir_path, nullptr) << row.name;
  }
  EXPECT_EQ(names, (std::set<std::string_view>{"http", "filesystem", "webdav", "s3"}));
}

TEST(BackendKindRegistryTest, AnUnknownNameHasNoRow) {
  EXPECT_EQ(FindBackendKind("zookeeper"), nullptr);
  EXPECT_EQ(FindBackendKind(""), nullptr);
  EXPECT_EQ(FindBackendKind("HTTP"), nullptr);  // kinds are spelled as listed
}

TEST(BackendKindRegistryTest, NamesAreListedInRowOrderForMessages) {
  EXPECT_EQ(BackendKindNames(), "'http', 'filesystem', 'webdav' or 's3'");
}

TEST(BackendKindRegistryTest, LongestResponseIsTheKindsUpstreamTimeout) {
  BackendOptions options;
  options.http.response_timeout = milliseconds(7000);
  options.webdav.response_timeout = milliseconds(9000);
  options.s3.response_timeout = milliseconds(11000);
  EXPECT_EQ(RowOf(BackendKind::kHttp).longest_response(options), milliseconds(7000));
  // The passthrough and the lock sequence each wait on the server.
  EXPECT_EQ(RowOf(BackendKind::kWebdav).longest_response(options), milliseconds(9000));
  EXPECT_EQ(RowOf(BackendKind::kS3).longest_response(options), milliseconds(11000));
  // Nothing leaves the process.
  EXPECT_EQ(RowOf(BackendKind::kFilesystem).longest_response(options), milliseconds(0));
}

TEST(BackendKindRegistryTest, UpstreamIsTheConnectionOfNetworkedKindsOnly) {
  BackendOptions options;
  EXPECT_EQ(RowOf(BackendKind::kHttp).upstream(options), &options.http);
  EXPECT_EQ(RowOf(BackendKind::kWebdav).upstream(options), &options.http);
  EXPECT_EQ(RowOf(BackendKind::kS3).upstream(options), &options.s3);
  EXPECT_EQ(RowOf(BackendKind::kFilesystem).upstream(options), nullptr);
}

TEST(BackendKindRegistryTest, OnlyTheFilesystemRootLivesUnderTheDataDir) {
  BackendOptions options;
  EXPECT_EQ(RowOf(BackendKind::kFilesystem).data_dir_path(options), &options.filesystem.root);
  for (BackendKind kind : {BackendKind::kHttp, BackendKind::kWebdav, BackendKind::kS3}) {
    EXPECT_EQ(RowOf(kind).data_dir_path(options), nullptr) << RowOf(kind).name;
  }
}

TEST(BackendKindRegistryTest, SharedUpstreamDefaultsDifferOnlyWhereAKindSaysSo) {
  const HttpAdapterOptions http;
  const WebdavAdapterOptions webdav;
  const S3AdapterOptions s3;
  EXPECT_EQ(http.host, "127.0.0.1");
  EXPECT_EQ(http.port, 80);
  EXPECT_EQ(webdav.max_idle_connections, http.max_idle_connections);
  EXPECT_EQ(webdav.idle_timeout, http.idle_timeout);
  // An s3 backend has no default endpoint and closes idle connections before radosgw does.
  EXPECT_EQ(s3.host, "");
  EXPECT_EQ(s3.port, 0);
  EXPECT_EQ(s3.max_idle_connections, 16u);
  EXPECT_EQ(s3.idle_timeout, milliseconds(15000));
  EXPECT_EQ(s3.connect_timeout, http.connect_timeout);
  EXPECT_EQ(s3.response_timeout, http.response_timeout);
}

}  // namespace
}  // namespace fencegate::adapters
