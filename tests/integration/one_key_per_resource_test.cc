// One resource is one fence key, whatever spelling reaches it (issue 25, item 2), through the
// real binary: every spelling of a path or Host either lands on the canonical key (observed as
// the 409's fence_key and through /admin/fences/{key}) and on the one backend object that key
// names, or is refused with a 4xx problem. And a fenced DELETE of a file leaves a tombstone that
// refuses an older writer even when the fence store lost the key. docs/BAD_INPUT.md lists these.
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <boost/json/parse.hpp>

#include "tests/support/admin_client.h"
#include "tests/support/gateway_config.h"
#include "tests/support/gateway_instance.h"
#include "tests/support/http_client.h"
#include "tests/support/http_gateway_fixture.h"
#include "tests/support/temp_dir.h"

namespace fencegate::integration {
namespace {

namespace fs = std::filesystem;

// The spellings of one resource, the canonical path they all become, and its bytes on disk.
struct Spellings {
  std::vector<std::string> targets;  // the first is written first
  std::string canonical;             // what {path} renders
  std::string file_name;             // the decoded name under the route's directory
};

std::vector<Spellings> SpellingTable(const std::string& prefix) {
  return {
      {{prefix + "a:b", prefix + "a%3Ab", prefix + "a%3ab"}, prefix + "a:b", "a:b"},
      {{prefix + "caf\xC3\xA9", prefix + "caf%C3%A9", prefix + "caf%c3%a9"},
       prefix + "caf%C3%A9",
       "caf\xC3\xA9"},
      {{prefix + "%61bc", prefix + "abc", prefix + "%61%62%63"}, prefix + "abc", "abc"},
      {{prefix + "x.txt", prefix + "x%2Etxt", prefix + "x%2etxt"}, prefix + "x.txt", "x.txt"},
      {{prefix + "a+b", prefix + "a%2Bb", prefix + "a%2bb"}, prefix + "a+b", "a+b"},
      {{prefix + "sp%20ace", prefix + "sp%20ace?q=1"}, prefix + "sp%20ace", "sp ace"},
  };
}

// Spellings that have no single meaning: 400 bad-path on every route, nothing written.
const std::vector<std::string>& RefusedTails() {
  static const std::vector<std::string> tails = {
      "report.csv#z",  // a fragment is not part of an HTTP request target
      "a?q=1#z",       //
      "d//a",          // an empty segment
      "./a",           // dot segments, raw or encoded
      "d/../a",        //
      "%2e%2E/a",      //
      "d%2Fa",         // an encoded separator
      "d%2fa",         //
      "d%5Ca",         //
      "d\\a",          //
      "a%00b",         // NUL and control bytes
      "a%0Ab",         //
      "a%7Fb",         //
      "a%C0%AFb",      // overlong UTF-8 ('/'), and UTF-8 that is not well-formed
      "%C0%AE%C0%AE",  //
      "a%FFb",         //
      "caf%C3",        //
      "caf\xE9",       // raw Latin-1
      "a%zzb",         // a broken escape
  };
  return tails;
}

std::string FenceKeyOf(const Response& response) {
  const boost::json::object problem = boost::json::parse(response.body()).as_object();
  const auto* key = problem.if_contains("fence_key");
  return key != nullptr && key->is_string() ? std::string(key->as_string()) : std::string();
}

void ExpectProblem(const Response& response, unsigned status, const std::string& type_suffix,
                   const std::string& context) {
  EXPECT_EQ(response.result_int(), status) << context << ": " << response.body();
  EXPECT_EQ(response[http::field::content_type], "application/problem+json") << context;
  if (response[http::field::content_type] != "application/problem+json") return;
  const boost::json::object problem = boost::json::parse(response.body()).as_object();
  EXPECT_TRUE(std::string(problem.at("type").as_string()).ends_with(type_suffix))
      << context << ": " << response.body();
}

// The admin API's view of one fence key (the key percent-encoded whole into the path).
std::uint64_t HighestToken(std::uint16_t admin_port, const std::string& key) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string encoded;
  for (const char c : key) {
    encoded += '%';
    encoded += kHex[static_cast<unsigned char>(c) >> 4];
    encoded += kHex[static_cast<unsigned char>(c) & 0xF];
  }
  std::string error;
  const auto fence = FetchAdminJson(admin_port, "/admin/fences/" + encoded, &error);
  EXPECT_TRUE(fence.has_value()) << key << ": " << error;
  return fence ? fence->as_object().at("highest_token").to_number<std::uint64_t>() : 0;
}

// ---- The default filesystem route: "files:{path}" -------------------------------------------

class FilesystemSpellingTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string error;
    gateway_ = GatewayInstance::Start(std::string(FENCEGATE_SOURCE_DIR) + "/config/fencegate.yaml",
                                      dir_.Join("data"), &error);
    ASSERT_NE(gateway_, nullptr) << error;
  }

  Response Send(http::verb method, const std::string& target, std::optional<int> token,
                std::string body = {}) {
    Request request = MakeRequest(method, target, {}, std::move(body));
    if (token) request.set("Fencing-Token", std::to_string(*token));
    std::string error;
    std::optional<Response> response = Fetch(gateway_->traffic_port(), std::move(request), &error);
    if (!response) {
      ADD_FAILURE() << target << ": " << error;
      Response failed;
      failed.result(0);
      return failed;
    }
    return *response;
  }

  std::vector<std::string> FilesUnderRoot() {
    std::vector<std::string> files;
    for (const auto& entry : fs::recursive_directory_iterator(dir_.Join("data/files"))) {
      // Token sidecars (where the file system has no xattrs) are the adapter's, not files.
      if (entry.is_regular_file() && !entry.path().filename().string().starts_with(".fencegate-")) {
        files.push_back(fs::relative(entry.path(), dir_.Join("data/files")).string());
      }
    }
    return files;
  }

  TempDir dir_;
  std::unique_ptr<GatewayInstance> gateway_;
};

