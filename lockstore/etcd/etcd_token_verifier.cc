#include "lockstore/etcd/etcd_token_verifier.h"

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

namespace fencegate::lockstore::etcd {
namespace {

using Clock = std::chrono::steady_clock;

TokenCheck Unavailable(std::string why) {
  return {TokenCheck::Verdict::kUnavailable, Status::Unavailable(std::move(why))};
}

// The holder of an etcd lock is its oldest key; the others wait for it in create_revision order.
TokenCheck Judge(const std::vector<EtcdKeyValue>& kvs, Token token) {
  const auto holder =
      std::min_element(kvs.begin(), kvs.end(), [](const EtcdKeyValue& a, const EtcdKeyValue& b) {
        return a.create_revision < b.create_revision;
      });
  const bool held = holder != kvs.end() && holder->create_revision > 0 &&
                    static_cast<Token>(holder->create_revision) == token;
  return {held ? TokenCheck::Verdict::kHeld : TokenCheck::Verdict::kNotHeld, Status::Ok()};
}

}  // namespace

class EtcdTokenVerifier::Impl {
 public:
  explicit Impl(EtcdTokenVerifierOptions options)
      : options_(std::move(options)), counters_(std::make_shared<EtcdClientCounters>()) {
    for (std::size_t i = 0; i < std::max<std::size_t>(1, options_.threads); ++i) {
      threads_.emplace_back([this] { Work(); });
    }
  }

  ~Impl() {
    std::deque<Check> left;
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
      left.swap(queue_);
    }
    cv_.notify_all();
    for (std::thread& thread : threads_) thread.join();
    for (Check& check : left) check.callback(Unavailable("the gateway is shutting down"));
  }

  void Verify(std::string lock_name, Token token, std::function<void(TokenCheck)> callback) {
    {
      std::lock_guard lock(mutex_);
      if (!stopping_ && queue_.size() < options_.max_pending) {
        queue_.push_back({std::move(lock_name), token, Clock::now(), std::move(callback)});
        cv_.notify_one();
        return;
      }
    }
    callback(Unavailable("too many live token checks in flight"));
  }

 private:
  struct Check {
    std::string lock_name;
    Token token = 0;
    Clock::time_point queued;
    std::function<void(TokenCheck)> callback;
  };

  void Work() {
    EtcdClient client(options_.client, counters_);
    std::unique_lock lock(mutex_);
    while (true) {
      cv_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      if (stopping_) return;
      Check check = std::move(queue_.front());
      queue_.pop_front();
      lock.unlock();
      check.callback(Run(client, check));
      lock.lock();
    }
  }

  TokenCheck Run(EtcdClient& client, const Check& check) {
    // A check that waited its whole timeout in the queue would answer too late to matter.
    if (Clock::now() - check.queued >= options_.client.operation_timeout) {
      return Unavailable("the live token check waited too long for a free etcd connection");
    }
    std::vector<EtcdKeyValue> kvs;
    const Status status = client.GetPrefix(check.lock_name + "/", &kvs);
    if (!status.ok())
      return Unavailable("etcd did not answer the live token check: " + status.message());
    return Judge(kvs, check.token);
  }

  const EtcdTokenVerifierOptions options_;
  std::shared_ptr<EtcdClientCounters> counters_;
  std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<Check> queue_;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

EtcdTokenVerifier::EtcdTokenVerifier(EtcdTokenVerifierOptions options)
    : impl_(std::make_unique<Impl>(std::move(options))) {}

EtcdTokenVerifier::~EtcdTokenVerifier() = default;

void EtcdTokenVerifier::Verify(std::string lock_name, Token token,
                               std::function<void(TokenCheck)> callback) {
  impl_->Verify(std::move(lock_name), token, std::move(callback));
}

}  // namespace fencegate::lockstore::etcd
