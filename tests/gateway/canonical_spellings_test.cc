// Every spelling of a resource, once the gateway made its target canonical, is one fence key and
// one backend object for every adapter kind: the filesystem's decoded path, the S3 key (and the
// SigV4 target sent), the WebDAV path and member property, and the target an http backend gets.
// The same rows run through the real binary for filesystem and http routes in
// tests/integration/one_key_per_resource_test.cc.
#include <algorithm>
#include <string>
#include <variant>
#include <vector>

#include <gtest/gtest.h>

#include "gateway/http/path_canonical.h"
#include "lockstore/fence/fence_key_template.h"
#include "resource_adapters/filesystem/resource_path.h"
#include "resource_adapters/s3/s3_request.h"
#include "resource_adapters/webdav/member_property.h"

namespace fencegate::gateway {
namespace {

struct Row {
  std::vector<std::string> tails;  // spellings of one name under a route prefix
  std::string canonical;           // the canonical tail
  std::string bytes;               // the name's bytes, as a file or S3 key
};

const std::vector<Row> kRows = {
    {{"a:b", "a%3Ab", "a%3ab"}, "a:b", "a:b"},
    {{"caf\xC3\xA9", "caf%C3%A9", "caf%c3%a9", "caf\xC3%a9"}, "caf%C3%A9", "caf\xC3\xA9"},
    {{"abc", "%61bc", "%61%62%63", "%61%62c"}, "abc", "abc"},
    {{"x.txt", "x%2Etxt", "x%2etxt"}, "x.txt", "x.txt"},
    {{"a+b", "a%2Bb", "a%2bb"}, "a+b", "a+b"},
    {{"sp%20ace", "sp%20ace?q=1"}, "sp%20ace", "sp ace"},
    {{"q%3Fx", "q%3fx"}, "q%3Fx", "q?x"},
    {{"h%23x", "h%23x"}, "h%23x", "h#x"},
    {{"p%25", "p%25"}, "p%25", "p%"},
    {{"t~_-.", "t%7E%5F%2D%2E"}, "t~_-.", "t~_-."},
    // Different bytes, different names: a trailing dot, and NFD next to NFC's "caf%C3%A9".
    {{"r.csv."}, "r.csv.", "r.csv."},
    {{"cafe%CC%81", "cafe%cc%81"}, "cafe%CC%81", "cafe\xCC\x81"},
};

const std::vector<std::string> kRefused = {
    "a#z",     "a?q#z",       "d//a",  "./a",    "d/../a",  "%2e%2E", "d%2Fa",
    "d%2fa",   "d%5Ca",       "d\\a",  "a%00b",  "a%0Ab",   "a%7Fb",  "a%C0%AFb",
    "a%C0%AE", "a%E0%80%AFb", "a%FFb", "caf%C3", "caf\xE9", "a%zzb",  "%ED%A0%80",
};

std::string Canonical(const std::string& target) {
  std::string scratch;
  std::string_view canonical;
  EXPECT_EQ(CanonicaliseTarget(target, &scratch, &canonical), PathViolation::kNone) << target;
  return std::string(canonical);
}

std::string RenderKey(std::string_view template_text, const std::string& target) {
  lockstore::FenceKeyTemplate key_template;
  EXPECT_TRUE(lockstore::FenceKeyTemplate::Parse(template_text, &key_template).ok());
  const std::string path = target.substr(0, target.find('?'));
  std::string key;
  EXPECT_TRUE(key_template.Render({path, "example.com", "files"}, &key)) << target;
  return key;
}

TEST(CanonicalSpellingsTest, EverySpellingIsOneKeyAndOneObjectForEveryAdapter) {
  for (const Row& row : kRows) {
    for (const std::string& tail : row.tails) {
      const std::string context = "spelling " + tail;
      // http: the backend gets the canonical target; the key renders from its path.
      const std::string target = Canonical("/files/" + tail);
      EXPECT_EQ(target.substr(0, target.find('?')), "/files/" + row.canonical) << context;
      EXPECT_EQ(RenderKey("files:{path}", target), "files:/files/" + row.canonical) << context;
      EXPECT_EQ(RenderKey("files:{segment:2}", target), "files:" + row.canonical) << context;

      // filesystem: the file the key names.
      auto mapped = adapters::MapTargetToPath(target, "/files/");
      ASSERT_TRUE(std::holds_alternative<adapters::ResourcePath>(mapped)) << context;
      const auto& path = std::get<adapters::ResourcePath>(mapped);
      EXPECT_TRUE(path.directories.empty()) << context;
      EXPECT_EQ(path.name, row.bytes) << context;

      // s3 (bucket "files"): the object key, and one signed target per object.
      adapters::s3::S3Request s3;
      ASSERT_FALSE(adapters::s3::ParseS3Request(boost::beast::http::verb::put, target, &s3))
          << context;
      EXPECT_EQ(s3.bucket, "files") << context;
      EXPECT_EQ(s3.key, row.bytes) << context;
      adapters::s3::S3Request first;
      ASSERT_FALSE(adapters::s3::ParseS3Request(boost::beast::http::verb::put,
                                                Canonical("/files/" + row.tails.front()), &first));
      EXPECT_EQ(s3.target.substr(0, s3.target.find('?')), first.target) << context;

      // webdav: the request goes to the canonical path; the member property is the name's.
      const auto member = adapters::webdav::MemberPropertyOf(target.substr(0, target.find('?')));
      const auto first_member = adapters::webdav::MemberPropertyOf("/files/" + row.canonical);
      ASSERT_TRUE(member && first_member) << context;
      EXPECT_EQ(member->property, first_member->property) << context;
      EXPECT_EQ(member->parent, "/files/") << context;
    }
  }
}

TEST(CanonicalSpellingsTest, DifferentBytesAreDifferentKeys) {
  std::vector<std::string> keys;
  for (const Row& row : kRows) keys.push_back(RenderKey("files:{path}", "/files/" + row.canonical));
  std::sort(keys.begin(), keys.end());
  EXPECT_EQ(std::adjacent_find(keys.begin(), keys.end()), keys.end());
}

TEST(CanonicalSpellingsTest, SpellingsWithoutOneMeaningAreRefusedBeforeAnyAdapter) {
  for (const std::string& tail : kRefused) {
    std::string scratch;
    std::string_view canonical;
    EXPECT_NE(CanonicaliseTarget("/files/" + tail, &scratch, &canonical), PathViolation::kNone)
        << tail;
  }
}

}  // namespace
}  // namespace fencegate::gateway
