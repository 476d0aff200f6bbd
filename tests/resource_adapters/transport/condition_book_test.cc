#include "resource_adapters/transport/condition_book.h"

#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

namespace fencegate::adapters {
namespace {

ConditionProbeResult BookProbe(std::string name, bool holds, bool required) {
  return ConditionProbeResult{std::move(name), holds, required, holds ? "" : "answered 200"};
}

TEST(ConditionReportTest, VerdictFollowsTheRequiredAndOptionalProbes) {
  EXPECT_EQ(ConditionReport::FromProbes({BookProbe("a", true, true), BookProbe("b", true, false)}),
            ConditionVerdict::kEnforced);
  EXPECT_EQ(ConditionReport::FromProbes({BookProbe("a", true, true), BookProbe("b", false, false)}),
            ConditionVerdict::kPartial);
  EXPECT_EQ(
      ConditionReport::FromProbes({BookProbe("a", false, true), BookProbe("b", false, false)}),
      ConditionVerdict::kIgnored);
  EXPECT_EQ(ConditionReport::FromProbes({}), ConditionVerdict::kEnforced);
}

TEST(ConditionReportTest, FailedProbesTextNamesEachFailure) {
  ConditionReport report;
  report.probes = {BookProbe("put-if-match-wrong-etag", false, true), BookProbe("ok", true, true),
                   BookProbe("delete-if-match-wrong-etag", false, false)};
  EXPECT_EQ(report.FailedProbesText(),
            "put-if-match-wrong-etag: answered 200; delete-if-match-wrong-etag: answered 200");
  ConditionReport unreachable;
  unreachable.error = "connection refused";
  EXPECT_EQ(unreachable.FailedProbesText(), "connection refused");
}

TEST(ConditionVerdictTest, NamesAreTheOnesTheAdminApiShows) {
  EXPECT_EQ(ConditionVerdictName(ConditionVerdict::kPending), "pending");
  EXPECT_EQ(ConditionVerdictName(ConditionVerdict::kEnforced), "enforced");
  EXPECT_EQ(ConditionVerdictName(ConditionVerdict::kPartial), "partial");
  EXPECT_EQ(ConditionVerdictName(ConditionVerdict::kIgnored), "ignored");
  EXPECT_EQ(ConditionVerdictName(ConditionVerdict::kUnreachable), "unreachable");
  EXPECT_EQ(ConditionVerdictName(ConditionVerdict::kTrusted), "trusted");
}

TEST(ConditionBookTest, RecordsReplaceAndListInScopeOrder) {
  ConditionBook book("objects", ConditionProbeOptions{});
  EXPECT_FALSE(book.Find("photos").has_value());
  book.Record({.scope = "photos", .verdict = ConditionVerdict::kPending});
  book.Record({.scope = "logs", .verdict = ConditionVerdict::kIgnored});
  book.Record({.scope = "photos", .verdict = ConditionVerdict::kPartial, .checked_unix_ms = 7});
  ASSERT_TRUE(book.Find("photos").has_value());
  EXPECT_EQ(book.Find("photos")->verdict, ConditionVerdict::kPartial);
  EXPECT_EQ(book.Find("photos")->checked_unix_ms, 7);
  const std::vector<ConditionReport> reports = book.Reports();
  ASSERT_EQ(reports.size(), 2u);
  EXPECT_EQ(reports[0].scope, "logs");
  EXPECT_EQ(reports[1].scope, "photos");
  EXPECT_EQ(book.backend_name(), "objects");
}

// Network threads record while the admin thread reads: no torn reports (run under TSan too).
TEST(ConditionBookTest, RecordAndReadFromSeveralThreads) {
  ConditionBook book("objects", ConditionProbeOptions{});
  std::vector<std::thread> writers;
  for (int t = 0; t < 4; ++t) {
    writers.emplace_back([&book, t] {
      for (int i = 0; i < 200; ++i) {
        book.Record({.scope = "bucket-" + std::to_string(i % 8),
                     .verdict = ConditionVerdict::kEnforced,
                     .checked_unix_ms = t * 1000 + i});
      }
    });
  }
  std::size_t seen = 0;
  for (int i = 0; i < 200; ++i) seen = std::max(seen, book.Reports().size());
  for (std::thread& writer : writers) writer.join();
  EXPECT_EQ(book.Reports().size(), 8u);
  EXPECT_LE(seen, 8u);
}

}  // namespace
}  // namespace fencegate::adapters