// The reproduction: a zombie recreated a deleted file through "#z".
TEST_F(FilesystemSpellingTest, AFragmentIsRefusedAndCannotRecreateADeletedFile) {
  EXPECT_EQ(Send(http::verb::put, "/files/report.csv", 5, "v5").result_int(), 201);
  EXPECT_EQ(Send(http::verb::delete_, "/files/report.csv", 6).result_int(), 204);
  ExpectProblem(Send(http::verb::put, "/files/report.csv#z", 4, "zombie"), 400, "bad-path",
                "PUT #z");
  EXPECT_EQ(Send(http::verb::put, "/files/report.csv", 4, "zombie").result_int(), 409);
  EXPECT_EQ(Send(http::verb::get, "/files/report.csv", std::nullopt).result_int(), 404);
  EXPECT_FALSE(fs::exists(dir_.Join("data/files/report.csv")));
}

TEST_F(FilesystemSpellingTest, EverySpellingOfAFileIsOneFenceKeyAndOneFile) {
  for (const Spellings& row : SpellingTable("/files/")) {
    const std::string key = "files:" + row.canonical;
    EXPECT_EQ(Send(http::verb::put, row.targets.front(), 10, "v10").result_int(), 201)
        << row.targets.front();
    EXPECT_EQ(HighestToken(gateway_->admin_port(), key), 10u) << key;
    for (const std::string& target : row.targets) {
      const Response stale = Send(http::verb::put, target, 5, "zombie");
      ExpectProblem(stale, 409, "stale-token", "PUT " + target);
      EXPECT_EQ(FenceKeyOf(stale), key) << target;
      const Response read = Send(http::verb::get, target, std::nullopt);
      EXPECT_EQ(read.result_int(), 200) << target;
      EXPECT_EQ(read.body(), "v10") << target;
    }
    EXPECT_EQ(ReadWholeFile(dir_.Join("data/files/" + row.file_name)), "v10") << row.file_name;
  }
  EXPECT_EQ(FilesUnderRoot().size(), SpellingTable("/files/").size());
}

TEST_F(FilesystemSpellingTest, SpellingsWithoutOneMeaningAre400AndWriteNothing) {
  for (const std::string& tail : RefusedTails()) {
    for (const http::verb method : {http::verb::put, http::verb::get, http::verb::delete_}) {
      ExpectProblem(Send(method, "/files/" + tail, 1, "x"), 400, "bad-path",
                    std::string(http::to_string(method)) + " /files/" + tail);
    }
  }
  EXPECT_TRUE(FilesUnderRoot().empty());
}

// Different bytes are different resources: a trailing dot is part of a Linux file name, and
// NFC "é" (C3 A9) and NFD "e" + U+0301 (65 CC 81) are different names. Each has its own key.
TEST_F(FilesystemSpellingTest, TrailingDotAndNfdAreOtherFilesWithOtherKeys) {
  EXPECT_EQ(Send(http::verb::put, "/files/r.csv", 10, "r").result_int(), 201);
  EXPECT_EQ(Send(http::verb::put, "/files/r.csv.", 1, "dot").result_int(), 201);
  EXPECT_EQ(Send(http::verb::put, "/files/caf%C3%A9", 10, "nfc").result_int(), 201);
  EXPECT_EQ(Send(http::verb::put, "/files/cafe%CC%81", 1, "nfd").result_int(), 201);
  EXPECT_EQ(HighestToken(gateway_->admin_port(), "files:/files/r.csv."), 1u);
  EXPECT_EQ(HighestToken(gateway_->admin_port(), "files:/files/cafe%CC%81"), 1u);
  EXPECT_EQ(ReadWholeFile(dir_.Join("data/files/r.csv.")), "dot");
  EXPECT_EQ(ReadWholeFile(dir_.Join("data/files/cafe\xCC\x81")), "nfd");
  EXPECT_EQ(ReadWholeFile(dir_.Join("data/files/caf\xC3\xA9")), "nfc");
}

