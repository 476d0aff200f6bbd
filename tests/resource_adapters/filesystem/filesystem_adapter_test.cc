#include "resource_adapters/filesystem/filesystem_adapter.h"

#include <sys/xattr.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include <gtest/gtest.h>
#include <boost/asio/error.hpp>

#include "tests/resource_adapters/fake_downstream.h"
#include "tests/support/temp_dir.h"

namespace fencegate::adapters {
namespace {

namespace fs = std::filesystem;
using testing::FakeDownstream;
using testing::ForwardAndWait;
using testing::PatternByte;

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void WriteFile(const fs::path& path, const std::string& content) {
  std::ofstream(path, std::ios::binary) << content;
}

// Names the adapter leaves behind in `dir`, recursively, that are its own (temp files).
int CountTempFiles(const fs::path& dir) {
  int count = 0;
  for (const auto& entry : fs::recursive_directory_iterator(dir)) {
    if (entry.path().filename().string().starts_with(".fencegate-tmp-")) ++count;
  }
  return count;
}

std::string StoredTokenXattr(const fs::path& path) {
  char value[32];
  const ssize_t size = getxattr(path.c_str(), "user.fencegate.token", value, sizeof value);
  return size < 0 ? std::string() : std::string(value, static_cast<std::size_t>(size));
}

class FilesystemAdapterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = base_ / "root";
    outside_ = base_ / "outside";
    fs::create_directories(outside_);
    WriteFile(outside_ / "secret", "do not touch");
    Configure(256 * 1024);
  }

  void TearDown() override {
    adapter_.reset();
    factory_.reset();
  }

  void Configure(std::size_t chunk_bytes) {
    adapter_.reset();
    factory_.reset();
    FilesystemAdapterOptions options;
    options.root = root_.string();
    options.io_threads = 2;
    options.chunk_bytes = chunk_bytes;
    std::string error;
    factory_ = MakeFilesystemAdapterFactory(options, &error);
    ASSERT_NE(factory_, nullptr) << error;
    adapter_ = factory_->CreateForThread(ioc_);
  }

  struct Exchange {
    ForwardOutcome outcome;
    std::optional<ResponseHeader> header;
    std::string body;
    std::uint64_t body_bytes_read = 0;
  };

  Exchange Send(http::verb method, std::string target, std::string body = {},
                std::optional<std::uint64_t> token = std::nullopt,
                std::vector<std::pair<http::field, std::string>> fields = {}) {
    FakeDownstream downstream(ioc_, std::move(body), 4096);
    return SendThrough(downstream, method, std::move(target), token, fields);
  }

  Exchange SendThrough(FakeDownstream& downstream, http::verb method, std::string target,
                       std::optional<std::uint64_t> token,
                       const std::vector<std::pair<http::field, std::string>>& fields = {}) {
    RequestHeader header;
    header.method(method);
    header.target(target);
    header.version(11);
    for (const auto& [name, value] : fields) header.set(name, value);
    ForwardRequest request;
    request.header = &header;
    request.route_prefix = "/files/";
    request.fencing_token = token;
    Exchange exchange;
    exchange.outcome = ForwardAndWait(ioc_, *adapter_, request, downstream);
    exchange.header = downstream.response_header;
    exchange.body = downstream.response_body;
    exchange.body_bytes_read = downstream.request_bytes_read;
    EXPECT_EQ(downstream.violations, 0);
    return exchange;
  }

  // The status the client sees: the written one, or the problem's.
  static unsigned StatusOf(const Exchange& exchange) {
    if (exchange.outcome.problem) return exchange.outcome.problem->status;
    return exchange.outcome.status;
  }

  static std::string Field(const Exchange& exchange, std::string_view name) {
    if (!exchange.header) return {};
    auto it = exchange.header->find(name);
    return it == exchange.header->end() ? std::string() : std::string(it->value());
  }

  boost::asio::io_context ioc_;
  integration::TempDir dir_;
  const fs::path base_ = dir_.path();
  fs::path root_;
  fs::path outside_;
  std::unique_ptr<AdapterFactory> factory_;
  std::unique_ptr<ResourceAdapter> adapter_;
};

