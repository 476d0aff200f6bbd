#include "base/net/deadline_clock.h"

#include <chrono>

#include <gtest/gtest.h>

namespace fencegate::adapters {
namespace {

using std::chrono::steady_clock;

TEST(DeadlineClockTest, NeverBehindThePreciseClockAndAtMostItsMarginAhead) {
  EXPECT_GT(DeadlineClock::kMargin, std::chrono::nanoseconds(0));
  EXPECT_LE(DeadlineClock::kMargin, std::chrono::milliseconds(100));
  for (int i = 0; i < 10000; ++i) {
    const auto before = steady_clock::now();
    const auto now = DeadlineClock::Now();
    const auto after = steady_clock::now();
    // A deadline set from it never comes before the same deadline set from steady_clock.
    ASSERT_GE(now, before) << "sample " << i;
    ASSERT_LE(now, after + DeadlineClock::kMargin) << "sample " << i;
  }
}

}  // namespace
}  // namespace fencegate::adapters
