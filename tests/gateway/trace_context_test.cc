#include "gateway/http/trace_context.h"

#include <set>
#include <string>

#include <gtest/gtest.h>

namespace fencegate::gateway {
namespace {

// The example of the W3C Trace Context recommendation.
constexpr std::string_view kValid = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
constexpr std::string_view kValidTraceId = "4bf92f3577b34da6a3ce929d0e0e4736";

TEST(TraceparentParseTest, AcceptsVersion00AndGivesTheTraceId) {
  EXPECT_EQ(ParseTraceparent(kValid), kValidTraceId);
  EXPECT_EQ(ParseTraceparent("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00"),
            kValidTraceId);
}

TEST(TraceparentParseTest, RefusesWhatTheSpecRefuses) {
  for (const std::string_view invalid : {
           "",
           "00",
           // all-zero trace id, all-zero parent id
           "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
           "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
           // upper-case hex
           "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
           "00-4bf92f3577b34da6a3ce929d0e0e4736-00F067AA0BA902B7-01",
           "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-0A",
           // version ff is forbidden; a version that is not hex
           "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
           "0x-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
           // wrong separators and lengths
           "00_4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
           "00-4bf92f3577b34da6a3ce929d0e0e473-600f067aa0ba902b7-01",
           "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-1",
           "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01 ",
           // version 00 never has more fields
           "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra",
           // non-hex in the ids
           "00-4bf92f3577b34da6a3ce929d0e0e473g-00f067aa0ba902b7-01",
       }) {
    EXPECT_EQ(ParseTraceparent(invalid), "") << invalid;
  }
}

TEST(TraceparentParseTest, ReadsLaterVersionsAsVersion00) {
  // A later version may append fields after a '-'; the part shared with 00 is what counts.
  EXPECT_EQ(ParseTraceparent("01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"),
            kValidTraceId);
  EXPECT_EQ(ParseTraceparent("cc-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-what"),
            kValidTraceId);
  EXPECT_EQ(ParseTraceparent("cc-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01what"), "");
}

TEST(TraceparentGeneratorTest, GeneratesValidDistinctSampledVersion00Values) {
  TraceparentGenerator generator;
  std::set<std::string> trace_ids;
  std::set<std::string> parent_ids;
  for (int i = 0; i < 1000; ++i) {
    std::array<char, kTraceparentSize> value;
    generator.Generate(&value);
    const std::string_view text(value.data(), value.size());
    ASSERT_EQ(text.substr(0, 3), "00-") << text;
    ASSERT_EQ(text.substr(52), "-01") << text;
    const std::string_view trace_id = ParseTraceparent(text);
    ASSERT_EQ(trace_id.size(), kTraceIdSize) << text;
    trace_ids.emplace(trace_id);
    parent_ids.emplace(text.substr(36, 16));
  }
  EXPECT_EQ(trace_ids.size(), 1000u);
  EXPECT_EQ(parent_ids.size(), 1000u);
}

TEST(RequestTraceTest, KeepsAValidTraceparentAndGeneratesNone) {
  TraceparentGenerator generator;
  RequestTrace trace;
  trace.Resolve(kValid, 1, /*generate=*/true, generator);
  EXPECT_EQ(trace.trace_id(), kValidTraceId);
  EXPECT_EQ(trace.generated(), "");
}

TEST(RequestTraceTest, GeneratesOneWhenAbsentInvalidOrRepeated) {
  TraceparentGenerator generator;
  for (const auto& [received, count] :
       {std::pair<std::string_view, std::size_t>{"", 0}, {"garbage", 1}, {kValid, 2}}) {
    RequestTrace trace;
    trace.Resolve(received, count, /*generate=*/true, generator);
    ASSERT_EQ(trace.generated().size(), kTraceparentSize) << received;
    EXPECT_EQ(ParseTraceparent(trace.generated()), trace.trace_id());
    EXPECT_NE(trace.trace_id(), kValidTraceId);
  }
}

TEST(RequestTraceTest, WithoutGenerationAnInvalidOneLeavesNoTrace) {
  TraceparentGenerator generator;
  RequestTrace trace;
  trace.Resolve("garbage", 1, /*generate=*/false, generator);
  EXPECT_EQ(trace.trace_id(), "");
  EXPECT_EQ(trace.generated(), "");
  trace.Resolve(kValid, 1, /*generate=*/false, generator);
  EXPECT_EQ(trace.trace_id(), kValidTraceId);
}

}  // namespace
}  // namespace fencegate::gateway
