#pragma once

#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "lockstore/locks/lock_clock.h"
#include "lockstore/locks/lock_fencer.h"
#include "lockstore/locks/lock_table.h"

namespace fencegate::lockstore::testing {

// A clock the test moves by hand. Advance() runs the table's handler when a requested wake-up
// is due, as the steady clock's timer thread would.
class ManualLockClock final : public LockClock {
 public:
  Time Now() const override { return now_; }
  void SetHandler(std::function<void()> handler) override { handler_ = std::move(handler); }
  void WakeAt(Time when) override { wake_ = when; }

  void Advance(std::chrono::milliseconds by) {
    now_ += by;
    if (wake_ <= now_ && handler_) {
      wake_ = Time::max();
      handler_();
    }
  }
  // Moves time without running the timer: a lease end the timer has not processed yet.
  void AdvanceWithoutTimer(std::chrono::milliseconds by) { now_ += by; }

 private:
  Time now_ = Time() + std::chrono::hours(1);
  Time wake_ = Time::max();
  std::function<void()> handler_;
};

// Records what the table asked to fence; answers at once unless held.
class RecordingFencer final : public LockFencer {
 public:
  struct Call {
    std::string lock;
    std::vector<std::string> keys;
    Token token;
  };
  void Raise(std::string_view lock, const std::vector<std::string>& keys, Token token,
             Callback callback) override {
    calls.push_back({std::string(lock), keys, token});
    FenceOutcome outcome;
    for (const std::string& key : keys) outcome.fences.push_back({key, true, token});
    if (hold) {
      held.push_back([callback, outcome] { callback(outcome); });
      return;
    }
    callback(std::move(outcome));
  }
  std::vector<Call> calls;
  bool hold = false;
  std::vector<std::function<void()>> held;
};

// Collects one acquire's result.
struct AcquireProbe {
  std::optional<AcquireResult> result;
  LockTable::AcquireCallback callback() {
    return [this](AcquireResult r) { result = std::move(r); };
  }
  bool granted() const { return result && result->kind == AcquireResult::Kind::kGranted; }
};

}  // namespace fencegate::lockstore::testing
