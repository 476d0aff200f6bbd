#include "base/log/log_rate_limit.h"

#include <atomic>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

namespace fencegate::log {
namespace {

TEST(LogRateLimitTest, LetsOneLineASecondThroughAndReportsTheRest) {
  LogRateLimit limit;
  EXPECT_TRUE(limit.Admit("files", 100).log);
  EXPECT_FALSE(limit.Admit("files", 100).log);
  EXPECT_FALSE(limit.Admit("files", 100).log);
  const LogRateLimit::Verdict next = limit.Admit("files", 101);
  EXPECT_TRUE(next.log);
  EXPECT_EQ(next.suppressed, 2u);
  EXPECT_EQ(limit.Admit("files", 102).suppressed, 0u);
}

TEST(LogRateLimitTest, KeysHaveTheirOwnBudget) {
  LogRateLimit limit;
  // Pick a key that does not share a slot with "files" (the table is small).
  std::string other = "backend0";
  for (int i = 1; std::hash<std::string_view>()(other) % LogRateLimit::kSlots ==
                  std::hash<std::string_view>()("files") % LogRateLimit::kSlots;
       ++i) {
    other = "backend" + std::to_string(i);
  }
  EXPECT_TRUE(limit.Admit("files", 5).log);
  EXPECT_TRUE(limit.Admit(other, 5).log);
  EXPECT_FALSE(limit.Admit("files", 5).log);
}

TEST(LogRateLimitTest, ConcurrentCallersLogOnceASecondAndLoseNoCount) {
  LogRateLimit limit;
  constexpr int kThreads = 4;
  constexpr int kCalls = 10000;
  std::atomic<int> logged{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < kCalls; ++i) {
        if (limit.Admit("files", 7).log) logged.fetch_add(1);
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(logged.load(), 1);
  const LogRateLimit::Verdict next = limit.Admit("files", 8);
  EXPECT_TRUE(next.log);
  EXPECT_EQ(next.suppressed, std::uint64_t{kThreads * kCalls - 1});
}

}  // namespace
}  // namespace fencegate::log
