// FieldBlockPool (base/net/field_block_pool.h): blocks are recycled per thread and size
// class, a thread keeps a bounded number, and a header built on them may die on another thread.
#include "base/net/field_block_pool.h"

#include <cstddef>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "base/net/http_header.h"

namespace fencegate::adapters {
namespace {

namespace http = boost::beast::http;

TEST(FieldBlockPoolTest, AFreedBlockIsReusedForTheSameSizeClass) {
  void* first = FieldBlockPool::Allocate(70);
  FieldBlockPool::Deallocate(first, 70);
  // 70 and 90 round up to the same 96-byte class.
  void* second = FieldBlockPool::Allocate(90);
  EXPECT_EQ(second, first);
  void* other_class = FieldBlockPool::Allocate(200);
  EXPECT_NE(other_class, first);
  FieldBlockPool::Deallocate(second, 90);
  FieldBlockPool::Deallocate(other_class, 200);
}

TEST(FieldBlockPoolTest, AThreadKeepsAtMostSixtyFourFreeBlocksPerClass) {
  std::vector<void*> blocks;
  for (int i = 0; i < 100; ++i) blocks.push_back(FieldBlockPool::Allocate(300));
  for (void* block : blocks) FieldBlockPool::Deallocate(block, 300);
  // Only the first 64 freed were kept: allocating 100 again reuses exactly those.
  const std::set<void*> kept(blocks.begin(), blocks.begin() + 64);
  std::vector<void*> again;
  int reused = 0;
  for (int i = 0; i < 100; ++i) {
    again.push_back(FieldBlockPool::Allocate(300));
    reused += kept.count(again.back()) > 0 ? 1 : 0;
  }
  EXPECT_EQ(reused, 64);
  for (void* block : again) FieldBlockPool::Deallocate(block, 300);
}

// How many free blocks this thread's lists hold, per size class.
std::vector<std::size_t> FreeBlocksPerClass() {
  std::vector<std::size_t> counts;
  for (const auto& list : field_pool_detail::local_lists.by_class) counts.push_back(list.count);
  return counts;
}

TEST(FieldBlockPoolTest, LargeBlocksBypassThePool) {
  const std::vector<std::size_t> before = FreeBlocksPerClass();
  void* block = FieldBlockPool::Allocate(4097);
  static_cast<char*>(block)[4096] = 'x';  // all of it is usable
  FieldBlockPool::Deallocate(block, 4097);
  EXPECT_EQ(FreeBlocksPerClass(), before) << "a block above 4096 bytes was kept in a free list";
  // The largest pooled size, for contrast: its block is kept, first in line for reuse.
  void* largest = FieldBlockPool::Allocate(4096);
  static_cast<char*>(largest)[4095] = 'x';
  FieldBlockPool::Deallocate(largest, 4096);
  const auto& largest_class =
      field_pool_detail::local_lists.by_class[field_pool_detail::ClassOf(4096)];
  EXPECT_EQ(static_cast<void*>(largest_class.head), largest);
  // A zero-byte request still gets a block of the smallest class.
  void* small = FieldBlockPool::Allocate(0);
  EXPECT_NE(small, nullptr);
  FieldBlockPool::Deallocate(small, 0);
}

// Above 512 bytes the classes double: a serialized header of 600 or 1,000 bytes takes the same
// recycled 1 KiB block, and fewer of the larger blocks are kept.
TEST(FieldBlockPoolTest, LargerClassesDoubleAndKeepFewerBlocks) {
  void* first = FieldBlockPool::Allocate(600);
  static_cast<char*>(first)[1023] = 'x';
  FieldBlockPool::Deallocate(first, 600);
  void* second = FieldBlockPool::Allocate(1000);
  EXPECT_EQ(second, first);
  FieldBlockPool::Deallocate(second, 1000);
  EXPECT_NE(field_pool_detail::ClassOf(1025), field_pool_detail::ClassOf(1024));
  EXPECT_EQ(field_pool_detail::ClassOf(1025), field_pool_detail::ClassOf(2048));

  std::vector<void*> blocks;
  for (int i = 0; i < 20; ++i) blocks.push_back(FieldBlockPool::Allocate(4000));
  for (void* block : blocks) FieldBlockPool::Deallocate(block, 4000);
  // 32 KiB of 4 KiB blocks.
  EXPECT_EQ(field_pool_detail::local_lists.by_class[field_pool_detail::ClassOf(4000)].count, 8u);
}

TEST(FieldBlockPoolTest, AHeaderMayBeDestroyedOnAnotherThread) {
  // Built on one thread, destroyed on another (which keeps the blocks), as a header handed to
  // a worker would be; ASan and the thread's exit check the blocks are freed exactly once.
  auto header = std::make_unique<RequestHeader>();
  header->method(http::verb::put);
  header->target("/a/long/enough/target/to/need/its/own/block");
  for (int i = 0; i < 20; ++i) header->insert("X-Field-" + std::to_string(i), "value");
  std::thread([header = std::move(header)]() mutable { header.reset(); }).join();
}

}  // namespace
}  // namespace fencegate::adapters