// ---- Tombstones: the file store remembers the token of a deleted file --------------------------

// Two gateways in turn over one file root, each with its own (new) fence store: the second
// stands for a gateway whose store lost the key.
class TombstoneTest : public ::testing::Test {
 protected:
  std::unique_ptr<GatewayInstance> StartGateway(const std::string& data_dir) {
    GatewayConfig built;
    built.Backend("files") = FilesystemBackendAt(dir_.Join("root"));
    built.Route("files", "/files/", "files", "files:{path}");
    const std::string config = dir_.WriteFile("fencegate.yaml", built.Yaml());
    std::string error;
    auto gateway = GatewayInstance::Start(config, dir_.Join(data_dir), &error);
    EXPECT_NE(gateway, nullptr) << error;
    return gateway;
  }

  static unsigned Status(GatewayInstance& gateway, http::verb method, const std::string& target,
                         std::optional<int> token, std::string body = {},
                         std::string* problem_type = nullptr) {
    Request request = MakeRequest(method, target, {}, std::move(body));
    if (token) request.set("Fencing-Token", std::to_string(*token));
    std::optional<Response> response = Fetch(gateway.traffic_port(), std::move(request));
    if (!response) return 0;
    if (problem_type != nullptr &&
        (*response)[http::field::content_type] == "application/problem+json") {
      *problem_type = std::string(boost::json::parse(response->body()).at("type").as_string());
    }
    return response->result_int();
  }

  TempDir dir_;
};

TEST_F(TombstoneTest, ADeletedFileRefusesAnOlderWriterAfterTheFenceStoreLostItsKey) {
  {
    auto first = StartGateway("data-1");
    ASSERT_NE(first, nullptr);
    EXPECT_EQ(Status(*first, http::verb::put, "/files/d/report.csv", 5, "v5"), 201u);
    EXPECT_EQ(Status(*first, http::verb::delete_, "/files/d/report.csv", 6), 204u);
  }
  auto second = StartGateway("data-2");
  ASSERT_NE(second, nullptr);
  std::string type;
  EXPECT_EQ(Status(*second, http::verb::put, "/files/d/report.csv", 4, "zombie", &type), 409u);
  EXPECT_TRUE(type.ends_with("stale-token-at-backend")) << type;
  // Deleted is deleted: the tombstone is nothing a client can read.
  EXPECT_EQ(Status(*second, http::verb::get, "/files/d/report.csv", std::nullopt), 404u);
  EXPECT_EQ(
      Status(*second, http::verb::get, "/files/d/.fencegate-tombstones/report.csv", std::nullopt),
      403u);
  EXPECT_FALSE(fs::exists(dir_.Join("root/d/report.csv")));

  // The tombstone's own token may write again (and a newer one: below).
  EXPECT_EQ(Status(*second, http::verb::put, "/files/d/report.csv", 6, "v6"), 201u);
  EXPECT_EQ(ReadWholeFile(dir_.Join("root/d/report.csv")), "v6");
  EXPECT_EQ(Status(*second, http::verb::delete_, "/files/d/report.csv", 8), 204u);
  second.reset();

  auto third = StartGateway("data-3");
  ASSERT_NE(third, nullptr);
  EXPECT_EQ(Status(*third, http::verb::put, "/files/d/report.csv", 7, "zombie", &type), 409u);
  EXPECT_TRUE(type.ends_with("stale-token-at-backend")) << type;
  EXPECT_EQ(Status(*third, http::verb::delete_, "/files/d/report.csv", 9), 404u);
  EXPECT_EQ(Status(*third, http::verb::put, "/files/d/report.csv", 9, "v9"), 201u);
  EXPECT_EQ(ReadWholeFile(dir_.Join("root/d/report.csv")), "v9");
  // A file written over its tombstone no longer has one.
  EXPECT_FALSE(fs::exists(dir_.Join("root/d/.fencegate-tombstones/report.csv")));
}

// ---- An http route: "kv:{segment:2}", plus a route keyed by {host} -----------------------------

