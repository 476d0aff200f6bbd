#include "resource_adapters/http/relay_buffer_pool.h"

#include <gtest/gtest.h>

namespace fencegate::adapters {
namespace {

TEST(RelayBufferPoolTest, ReusesAGivenBuffer) {
  RelayBufferPool pool(4096, 2);
  RelayBufferPool::Buffer first = pool.Take();
  ASSERT_NE(first, nullptr);
  char* const address = first.get();
  pool.Give(std::move(first));
  EXPECT_EQ(pool.Take().get(), address);
}

TEST(RelayBufferPoolTest, KeepsAtMostMaxIdleBuffers) {
  RelayBufferPool pool(64, 1);
  RelayBufferPool::Buffer a = pool.Take();
  RelayBufferPool::Buffer b = pool.Take();
  ASSERT_NE(a.get(), b.get());
  char* const kept = a.get();
  pool.Give(std::move(a));
  pool.Give(std::move(b));  // over max_idle: freed
  RelayBufferPool::Buffer again = pool.Take();
  EXPECT_EQ(again.get(), kept);
  RelayBufferPool::Buffer fresh = pool.Take();
  EXPECT_NE(fresh.get(), kept);
}

TEST(RelayBufferPoolTest, BuffersHaveAtLeastOneByte) {
  RelayBufferPool pool(0, 1);
  EXPECT_EQ(pool.buffer_bytes(), 1u);
  EXPECT_NE(pool.Take(), nullptr);
}

}  // namespace
}  // namespace fencegate::adapters