TEST_F(FilesystemAdapterTest, PutOfNewFileAnswers201AndStoresContentAndToken) {
  auto put = Send(http::verb::put, "/files/docs/a.txt", "hello", 7);
  EXPECT_EQ(StatusOf(put), 201u);
  EXPECT_TRUE(put.outcome.response_complete);
  EXPECT_EQ(put.outcome.failure, ForwardOutcome::Failure::kNone);
  EXPECT_EQ(put.outcome.request_body_bytes, 5u);
  EXPECT_EQ(Field(put, "Fencing-Token"), "7");
  EXPECT_FALSE(Field(put, "ETag").empty());
  EXPECT_EQ(Field(put, "ETag"), put.outcome.etag);
  EXPECT_EQ(ReadFile(root_ / "docs/a.txt"), "hello");
  EXPECT_EQ(StoredTokenXattr(root_ / "docs/a.txt"), "7");
  EXPECT_EQ(CountTempFiles(root_), 0);
}

TEST_F(FilesystemAdapterTest, PutOverExistingFileAnswers204WithNewVersion) {
  auto first = Send(http::verb::put, "/files/a.txt", "one", 1);
  auto second = Send(http::verb::put, "/files/a.txt", "two!", 2);
  EXPECT_EQ(StatusOf(second), 204u);
  EXPECT_NE(Field(second, "ETag"), Field(first, "ETag"));
  EXPECT_EQ(Field(second, "Fencing-Token"), "2");
  EXPECT_EQ(ReadFile(root_ / "a.txt"), "two!");
  EXPECT_EQ(StoredTokenXattr(root_ / "a.txt"), "2");
}

TEST_F(FilesystemAdapterTest, GetStreamsContentInChunksWithVersionHeaders) {
  Configure(7);  // many chunks for a short file
  const std::string content = "The quick brown fox jumps over the lazy dog, twice over.";
  auto put = Send(http::verb::put, "/files/fox.txt", content, 3);
  ASSERT_EQ(StatusOf(put), 201u);

  auto get = Send(http::verb::get, "/files/fox.txt");
  EXPECT_EQ(StatusOf(get), 200u);
  EXPECT_TRUE(get.outcome.response_complete);
  EXPECT_EQ(get.body, content);
  EXPECT_EQ(get.outcome.response_body_bytes, content.size());
  EXPECT_EQ(Field(get, "Content-Length"), std::to_string(content.size()));
  EXPECT_EQ(Field(get, "Content-Type"), "application/octet-stream");
  EXPECT_EQ(Field(get, "ETag"), Field(put, "ETag"));
  EXPECT_EQ(Field(get, "Fencing-Token"), "3");
  EXPECT_FALSE(Field(get, "Last-Modified").empty());
}

TEST_F(FilesystemAdapterTest, HeadAnswersHeadersWithoutBody) {
  ASSERT_EQ(StatusOf(Send(http::verb::put, "/files/h.bin", "12345", 1)), 201u);
  auto head = Send(http::verb::head, "/files/h.bin");
  EXPECT_EQ(StatusOf(head), 200u);
  EXPECT_EQ(Field(head, "Content-Length"), "5");
  EXPECT_TRUE(head.body.empty());
}

TEST_F(FilesystemAdapterTest, GetWithMatchingIfNoneMatchAnswers304) {
  auto put = Send(http::verb::put, "/files/c.txt", "cached", 1);
  auto get = Send(http::verb::get, "/files/c.txt", {}, std::nullopt,
                  {{http::field::if_none_match, "\"other\", " + Field(put, "ETag")}});
  EXPECT_EQ(StatusOf(get), 304u);
  EXPECT_TRUE(get.body.empty());
  auto miss = Send(http::verb::get, "/files/c.txt", {}, std::nullopt,
                   {{http::field::if_none_match, "\"other\""}});
  EXPECT_EQ(StatusOf(miss), 200u);
}

TEST_F(FilesystemAdapterTest, MissingFileAndDirectoryAnswer404) {
  EXPECT_EQ(StatusOf(Send(http::verb::get, "/files/nope")), 404u);
  fs::create_directories(root_ / "dir");
  EXPECT_EQ(StatusOf(Send(http::verb::get, "/files/dir")), 404u);
  EXPECT_EQ(StatusOf(Send(http::verb::get, "/files/dir/")), 404u);
}

