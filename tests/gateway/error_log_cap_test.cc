#include "gateway/observability/error_log_cap.h"

#include <gtest/gtest.h>

namespace fencegate::gateway {
namespace {

TEST(ErrorLogCapTest, LogsTheFirstLinesOfASecondAndReportsTheRestInTheNextLine) {
  ErrorLogCap cap(2);
  EXPECT_TRUE(cap.Admit("10.0.0.1", "kv:a", 100).log);
  EXPECT_TRUE(cap.Admit("10.0.0.1", "kv:a", 100).log);
  for (int i = 0; i < 5; ++i) EXPECT_FALSE(cap.Admit("10.0.0.1", "kv:a", 100).log);
  // Other keys and other clients have their own allowance.
  EXPECT_TRUE(cap.Admit("10.0.0.1", "kv:b", 100).log);
  EXPECT_TRUE(cap.Admit("10.0.0.2", "kv:a", 100).log);
  const ErrorLogCap::Verdict next = cap.Admit("10.0.0.1", "kv:a", 101);
  EXPECT_TRUE(next.log);
  EXPECT_EQ(next.suppressed, 5u);
  EXPECT_EQ(cap.Admit("10.0.0.1", "kv:a", 101).suppressed, 0u);
}

TEST(ErrorLogCapTest, ZeroLogsEverything) {
  ErrorLogCap cap(0);
  for (int i = 0; i < 100; ++i) EXPECT_TRUE(cap.Admit("c", "k", 1).log);
}

}  // namespace
}  // namespace fencegate::gateway
