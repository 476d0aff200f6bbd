#include "base/net/timeout_queue.h"

#include <chrono>
#include <memory>
#include <optional>
#include <vector>

#include <gtest/gtest.h>
#include <boost/asio/io_context.hpp>

namespace fencegate::adapters {
namespace {

using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

// Runs `ioc` until `done` holds or `limit` passes; false on the limit.
template <class Done>
bool RunUntil(boost::asio::io_context& ioc, Done done,
              Clock::duration limit = std::chrono::seconds(5)) {
  const auto give_up = Clock::now() + limit;
  while (!done()) {
    if (Clock::now() >= give_up) return false;
    ioc.run_one_for(milliseconds(10));
  }
  return true;
}

class TimeoutQueueTest : public ::testing::Test {
 protected:
  std::shared_ptr<TimeoutQueue> Queue(milliseconds timeout) {
    return std::make_shared<TimeoutQueue>(ioc_.get_executor(), timeout);
  }

  boost::asio::io_context ioc_;
};

TEST_F(TimeoutQueueTest, AnOperationThatOutlivesTheTimeoutExpiresOnce) {
  auto queue = Queue(milliseconds(50));
  int expired = 0;
  TimeoutQueue::Entry entry(queue, [&] { ++expired; });
  const auto start = Clock::now();
  entry.Begin();
  ASSERT_TRUE(RunUntil(ioc_, [&] { return expired > 0; }));
  EXPECT_GE(Clock::now() - start, milliseconds(50));
  EXPECT_TRUE(entry.End());
  // Nothing is outstanding any more: the queue's timer is idle, so the context runs out of work.
  ioc_.run_for(milliseconds(200));
  EXPECT_TRUE(ioc_.stopped());
  EXPECT_EQ(expired, 1);
}

TEST_F(TimeoutQueueTest, AnOperationThatEndsInTimeNeverExpires) {
  auto queue = Queue(milliseconds(30));
  int expired = 0;
  TimeoutQueue::Entry entry(queue, [&] { ++expired; });
  entry.Begin();
  EXPECT_FALSE(entry.End());
  ioc_.run_for(milliseconds(150));
  EXPECT_EQ(expired, 0);
}

TEST_F(TimeoutQueueTest, EachNewOperationRestartsTheIdlePeriod) {
  auto queue = Queue(milliseconds(100));
  int expired = 0;
  TimeoutQueue::Entry entry(queue, [&] { ++expired; });
  // Five operations 40 ms apart: 200 ms in all, never 100 ms idle.
  for (int i = 0; i < 5; ++i) {
    entry.Begin();
    ioc_.run_for(milliseconds(40));
    EXPECT_FALSE(entry.End());
  }
  EXPECT_EQ(expired, 0);
  entry.Begin();
  ASSERT_TRUE(RunUntil(ioc_, [&] { return expired > 0; }));
  EXPECT_TRUE(entry.End());
}

TEST_F(TimeoutQueueTest, OperationsExpireInTheOrderTheyBegan) {
  auto queue = Queue(milliseconds(40));
  std::vector<int> order;
  std::vector<std::unique_ptr<TimeoutQueue::Entry>> entries;
  for (int i = 0; i < 4; ++i) {
    entries.push_back(
        std::make_unique<TimeoutQueue::Entry>(queue, [&order, i] { order.push_back(i); }));
  }
  entries[2]->Begin();
  ioc_.run_for(milliseconds(5));
  entries[0]->Begin();
  entries[3]->Begin();
  entries[1]->Begin();
  EXPECT_FALSE(entries[3]->End());  // ended in time: never expires
  ASSERT_TRUE(RunUntil(ioc_, [&] { return order.size() == 3; }));
  EXPECT_EQ(order, (std::vector<int>{2, 0, 1}));
}

TEST_F(TimeoutQueueTest, ADestroyedEntryLeavesTheQueue) {
  auto queue = Queue(milliseconds(30));
  int expired = 0;
  auto doomed = std::make_unique<TimeoutQueue::Entry>(queue, [&] { ++expired; });
  TimeoutQueue::Entry survivor(queue, [&] { expired += 10; });
  doomed->Begin();
  survivor.Begin();
  doomed.reset();
  ASSERT_TRUE(RunUntil(ioc_, [&] { return expired != 0; }));
  EXPECT_EQ(expired, 10);
}

TEST_F(TimeoutQueueTest, AnExpiryActionMayBeginAnotherOperation) {
  auto queue = Queue(milliseconds(30));
  int expired = 0;
  std::optional<TimeoutQueue::Entry> entry;
  entry.emplace(queue, [&] {
    // A retry: the next operation of the same entry gets a full timeout of its own.
    if (++expired == 1) entry->Begin();
  });
  entry->Begin();
  ASSERT_TRUE(RunUntil(ioc_, [&] { return expired == 2; }));
  EXPECT_TRUE(entry->End());
}

}  // namespace
}  // namespace fencegate::adapters
