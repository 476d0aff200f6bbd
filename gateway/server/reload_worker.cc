#include "gateway/server/reload_worker.h"

#include <utility>

namespace fencegate::gateway {

ReloadWorker::ReloadWorker() : thread_([this] { Run(); }) {}

ReloadWorker::~ReloadWorker() { Stop(); }

void ReloadWorker::Post(std::function<void()> job) {
  {
    std::lock_guard lock(mutex_);
    (stopping_ ? dropped_ : jobs_).push_back(std::move(job));
    if (stopping_) return;
  }
  wake_.notify_one();
}

void ReloadWorker::Stop() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
    for (auto& job : jobs_) dropped_.push_back(std::move(job));
    jobs_.clear();
  }
  wake_.notify_one();
  if (thread_.joinable()) thread_.join();
}

void ReloadWorker::Run() {
  std::unique_lock lock(mutex_);
  while (true) {
    wake_.wait(lock, [this] { return stopping_ || !jobs_.empty(); });
    if (stopping_) return;
    std::function<void()> job = std::move(jobs_.front());
    jobs_.pop_front();
    lock.unlock();
    job();
    lock.lock();
  }
}

}  // namespace fencegate::gateway