TEST_F(FilesystemAdapterTest, WritePreconditionsAreHonoured) {
  auto put = Send(http::verb::put, "/files/p.txt", "v1", 1);
  const std::string etag = Field(put, "ETag");

  auto create_only =
      Send(http::verb::put, "/files/p.txt", "v2", 2, {{http::field::if_none_match, "*"}});
  EXPECT_EQ(StatusOf(create_only), 412u);
  EXPECT_EQ(create_only.outcome.problem->type, "precondition-failed");
  EXPECT_EQ(create_only.body_bytes_read, 0u);  // refused before the body was read

  auto stale_version =
      Send(http::verb::put, "/files/p.txt", "v2", 2, {{http::field::if_match, "\"nope\""}});
  EXPECT_EQ(StatusOf(stale_version), 412u);
  EXPECT_EQ(ReadFile(root_ / "p.txt"), "v1");

  auto if_match_on_missing =
      Send(http::verb::put, "/files/new.txt", "x", 2, {{http::field::if_match, "*"}});
  EXPECT_EQ(StatusOf(if_match_on_missing), 412u);
  EXPECT_FALSE(fs::exists(root_ / "new.txt"));

  auto matching = Send(http::verb::put, "/files/p.txt", "v2", 2, {{http::field::if_match, etag}});
  EXPECT_EQ(StatusOf(matching), 204u);
  EXPECT_EQ(ReadFile(root_ / "p.txt"), "v2");

  auto create_new =
      Send(http::verb::put, "/files/fresh.txt", "f", 2, {{http::field::if_none_match, "*"}});
  EXPECT_EQ(StatusOf(create_new), 201u);
}

TEST_F(FilesystemAdapterTest, StaleTokenAtBackendIsRefusedAndFileUnchanged) {
  ASSERT_EQ(StatusOf(Send(http::verb::put, "/files/f.txt", "from 10", 10)), 201u);
  auto stale = Send(http::verb::put, "/files/f.txt", "from 9", 9);
  EXPECT_EQ(StatusOf(stale), 409u);
  EXPECT_EQ(stale.outcome.problem->type, "stale-token-at-backend");
  EXPECT_EQ(ReadFile(root_ / "f.txt"), "from 10");
  EXPECT_EQ(StoredTokenXattr(root_ / "f.txt"), "10");

  auto stale_delete = Send(http::verb::delete_, "/files/f.txt", {}, 9);
  EXPECT_EQ(StatusOf(stale_delete), 409u);
  EXPECT_TRUE(fs::exists(root_ / "f.txt"));

  // The same token may write again: it is still the current holder.
  EXPECT_EQ(StatusOf(Send(http::verb::put, "/files/f.txt", "again 10", 10)), 204u);
}

TEST_F(FilesystemAdapterTest, TraversalAttemptsAreRefusedAndTouchNothingOutside) {
  fs::create_directories(root_);
  fs::create_symlink(outside_, root_ / "link-dir");
  fs::create_symlink(outside_ / "secret", root_ / "link-file");
  struct Case {
    std::string target;
    unsigned status;
  };
  const Case cases[] = {
      {"/files/..", 403},
      {"/files/../outside/secret", 403},
      {"/files/%2e%2e", 403},
      {"/files/%2E%2e/outside/secret", 403},
      {"/files/a/%2f..", 403},
      {"/files/a%2f..%2f..%2foutside%2fsecret", 403},
      {"/files/a%5c..%5csecret", 403},
      {"/files//tmp/x", 403},
      {"/files/a%00b", 400},
      {"/files/bad%zzescape", 400},
      {"/files/link-dir/secret", 403},
      {"/files/link-dir/new-file", 403},
      {"/files/link-file", 403},
      {"/files/.fencegate-tmp-1234", 403},
  };
  for (const auto& c : cases) {
    auto put = Send(http::verb::put, c.target, "evil", 1);
    EXPECT_EQ(StatusOf(put), c.status) << "PUT " << c.target;
    auto get = Send(http::verb::get, c.target);
    EXPECT_TRUE(StatusOf(get) == 403 || StatusOf(get) == 400) << "GET " << c.target;
    EXPECT_EQ(get.body.find("do not touch"), std::string::npos) << "GET " << c.target;
  }
  EXPECT_EQ(ReadFile(outside_ / "secret"), "do not touch");
  EXPECT_EQ(std::distance(fs::directory_iterator(outside_), fs::directory_iterator()), 1);
  EXPECT_EQ(CountTempFiles(root_), 0);
}

TEST_F(FilesystemAdapterTest, PutNeedsAFileName) {
  EXPECT_EQ(StatusOf(Send(http::verb::put, "/files/dir/", "x", 1)), 400u);
  EXPECT_EQ(StatusOf(Send(http::verb::put, "/files/", "x", 1)), 400u);
}

