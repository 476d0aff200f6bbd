#include "resource_adapters/http/exchange_block_pool.h"

#include <array>
#include <memory>

#include <gtest/gtest.h>

namespace fencegate::adapters {
namespace {

struct Exchange {
  std::array<char, 3000> state{};
};

std::shared_ptr<Exchange> Make(const std::shared_ptr<ExchangeBlockPool>& pool) {
  return std::allocate_shared<Exchange>(ExchangeBlockAllocator<Exchange>(pool));
}

TEST(ExchangeBlockPoolTest, AFreedExchangesBlockIsReused) {
  auto pool = std::make_shared<ExchangeBlockPool>(2);
  auto first = Make(pool);
  const Exchange* const address = first.get();
  first.reset();
  EXPECT_EQ(pool->idle(), 1u);
  auto second = Make(pool);
  EXPECT_EQ(second.get(), address);
  EXPECT_EQ(pool->idle(), 0u);
}

TEST(ExchangeBlockPoolTest, KeepsAtMostMaxIdleBlocks) {
  auto pool = std::make_shared<ExchangeBlockPool>(1);
  auto a = Make(pool);
  auto b = Make(pool);
  ASSERT_NE(a.get(), b.get());
  a.reset();
  b.reset();  // over max_idle: freed
  EXPECT_EQ(pool->idle(), 1u);
}

TEST(ExchangeBlockPoolTest, OtherSizesAreNotKept) {
  auto pool = std::make_shared<ExchangeBlockPool>(4);
  void* const block = pool->Take(64);
  pool->Give(block, 64);
  void* const other = pool->Take(128);
  pool->Give(other, 128);
  EXPECT_EQ(pool->idle(), 1u);
  EXPECT_EQ(pool->Take(64), block);
  pool->Give(block, 64);
}

TEST(ExchangeBlockPoolTest, AnExchangeOutlivesTheAdaptersHandleOnThePool) {
  auto pool = std::make_shared<ExchangeBlockPool>(2);
  auto exchange = Make(pool);
  const std::weak_ptr<ExchangeBlockPool> weak = pool;
  pool.reset();  // the adapter went away; the control block's allocator still holds the pool
  EXPECT_FALSE(weak.expired());
  exchange.reset();
  EXPECT_TRUE(weak.expired());
}

}  // namespace
}  // namespace fencegate::adapters
