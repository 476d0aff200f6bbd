#include "base/net/thread_inbox.h"

#include <atomic>
#include <chrono>
#include <future>
#include <memory>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>

namespace fencegate::adapters {
namespace {

// A network thread's io_context: no locks, so only its own thread may touch it; other threads
// go through the inbox (a data race here would show in the TSan stage).
class ThreadInboxTest : public ::testing::Test {
 protected:
  ThreadInboxTest() : inbox_(ThreadInbox::Install(ioc_)) {}

  void StartThread() {
    thread_ = std::thread([this] { ioc_.run(); });
  }

  // Stops the loop through the inbox, as NetworkThread::Stop does, and joins it.
  void StopThread() {
    inbox_.Post([this] {
      work_.reset();
      ioc_.stop();
    });
    thread_.join();
  }

  boost::asio::io_context ioc_{BOOST_ASIO_CONCURRENCY_HINT_UNSAFE};
  ThreadInbox& inbox_;
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> work_{
      ioc_.get_executor()};
  std::thread thread_;
};

TEST_F(ThreadInboxTest, TasksFromOtherThreadsRunOnTheLoopThreadInPostingOrder) {
  StartThread();
  constexpr int kPerPoster = 2000;
  constexpr int kPosters = 4;
  // Touched only on the loop thread.
  std::vector<std::vector<int>> seen(kPosters);
  std::atomic<int> off_thread{0};
  std::vector<std::thread> posters;
  for (int p = 0; p < kPosters; ++p) {
    posters.emplace_back([&, p] {
      for (int i = 0; i < kPerPoster; ++i) {
        inbox_.Post([&, p, i] {
          if (!ioc_.get_executor().running_in_this_thread()) off_thread.fetch_add(1);
          seen[p].push_back(i);
        });
      }
    });
  }
  for (auto& poster : posters) poster.join();
  StopThread();  // queued after every task above, so they have all run

  EXPECT_EQ(off_thread.load(), 0);
  for (int p = 0; p < kPosters; ++p) {
    ASSERT_EQ(seen[p].size(), static_cast<std::size_t>(kPerPoster)) << "poster " << p;
    for (int i = 0; i < kPerPoster; ++i) ASSERT_EQ(seen[p][i], i) << "poster " << p;
  }
}

TEST_F(ThreadInboxTest, AMoveOnlyTaskCarriesItsState) {
  StartThread();
  std::atomic<int> value{0};
  auto payload = std::make_unique<int>(42);
  std::thread poster(
      [&] { inbox_.Post([payload = std::move(payload), &value] { value.store(*payload); }); });
  poster.join();
  StopThread();
  EXPECT_EQ(value.load(), 42);
}

TEST_F(ThreadInboxTest, APostFromTheLoopThreadRunsLaterNotInline) {
  std::vector<int> order;
  std::promise<void> second_ran;
  boost::asio::post(ioc_, [&] {
    inbox_.Post([&] {
      order.push_back(2);
      second_ran.set_value();
    });
    order.push_back(1);
  });
  StartThread();
  // A stop cuts what is queued (as ioc.stop() does), so wait for the second task first.
  ASSERT_EQ(second_ran.get_future().wait_for(std::chrono::seconds(10)), std::future_status::ready);
  StopThread();
  EXPECT_EQ(order, (std::vector<int>{1, 2}));
}

TEST_F(ThreadInboxTest, TasksNeverRunAreDestroyedWithTheIoContext) {
  auto token = std::make_shared<int>(0);
  std::weak_ptr<int> watch = token;
  {
    boost::asio::io_context ioc{BOOST_ASIO_CONCURRENCY_HINT_UNSAFE};
    ThreadInbox& inbox = ThreadInbox::Install(ioc);
    std::thread poster([&] { inbox.Post([token = std::move(token)] { *token = 1; }); });
    poster.join();
    EXPECT_FALSE(watch.expired());  // queued, held by the inbox
  }
  EXPECT_TRUE(watch.expired());
}

TEST(PostToThreadTest, FindsTheInboxOrFallsBackToAsioPost) {
  boost::asio::io_context plain;  // Asio's own locking, no inbox
  int ran = 0;
  std::thread poster([&] { PostToThread(plain, [&] { ++ran; }); });
  poster.join();
  EXPECT_EQ(plain.run(), 1u);
  EXPECT_EQ(ran, 1);

  boost::asio::io_context unlocked{BOOST_ASIO_CONCURRENCY_HINT_UNSAFE};
  ThreadInbox::Install(unlocked);
  std::thread other([&] { PostToThread(unlocked, [&] { ++ran; }); });
  other.join();
  // The task arrives through the eventfd read: one completion, then nothing left but the
  // inbox's own watch.
  unlocked.run_one_for(std::chrono::seconds(5));
  EXPECT_EQ(ran, 2);
}

}  // namespace
}  // namespace fencegate::adapters
