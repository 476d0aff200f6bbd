// ReloadWorker: reloads run one at a time, in order, off the caller's thread.
#include "gateway/server/reload_worker.h"

#include <future>
#include <mutex>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

namespace fencegate::gateway {
namespace {

TEST(ReloadWorkerTest, RunsJobsInOrderOneAtATimeOnItsOwnThread) {
  ReloadWorker worker;
  std::mutex mutex;
  std::vector<int> order;
  int running = 0;
  int most_running = 0;
  std::promise<std::thread::id> worker_thread;
  std::promise<void> all_done;
  for (int i = 0; i < 20; ++i) {
    worker.Post([&, i] {
      {
        std::lock_guard lock(mutex);
        most_running = std::max(most_running, ++running);
        order.push_back(i);
      }
      if (i == 0) worker_thread.set_value(std::this_thread::get_id());
      std::lock_guard lock(mutex);
      --running;
      if (i == 19) all_done.set_value();
    });
  }
  all_done.get_future().wait();
  EXPECT_NE(worker_thread.get_future().get(), std::this_thread::get_id());
  std::lock_guard lock(mutex);
  EXPECT_EQ(most_running, 1);
  ASSERT_EQ(order.size(), 20u);
  for (int i = 0; i < 20; ++i) EXPECT_EQ(order[i], i);
}

TEST(ReloadWorkerTest, StopWaitsForTheRunningJobAndLaterPostsAreDropped) {
  ReloadWorker worker;
  std::promise<void> started;
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  bool first_finished = false;
  worker.Post([&] {
    started.set_value();
    released.wait();
    first_finished = true;
  });
  started.get_future().wait();
  std::thread releaser([&] { release.set_value(); });
  worker.Stop();
  releaser.join();
  EXPECT_TRUE(first_finished);
  bool late_ran = false;
  worker.Post([&] { late_ran = true; });
  worker.Stop();  // idempotent
  EXPECT_FALSE(late_ran);
}

}  // namespace
}  // namespace fencegate::gateway
