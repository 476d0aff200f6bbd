#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>

namespace fencegate::gateway {

// Runs reloads one at a time on a thread of its own: reading the file and building a generation
// block, which network threads, the signal thread and the admin listener must not wait for.
class ReloadWorker {
 public:
  ReloadWorker();
  ~ReloadWorker();  // Stop(), then the dropped jobs go
  ReloadWorker(const ReloadWorker&) = delete;
  ReloadWorker& operator=(const ReloadWorker&) = delete;

  // Thread-safe: queues `job`; jobs run in order, never two at once. Dropped after Stop().
  void Post(std::function<void()> job);
  // Finishes the job in progress and joins the thread; the queued jobs are dropped, but kept
  // (with what they hold: an admin connection waiting for its answer) until the destructor,
  // which the Server runs once the admin thread is joined. Idempotent.
  void Stop();

 private:
  void Run();

  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::function<void()>> jobs_;
  std::deque<std::function<void()>> dropped_;
  bool stopping_ = false;
  std::thread thread_;  // last: starts once the members above exist
};

}  // namespace fencegate::gateway
