#include "lockstore/fence/fence_key_template.h"

#include <gtest/gtest.h>

#include <string>

namespace fencegate::lockstore {
namespace {

std::string RenderOrDie(std::string_view text, const RequestFacts& facts) {
  FenceKeyTemplate key_template;
  const Status status = FenceKeyTemplate::Parse(text, &key_template);
  EXPECT_TRUE(status.ok()) << status.ToString();
  std::string out = "leftover";
  EXPECT_TRUE(key_template.Render(facts, &out));
  return out;
}

Status ParseStatus(std::string_view text) {
  FenceKeyTemplate key_template;
  return FenceKeyTemplate::Parse(text, &key_template);
}

const RequestFacts kFacts{"/inventory/widgets/42", "api.example.com", "inventory"};

TEST(FenceKeyTemplateTest, RendersEveryPlaceholder) {
  EXPECT_EQ(RenderOrDie("files:{path}", kFacts), "files:/inventory/widgets/42");
  EXPECT_EQ(RenderOrDie("{host}", kFacts), "api.example.com");
  EXPECT_EQ(RenderOrDie("{route}", kFacts), "inventory");
  EXPECT_EQ(RenderOrDie("inv:{segment:1}:{segment:2}:{segment:3}", kFacts),
            "inv:inventory:widgets:42");
  EXPECT_EQ(RenderOrDie("{route}@{host}{path}", kFacts),
            "inventory@api.example.com/inventory/widgets/42");
}

TEST(FenceKeyTemplateTest, LiteralOnlyTemplateIsOneKey) {
  EXPECT_EQ(RenderOrDie("global", kFacts), "global");
}

TEST(FenceKeyTemplateTest, DoubledBracesAreLiteral) {
  EXPECT_EQ(RenderOrDie("{{x}}:{segment:2}", kFacts), "{x}:widgets");
  EXPECT_EQ(RenderOrDie("a}}b{{c", kFacts), "a}b{c");
}

TEST(FenceKeyTemplateTest, KeepsSource) {
  FenceKeyTemplate key_template;
  ASSERT_TRUE(FenceKeyTemplate::Parse("k:{path}", &key_template).ok());
  EXPECT_EQ(key_template.source(), "k:{path}");
}

TEST(FenceKeyTemplateTest, MissingSegmentHasNoKey) {
  FenceKeyTemplate key_template;
  ASSERT_TRUE(FenceKeyTemplate::Parse("k:{segment:3}", &key_template).ok());
  std::string out;
  EXPECT_FALSE(key_template.Render({"/a", "h", "r"}, &out));
  EXPECT_FALSE(key_template.Render({"/a/b/", "h", "r"}, &out));  // trailing slash: empty
  ASSERT_TRUE(key_template.Render({"/a/b/c/d", "h", "r"}, &out));
  EXPECT_EQ(out, "k:c");
  ASSERT_TRUE(key_template.Render({"/a//c", "h", "r"}, &out));
  EXPECT_EQ(out, "k:c");

  FenceKeyTemplate second;
  ASSERT_TRUE(FenceKeyTemplate::Parse("k:{segment:2}", &second).ok());
  EXPECT_FALSE(second.Render({"/a//c", "h", "r"}, &out)) << "segment 2 is empty";
}

TEST(FenceKeyTemplateTest, EmptyFactHasNoKey) {
  FenceKeyTemplate key_template;
  ASSERT_TRUE(FenceKeyTemplate::Parse("{host}:{path}", &key_template).ok());
  std::string out;
  EXPECT_FALSE(key_template.Render({"/a", "", "r"}, &out));
}

TEST(FenceKeyTemplateTest, RenderClearsOutput) {
  FenceKeyTemplate key_template;
  ASSERT_TRUE(FenceKeyTemplate::Parse("k:{segment:1}", &key_template).ok());
  std::string out = "previous request's key";
  ASSERT_TRUE(key_template.Render({"/x", "h", "r"}, &out));
  EXPECT_EQ(out, "k:x");
}

TEST(FenceKeyTemplateTest, UnknownPlaceholderNamesItAndItsPosition) {
  const Status status = ParseStatus("files:{paht}");
  EXPECT_EQ(status.code(), Status::Code::kInvalidArgument);
  EXPECT_NE(status.message().find("{paht}"), std::string::npos) << status.message();
  EXPECT_NE(status.message().find("position 6"), std::string::npos) << status.message();
}

TEST(FenceKeyTemplateTest, BadSegmentNumbers) {
  for (const char* text : {"{segment:0}", "{segment:-1}", "{segment:}", "{segment:x}",
                           "{segment:1x}", "{segment:99999999999}"}) {
    const Status status = ParseStatus(text);
    EXPECT_EQ(status.code(), Status::Code::kInvalidArgument) << text;
    EXPECT_NE(status.message().find("position 0"), std::string::npos) << status.message();
    EXPECT_NE(status.message().find(std::string(text)), std::string::npos) << status.message();
  }
}

TEST(FenceKeyTemplateTest, UnbalancedBraces) {
  Status status = ParseStatus("k:{path");
  EXPECT_EQ(status.code(), Status::Code::kInvalidArgument);
  EXPECT_NE(status.message().find("unterminated"), std::string::npos) << status.message();
  EXPECT_NE(status.message().find("position 2"), std::string::npos) << status.message();

  status = ParseStatus("k:path}");
  EXPECT_EQ(status.code(), Status::Code::kInvalidArgument);
  EXPECT_NE(status.message().find("position 6"), std::string::npos) << status.message();

  EXPECT_FALSE(ParseStatus("{}").ok());
  EXPECT_FALSE(ParseStatus("{ path }").ok());
  EXPECT_FALSE(ParseStatus("{{path}").ok()) << "the lone } is unmatched";
}

TEST(FenceKeyTemplateTest, EmptyTemplateIsRefused) { EXPECT_FALSE(ParseStatus("").ok()); }

}  // namespace
}  // namespace fencegate::lockstore
