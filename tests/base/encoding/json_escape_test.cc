#include "base/encoding/json_escape.h"

#include <gtest/gtest.h>
#include <boost/json/parse.hpp>

namespace fencegate::gateway {
namespace {

TEST(JsonKeyTest, SeparatesMembersWithCommas) {
  std::string out = "{";
  AppendJsonKey("a", &out);
  AppendJsonString("x\"y", &out);
  AppendJsonKey("b", &out);
  out += "2}";
  EXPECT_EQ(out, "{\"a\":\"x\\\"y\",\"b\":2}");
  EXPECT_EQ(boost::json::parse(out).at("a").as_string(), "x\"y");
  std::string bare;
  AppendJsonKey("k", &bare);
  EXPECT_EQ(bare, "\"k\":");
}

TEST(JsonEscapeTest, KeepsWellFormedUtf8AndEscapesBrokenBytes) {
  std::string out;
  AppendJsonString("caf\xc3\xa9 \xe2\x82\xac \xff", &out);
  EXPECT_EQ(out, "\"caf\xc3\xa9 \xe2\x82\xac \\u00ff\"");
}

}  // namespace
}  // namespace fencegate::gateway
