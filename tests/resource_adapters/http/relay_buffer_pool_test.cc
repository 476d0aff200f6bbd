#include "resource_adapters/http/relay_buffer_pool.h"

#include <gtest/gtest.h>

#include <set>
#include <vector>

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

std::vector<RelayBufferPool::Buffer> TakeMany(RelayBufferPool& pool, std::size_t count) {
  std::vector<RelayBufferPool::Buffer> buffers;
  for (std::size_t i = 0; i < count; ++i) buffers.push_back(pool.Take());
  return buffers;
}

void GiveAll(RelayBufferPool& pool, std::vector<RelayBufferPool::Buffer>& buffers) {
  for (auto& buffer : buffers) pool.Give(std::move(buffer));
  buffers.clear();
}

// `count` buffers in use at once, then all given back.
void Burst(RelayBufferPool& pool, std::size_t count) {
  std::vector<RelayBufferPool::Buffer> burst = TakeMany(pool, count);
  GiveAll(pool, burst);
}

// `takes` exchanges one after the other.
void OneAtATime(RelayBufferPool& pool, std::size_t takes) {
  for (std::size_t i = 0; i < takes; ++i) pool.Give(pool.Take());
}

TEST(RelayBufferPoolTest, KeepsAsManyAsWereInUseAtOnce) {
  RelayBufferPool pool(64, 256);
  std::vector<RelayBufferPool::Buffer> round = TakeMany(pool, 40);
  std::set<char*> addresses;
  for (const auto& buffer : round) addresses.insert(buffer.get());
  GiveAll(pool, round);
  EXPECT_EQ(pool.idle(), 40u);

  // The next round of the same size allocates nothing.
  round = TakeMany(pool, 40);
  for (const auto& buffer : round) EXPECT_TRUE(addresses.contains(buffer.get()));
  EXPECT_EQ(pool.idle(), 0u);
}

TEST(RelayBufferPoolTest, FreesWhatAPastPeakNoLongerNeeds) {
  RelayBufferPool pool(64, 256);
  Burst(pool, 40);
  ASSERT_EQ(pool.idle(), 40u);
  // Two whole windows without the burst: its peak is forgotten.
  OneAtATime(pool, 2 * RelayBufferPool::kWindowTakes);
  EXPECT_EQ(pool.idle(), 1u);
}

TEST(RelayBufferPoolTest, KeepsThePeakThroughTheNextWindow) {
  RelayBufferPool pool(64, 256);
  Burst(pool, 40);
  // The burst's window ends during these: its peak is now the previous window's.
  OneAtATime(pool, RelayBufferPool::kWindowTakes);
  EXPECT_EQ(pool.idle(), 40u);
}

TEST(RelayBufferPoolTest, NeverKeepsMoreThanMaxIdle) {
  RelayBufferPool pool(64, 8);
  Burst(pool, 20);
  EXPECT_EQ(pool.idle(), 8u);
}

TEST(RelayBufferPoolTest, GivingNothingChangesNothing) {
  RelayBufferPool pool(64, 8);
  RelayBufferPool::Buffer held = pool.Take();
  pool.Give(nullptr);
  pool.Give(std::move(held));
  EXPECT_EQ(pool.idle(), 1u);
}

TEST(RelayBufferPoolTest, BuffersHaveAtLeastOneByte) {
  RelayBufferPool pool(0, 1);
  EXPECT_EQ(pool.buffer_bytes(), 1u);
  EXPECT_NE(pool.Take(), nullptr);
}

}  // namespace
}  // namespace fencegate::adapters