class HttpSpellingTest : public HttpGatewayTest {
 protected:
  void CustomizeConfig(GatewayConfig* config) const override {
    YAML::Node byhost = config->Route("byhost");
    byhost["prefix"] = "/byhost/";
    byhost["backend"] = "api";
    byhost["fence_key"] = "{host}:{path}";
  }

  Response PutAs(const std::string& target, int token, std::optional<std::string> host) {
    Request request = MakeRequest(http::verb::put, target, {}, "x");
    request.set("Fencing-Token", std::to_string(token));
    if (host) request.set(http::field::host, *host);
    return Send(std::move(request));
  }
};

TEST_F(HttpSpellingTest, EverySpellingIsOneKeyAndTheBackendGetsTheCanonicalTarget) {
  for (const Spellings& row : SpellingTable("/kv/")) {
    // "kv:{segment:2}": the item is the segment after /kv/; the resource below it is /x.
    const std::string item = row.canonical.substr(4);
    const std::string key = "kv:" + item;
    ASSERT_EQ(Put(row.targets.front() + "/x", "10").result_int(), 200) << row.targets.front();
    for (const std::string& target : row.targets) {
      const std::string path = target.substr(0, target.find('?'));
      const Response stale = Put(path + "/x", "5");
      ExpectProblem(stale, 409, "stale-token", "PUT " + path);
      EXPECT_EQ(FenceKeyOf(stale), key) << path;
    }
    EXPECT_EQ(HighestToken(gateway_->admin_port(), key), 10u) << key;
  }
  // The backend saw each first write under the canonical spelling, the query as sent.
  ASSERT_EQ(Put("/kv/%61%3a/%7e?q=%61", "1").result_int(), 200);
  const std::size_t writes = SpellingTable("/kv/").size() + 1;
  ASSERT_TRUE(backend_.WaitForCompleted(writes, std::chrono::seconds(5)));
  const std::vector<RecordedRequest> seen = backend_.Requests();
  ASSERT_EQ(seen.size(), writes);
  for (std::size_t i = 0; i + 1 < writes; ++i) {
    EXPECT_EQ(seen[i].target, SpellingTable("/kv/")[i].canonical + "/x");
  }
  EXPECT_EQ(seen.back().target, "/kv/a:/~?q=%61");
}

TEST_F(HttpSpellingTest, SpellingsWithoutOneMeaningAre400AndNeverForwarded) {
  for (const std::string& tail : RefusedTails()) {
    ExpectProblem(Put("/kv/" + tail, "1"), 400, "bad-path", "PUT /kv/" + tail);
    ExpectProblem(Send(MakeRequest(http::verb::get, "/kv/" + tail)), 400, "bad-path",
                  "GET /kv/" + tail);
  }
  EXPECT_TRUE(backend_.Requests().empty()) << "a refused spelling reached the backend";
}

TEST_F(HttpSpellingTest, EverySpellingOfAHostIsOneKey) {
  ASSERT_EQ(PutAs("/byhost/doc", 10, "Example.COM:8080").result_int(), 200);
  for (const char* host : {"example.com", "EXAMPLE.com.", "example.com:80", "example.com.:443"}) {
    const Response stale = PutAs("/byhost/doc", 5, host);
    ExpectProblem(stale, 409, "stale-token", std::string("Host: ") + host);
    EXPECT_EQ(FenceKeyOf(stale), "example.com:/byhost/doc") << host;
  }
  for (const char* host : {"exa mple.com", "example.com:http", "a..b", "ex%41mple.com"}) {
    ExpectProblem(PutAs("/byhost/doc", 11, host), 400, "bad-host", std::string("Host: ") + host);
  }
}

// RFC 9112 3.2: an HTTP/1.1 request has exactly one Host field.
TEST_F(HttpSpellingTest, MissingOrRepeatedHostIs400) {
  Request missing = MakeRequest(http::verb::put, "/kv/a/x", {{"Fencing-Token", "1"}}, "x");
  missing.erase(http::field::host);
  ExpectProblem(Send(std::move(missing)), 400, "bad-host", "no Host");

  Request twice = MakeRequest(http::verb::put, "/kv/a/x", {{"Fencing-Token", "1"}}, "x");
  twice.insert(http::field::host, "other.example");
  ExpectProblem(Send(std::move(twice)), 400, "bad-host", "two Host fields");

  // HTTP/1.0 has no Host requirement.
  Request old = MakeRequest(http::verb::get, "/kv/a/x");
  old.version(10);
  old.erase(http::field::host);
  EXPECT_EQ(Send(std::move(old)).result_int(), 200);
  EXPECT_EQ(backend_.Requests().size(), 1u);
}

}  // namespace
}  // namespace fencegate::integration