TEST_F(FilesystemAdapterTest, DeleteRemovesTheFileThenAnswers404) {
  ASSERT_EQ(StatusOf(Send(http::verb::put, "/files/d/x.txt", "bye", 4)), 201u);
  auto deleted = Send(http::verb::delete_, "/files/d/x.txt", {}, 4);
  EXPECT_EQ(StatusOf(deleted), 204u);
  EXPECT_FALSE(fs::exists(root_ / "d/x.txt"));
  EXPECT_EQ(StatusOf(Send(http::verb::get, "/files/d/x.txt")), 404u);
  EXPECT_EQ(StatusOf(Send(http::verb::delete_, "/files/d/x.txt", {}, 4)), 404u);
}

TEST_F(FilesystemAdapterTest, OtherMethodsAnswer405WithAllow) {
  auto post = Send(http::verb::post, "/files/x", "body", 1);
  EXPECT_EQ(post.outcome.status, 405u);
  EXPECT_TRUE(post.outcome.response_complete);
  EXPECT_EQ(Field(post, "Allow"), "GET, HEAD, PUT, DELETE");
  EXPECT_NE(post.body.find("method-not-allowed"), std::string::npos);
}

TEST_F(FilesystemAdapterTest, LargePutStreamsWithBoundedBuffers) {
  constexpr std::uint64_t kSize = 64ull * 1024 * 1024;
  constexpr std::size_t kChunk = 256 * 1024;
  FakeDownstream downstream = FakeDownstream::Generated(ioc_, kSize, 64 * 1024);
  auto put = SendThrough(downstream, http::verb::put, "/files/big.bin", 1);
  EXPECT_EQ(StatusOf(put), 201u);
  EXPECT_EQ(put.outcome.request_body_bytes, kSize);
  // The adapter never asked for more than one chunk at a time (two chunks exist at most:
  // one filling from the client, one going to disk).
  EXPECT_LE(downstream.largest_read_buffer, kChunk);
  ASSERT_EQ(fs::file_size(root_ / "big.bin"), kSize);

  std::ifstream in(root_ / "big.bin", std::ios::binary);
  std::vector<char> block(1 << 20);
  std::uint64_t offset = 0;
  std::uint64_t mismatches = 0;
  while (in.read(block.data(), static_cast<std::streamsize>(block.size())) || in.gcount() > 0) {
    for (std::streamsize i = 0; i < in.gcount(); ++i) {
      if (block[static_cast<std::size_t>(i)] != PatternByte(offset + static_cast<std::uint64_t>(i)))
        ++mismatches;
    }
    offset += static_cast<std::uint64_t>(in.gcount());
  }
  EXPECT_EQ(offset, kSize);
  EXPECT_EQ(mismatches, 0u);
}

TEST_F(FilesystemAdapterTest, ClientFailingMidBodyLeavesTargetAndNoTempFile) {
  ASSERT_EQ(StatusOf(Send(http::verb::put, "/files/keep.txt", "old content", 1)), 201u);
  FakeDownstream downstream = FakeDownstream::Generated(ioc_, 1 << 20, 16 * 1024);
  downstream.FailBodyAt(300 * 1024, boost::asio::error::connection_reset);
  auto put = SendThrough(downstream, http::verb::put, "/files/keep.txt", 2);
  EXPECT_EQ(put.outcome.failure, ForwardOutcome::Failure::kClient);
  EXPECT_EQ(put.outcome.error, boost::asio::error::connection_reset);
  EXPECT_FALSE(put.outcome.response_started);
  EXPECT_FALSE(put.outcome.problem.has_value());
  EXPECT_EQ(ReadFile(root_ / "keep.txt"), "old content");
  EXPECT_EQ(StoredTokenXattr(root_ / "keep.txt"), "1");
  EXPECT_EQ(CountTempFiles(root_), 0);
}

TEST_F(FilesystemAdapterTest, UnfencedWriteLeavesNoToken) {
  auto put = Send(http::verb::put, "/files/plain.txt", "p", std::nullopt);
  EXPECT_EQ(StatusOf(put), 201u);
  EXPECT_EQ(Field(put, "Fencing-Token"), "");
  EXPECT_EQ(StoredTokenXattr(root_ / "plain.txt"), "");
}

}  // namespace
}  // namespace fencegate::adapters
