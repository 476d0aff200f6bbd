#include "resource_adapters/relay_budget.h"

#include <atomic>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

namespace fencegate::adapters {
namespace {

TEST(RelayBudgetTest, ReservesUpToTheLimitAndCountsBodiesRefused) {
  RelayBudget budget(1000);
  EXPECT_TRUE(budget.TryReserve(600));
  EXPECT_TRUE(budget.TryReserve(400));
  EXPECT_FALSE(budget.TryReserve(1));
  EXPECT_FALSE(budget.TryReserve(1, /*count_refusal=*/false));
  EXPECT_EQ(budget.reserved(), 1000u);
  EXPECT_EQ(budget.refusals(), 1u);
  budget.Release(400);
  EXPECT_TRUE(budget.TryReserve(300));
  EXPECT_EQ(budget.reserved(), 900u);
}

TEST(RelayBudgetTest, ConcurrentReservationsNeverExceedTheLimit) {
  RelayBudget budget(100);
  std::vector<std::thread> threads;
  std::atomic<int> granted{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 10000; ++i) {
        if (!budget.TryReserve(7)) continue;
        granted.fetch_add(1);
        EXPECT_LE(budget.reserved(), 100u);
        budget.Release(7);
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(budget.reserved(), 0u);
  EXPECT_GT(granted.load(), 0);
}

}  // namespace
}  // namespace fencegate::adapters
