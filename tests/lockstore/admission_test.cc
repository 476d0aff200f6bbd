#include "lockstore/fence/admission.h"

#include <gtest/gtest.h>

#include <atomic>
#include <deque>
#include <functional>
#include <future>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <thread>
#include <vector>

#include "lockstore/fence/memory_fence_store.h"
#include "tests/lockstore/admission_test_support.h"

namespace fencegate::lockstore {
namespace {

using Kind = AdmissionDecision::Kind;
using testing::Decisions;
using testing::Unexpected;

class AdmissionTest : public ::testing::Test {
 protected:
  AdmissionTest() { store_.SetDeferred(true); }

  AdmissionOptions Options() {
    AdmissionOptions options;
    options.now_ms = [] { return std::int64_t{1000}; };
    return options;
  }

  // Raises `key` to `token` durably and completes the write that did it.
  void Establish(AdmissionController& controller, std::string_view key, Token token) {
    Decisions decisions;
    ASSERT_FALSE(controller.Admit(key, token, "setup", decisions.Callback()).has_value());
    store_.RunPending();
    ASSERT_EQ(decisions.size(), 1u);
    ASSERT_EQ(decisions.received()[0].kind, Kind::kAdmitted);
    controller.Complete(key, token);
  }

  MemoryFenceStore store_;
};

TEST_F(AdmissionTest, NewKeyAtZeroIsAdmittedWithoutAdvance) {
  AdmissionController controller(store_, Options());
  auto decision = controller.Admit("k", 0, "r1", Unexpected());
  ASSERT_TRUE(decision.has_value());
  EXPECT_EQ(decision->kind, Kind::kAdmitted);
  EXPECT_FALSE(decision->advanced);
  EXPECT_EQ(store_.advance_calls(), 0u);
}

TEST_F(AdmissionTest, AdvanceWaitsForDurability) {
  AdmissionController controller(store_, Options());
  Decisions decisions;
  EXPECT_FALSE(controller.Admit("k", 6, "r1", decisions.Callback()).has_value());
  EXPECT_EQ(decisions.size(), 0u) << "admitted before the advance was durable";
  auto view = controller.Inspect("k");
  ASSERT_TRUE(view.has_value());
  EXPECT_EQ(view->pending_advance, 6u);
  EXPECT_EQ(view->durable.highest, 0u);
  EXPECT_EQ(view->writes_waiting, 1u);

  EXPECT_EQ(store_.RunPending(), 1u);
  const auto received = decisions.received();
  ASSERT_EQ(received.size(), 1u);
  EXPECT_EQ(received[0].kind, Kind::kAdmitted);
  EXPECT_EQ(received[0].highest, 6u);
  EXPECT_TRUE(received[0].advanced);

  view = controller.Inspect("k");
  EXPECT_EQ(view->durable.highest, 6u);
  EXPECT_EQ(view->pending_advance, 0u);
  EXPECT_EQ(view->writes_in_flight, 1u);
  EXPECT_EQ(view->last_admitted_token, 6u);
  EXPECT_EQ(view->last_admitted_request_id, "r1");
  EXPECT_EQ(view->last_admitted_at_ms, 1000);
}

TEST_F(AdmissionTest, StaleIsRefusedWithHighest) {
  AdmissionController controller(store_, Options());
  Establish(controller, "k", 5);
  auto decision = controller.Admit("k", 4, "r", Unexpected());
  ASSERT_TRUE(decision.has_value());
  EXPECT_EQ(decision->kind, Kind::kStale);
  EXPECT_EQ(decision->highest, 5u);

  // A token being made durable already counts as the highest.
  Decisions pending;
  EXPECT_FALSE(controller.Admit("k", 9, "r9", pending.Callback()).has_value());
  decision = controller.Admit("k", 7, "r7", Unexpected());
  ASSERT_TRUE(decision.has_value());
  EXPECT_EQ(decision->kind, Kind::kStale);
  EXPECT_EQ(decision->highest, 9u);
  store_.RunPending();
  EXPECT_EQ(pending.size(), 1u);
}

TEST_F(AdmissionTest, SameTokenRunsConcurrently) {
  AdmissionController controller(store_, Options());
  Establish(controller, "k", 5);
  for (int i = 0; i < 3; ++i) {
    auto decision = controller.Admit("k", 5, "r", Unexpected());
    ASSERT_TRUE(decision.has_value());
    EXPECT_EQ(decision->kind, Kind::kAdmitted);
    EXPECT_FALSE(decision->advanced);
  }
  EXPECT_EQ(controller.Inspect("k")->writes_in_flight, 3u);
  for (int i = 0; i < 3; ++i) controller.Complete("k", 5);
  EXPECT_EQ(controller.Inspect("k")->writes_in_flight, 0u);
}

TEST_F(AdmissionTest, HigherTokenWaitsForLowerWritesToComplete) {
  AdmissionController controller(store_, Options());
  Establish(controller, "k", 5);
  ASSERT_TRUE(controller.Admit("k", 5, "a", Unexpected()).has_value());
  ASSERT_TRUE(controller.Admit("k", 5, "b", Unexpected()).has_value());

  Decisions decisions;
  EXPECT_FALSE(controller.Admit("k", 6, "c", decisions.Callback()).has_value());
  store_.RunPending();
  EXPECT_EQ(decisions.size(), 0u) << "6 admitted while writes with 5 are in flight";
  EXPECT_EQ(controller.Inspect("k")->durable.highest, 6u);

  // 5 is stale now, even though 5s are still running.
  EXPECT_EQ(controller.Admit("k", 5, "d", Unexpected())->kind, Kind::kStale);

  // The clock is the subject: the decision reports how long it waited at the barrier.
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  controller.Complete("k", 5);
  EXPECT_EQ(decisions.size(), 0u);
  controller.Complete("k", 5);
  const auto received = decisions.received();
  ASSERT_EQ(received.size(), 1u);
  EXPECT_EQ(received[0].kind, Kind::kAdmitted);
  EXPECT_TRUE(received[0].advanced);
  EXPECT_GE(received[0].barrier_wait, std::chrono::milliseconds(5));
}

TEST_F(AdmissionTest, BarrierOnlyWaitNeedsNoAdvance) {
  AdmissionController controller(store_, Options());
  Establish(controller, "k", 5);
  ASSERT_TRUE(controller.Admit("k", 5, "a", Unexpected()).has_value());
  Decisions six;
  ASSERT_FALSE(controller.Admit("k", 6, "b", six.Callback()).has_value());
  store_.RunPending();
  // 6 is durable and waits for 5: another 6 joins it rather than overtaking 5.
  Decisions another;
  EXPECT_FALSE(controller.Admit("k", 6, "c", another.Callback()).has_value());
  const std::size_t advances = store_.advance_calls();
  controller.Complete("k", 5);
  ASSERT_EQ(another.size(), 1u);
  EXPECT_EQ(another.received()[0].kind, Kind::kAdmitted);
  EXPECT_EQ(six.size(), 1u);
  EXPECT_EQ(store_.advance_calls(), advances);
  EXPECT_EQ(controller.Inspect("k")->writes_in_flight, 2u);
}

TEST_F(AdmissionTest, ArrivalsDuringAdvanceShareIt) {
  AdmissionController controller(store_, Options());
  Establish(controller, "k", 5);
  const std::size_t advances_before = store_.advance_calls();
  Decisions decisions;
  constexpr int kArrivals = 10;
  for (int i = 0; i < kArrivals; ++i) {
    EXPECT_FALSE(controller.Admit("k", 8, "r" + std::to_string(i), decisions.Callback()));
  }
  EXPECT_EQ(store_.advance_calls(), advances_before + 1);
  EXPECT_EQ(controller.Inspect("k")->writes_waiting, std::uint64_t{kArrivals});
  store_.RunPending();
  const auto received = decisions.received();
  ASSERT_EQ(received.size(), std::size_t{kArrivals});
  for (const auto& decision : received) {
    EXPECT_EQ(decision.kind, Kind::kAdmitted);
    EXPECT_EQ(decision.highest, 8u);
    EXPECT_TRUE(decision.advanced);
  }
  EXPECT_EQ(controller.Inspect("k")->writes_in_flight, std::uint64_t{kArrivals});
}

TEST_F(AdmissionTest, SuccessiveAdvancesReleaseInTokenOrder) {
  AdmissionController controller(store_, Options());
  Decisions six;
  Decisions seven;
  EXPECT_FALSE(controller.Admit("k", 6, "a", six.Callback()));
  EXPECT_FALSE(controller.Admit("k", 7, "b", seven.Callback()));
  store_.RunPending();
  ASSERT_EQ(six.size(), 1u);
  EXPECT_EQ(seven.size(), 0u) << "7 overtook the write with 6";
  controller.Complete("k", 6);
  ASSERT_EQ(seven.size(), 1u);
  EXPECT_EQ(seven.received()[0].highest, 7u);
}

TEST_F(AdmissionTest, StoreFailureAdmitsNothingAndLaterAdvanceSucceeds) {
  AdmissionController controller(store_, Options());
  Establish(controller, "k", 5);
  store_.FailNextAdvances(Status::IOError("disk full"));
  Decisions decisions;
  EXPECT_FALSE(controller.Admit("k", 6, "a", decisions.Callback()));
  EXPECT_FALSE(controller.Admit("k", 6, "b", decisions.Callback()));
  store_.RunPending();
  auto received = decisions.received();
  ASSERT_EQ(received.size(), 2u);
  for (const auto& decision : received) {
    EXPECT_EQ(decision.kind, Kind::kStoreError);
    EXPECT_EQ(decision.status.code(), Status::Code::kIOError);
    EXPECT_EQ(decision.highest, 5u);
  }
  auto view = controller.Inspect("k");
  EXPECT_EQ(view->writes_in_flight, 0u);
  EXPECT_EQ(view->pending_advance, 0u);
  EXPECT_EQ(view->last_admitted_token, 5u);

  // The fence fell back to 5: 5 is not stale, and 6 may try again.
  auto five = controller.Admit("k", 5, "c", Unexpected());
  ASSERT_TRUE(five.has_value());
  EXPECT_EQ(five->kind, Kind::kAdmitted);
  controller.Complete("k", 5);

  store_.FailNextAdvances(Status::Ok());
  Decisions retry;
  EXPECT_FALSE(controller.Admit("k", 6, "d", retry.Callback()));
  store_.RunPending();
  ASSERT_EQ(retry.size(), 1u);
  EXPECT_EQ(retry.received()[0].kind, Kind::kAdmitted);
  EXPECT_EQ(controller.Inspect("k")->durable.highest, 6u);
}

TEST_F(AdmissionTest, InlineStoreDecisionIsReturnedNotCalledBack) {
  store_.SetDeferred(false);
  AdmissionController controller(store_, Options());
  auto decision = controller.Admit("k", 3, "r", Unexpected());
  ASSERT_TRUE(decision.has_value());
  EXPECT_EQ(decision->kind, Kind::kAdmitted);
  EXPECT_TRUE(decision->advanced);
  EXPECT_EQ(decision->highest, 3u);
}

TEST_F(AdmissionTest, InspectUncachedKeyReadsStore) {
  store_.SetDeferred(false);
  store_.Advance("elsewhere", 12, 77, [](Status, FenceRecord) {});
  AdmissionController controller(store_, Options());
  auto view = controller.Inspect("elsewhere");
  ASSERT_TRUE(view.has_value());
  EXPECT_FALSE(view->cached);
  EXPECT_EQ(view->durable.highest, 12u);
  EXPECT_EQ(view->durable.advanced_at_ms, 77);
  EXPECT_EQ(controller.Inspect("never"), std::nullopt);
}

TEST_F(AdmissionTest, DestroyedControllerIgnoresLateStoreCallbacks) {
  Decisions decisions;
  {
    AdmissionController controller(store_, Options());
    EXPECT_FALSE(controller.Admit("k", 4, "r", decisions.Callback()));
  }
  EXPECT_EQ(store_.RunPending(), 1u);
  EXPECT_EQ(decisions.size(), 0u);
}

TEST_F(AdmissionTest, EvictionKeepsFencesCorrect) {
  store_.SetDeferred(false);
  AdmissionOptions options = Options();
  options.max_cached_keys = 4;
  options.shards = 1;
  AdmissionController controller(store_, options);
  constexpr int kKeys = 64;
  for (int i = 0; i < kKeys; ++i) {
    const std::string key = "key" + std::to_string(i);
    auto decision = controller.Admit(key, 10 + i, "r", Unexpected());
    ASSERT_TRUE(decision.has_value());
    ASSERT_EQ(decision->kind, Kind::kAdmitted);
    controller.Complete(key, 10 + i);
  }
  int cached = 0;
  for (int i = 0; i < kKeys; ++i) {
    auto view = controller.Inspect("key" + std::to_string(i));
    ASSERT_TRUE(view.has_value());
    EXPECT_EQ(view->durable.highest, Token(10 + i));
    cached += view->cached ? 1 : 0;
  }
  EXPECT_LE(cached, 5) << "idle keys were not evicted";
  // Evicted keys come back from the store with their highest intact.
  for (int i = 0; i < kKeys; ++i) {
    const std::string key = "key" + std::to_string(i);
    auto stale = controller.Admit(key, 9 + i, "r", Unexpected());
    ASSERT_TRUE(stale.has_value());
    EXPECT_EQ(stale->kind, Kind::kStale) << key;
    EXPECT_EQ(stale->highest, Token(10 + i)) << key;
  }
}

TEST_F(AdmissionTest, BusyKeysAreNotEvicted) {
  AdmissionOptions options = Options();
  options.max_cached_keys = 2;
  options.shards = 1;
  AdmissionController controller(store_, options);
  Decisions decisions;
  for (int i = 0; i < 8; ++i) {
    EXPECT_FALSE(controller.Admit("k" + std::to_string(i), 1, "r", decisions.Callback()));
  }
  store_.RunPending();
  ASSERT_EQ(decisions.size(), 8u);
  for (int i = 0; i < 8; ++i) {
    auto view = controller.Inspect("k" + std::to_string(i));
    EXPECT_TRUE(view->cached) << "a key with a write in flight was evicted";
    EXPECT_EQ(view->writes_in_flight, 1u);
  }
}

// Many threads, few keys, random tokens: checks the admission rules from the outside.
TEST_F(AdmissionTest, ConcurrentWritersKeepTheRules) {
  // Advances complete on a store thread, as with the real store.
  std::atomic<bool> done{false};
  std::thread store_thread([&] {
    while (!done) {
      if (store_.RunPending() == 0) std::this_thread::yield();
    }
  });

  AdmissionOptions options = Options();
  options.shards = 2;
  options.max_cached_keys = 2;  // also exercise eviction under load
  AdmissionController controller(store_, options);

  constexpr int kKeys = 3;
  constexpr int kThreads = 8;
  constexpr int kIterations = 2000;
  struct KeyCheck {
    std::mutex mu;
    Token last_admitted = 0;
    std::multiset<Token> in_flight;
  };
  std::vector<KeyCheck> checks(kKeys);
  std::atomic<int> admitted{0};
  std::atomic<int> stale{0};
  std::atomic<std::uint64_t> progress{0};

  std::vector<std::thread> writers;
  for (int t = 0; t < kThreads; ++t) {
    writers.emplace_back([&, t] {
      std::mt19937 rng(t);
      for (int i = 0; i < kIterations; ++i) {
        const int k = static_cast<int>(rng() % kKeys);
        const std::string key = "key" + std::to_string(k);
        // Tokens follow shared progress so that threads collide on the same few tokens.
        const Token token = static_cast<Token>(progress++ / 32 + rng() % 3);
        std::promise<AdmissionDecision> promise;
        auto decided = controller.Admit(key, token, "r",
                                        [&](const AdmissionDecision& d) { promise.set_value(d); });
        const AdmissionDecision decision = decided ? *decided : promise.get_future().get();
        if (decision.kind == Kind::kStale) {
          EXPECT_GT(decision.highest, token);
          ++stale;
          continue;
        }
        ASSERT_EQ(decision.kind, Kind::kAdmitted);
        ASSERT_EQ(decision.highest, token);
        KeyCheck& check = checks[k];
        {
          std::lock_guard lock(check.mu);
          EXPECT_GE(token, check.last_admitted) << "admissions went backwards on " << key;
          if (!check.in_flight.empty()) {
            EXPECT_GE(*check.in_flight.begin(), token)
                << "admitted " << token << " while a lower token was in flight on " << key;
          }
          check.last_admitted = token;
          check.in_flight.insert(token);
        }
        ++admitted;
        if (rng() % 4 == 0) std::this_thread::yield();
        {
          std::lock_guard lock(check.mu);
          check.in_flight.erase(check.in_flight.find(token));
        }
        controller.Complete(key, token);
      }
    });
  }
  for (auto& writer : writers) writer.join();
  done = true;
  store_thread.join();

  EXPECT_GT(admitted.load(), kIterations) << "too few admissions to test anything";
  EXPECT_GT(stale.load(), 0);
  for (int k = 0; k < kKeys; ++k) {
    auto view = controller.Inspect("key" + std::to_string(k));
    ASSERT_TRUE(view.has_value());
    EXPECT_EQ(view->writes_in_flight, 0u);
    EXPECT_EQ(view->writes_waiting, 0u);
    EXPECT_EQ(view->durable.highest, checks[k].last_admitted);
  }
}

// A store over the network (like etcd): no local reads, and reads and advances answered later,
// to exercise writes arriving while a key loads.
class RemoteStore : public MemoryFenceStore {
 public:
  void Get(std::string_view key, GetCallback callback) override {
    pending_.push_back([this, key = std::string(key),
                        callback = std::move(callback)](const Status& status) mutable {
      if (!status.ok()) return callback(status, std::nullopt);
      MemoryFenceStore::Get(key, std::move(callback));
    });
    ++reads_;
  }
  void Advance(std::string_view key, Token token, std::int64_t now_ms,
               AdvanceCallback callback) override {
    pending_.push_back([this, key = std::string(key), token, now_ms,
                        callback = std::move(callback)](const Status& status) mutable {
      if (!status.ok()) return callback(status, FenceRecord{});
      MemoryFenceStore::Advance(key, token, now_ms, std::move(callback));
    });
    ++advances_;
  }
  std::optional<LocalRead> ReadLocal(std::string_view) override { return std::nullopt; }
  // Sets a fence directly, as if another replica had written it.
  void Seed(std::string_view key, Token token) {
    MemoryFenceStore::Advance(key, token, 1, [](Status, FenceRecord) {});
  }
  void Finish(const Status& status) {
    auto pending = std::move(pending_);
    pending_.clear();
    for (auto& operation : pending) operation(status);
  }
  std::size_t pending() const { return pending_.size(); }
  int reads_ = 0;
  int advances_ = 0;

 private:
  std::vector<std::function<void(const Status&)>> pending_;
};

TEST(AdmissionLoadTest, WritesArrivingDuringLoadAreDecidedInOrder) {
  RemoteStore store;
  store.Seed("k", 5);
  AdmissionController controller(store, AdmissionOptions{});
  Decisions decisions;
  EXPECT_FALSE(controller.Admit("k", 5, "a", decisions.Callback()));
  EXPECT_FALSE(controller.Admit("k", 4, "b", decisions.Callback()));
  EXPECT_FALSE(controller.Admit("k", 5, "c", decisions.Callback()));
  EXPECT_EQ(store.pending(), 1u) << "one load per key, however many writes wait";
  store.Finish(Status::Ok());
  const auto received = decisions.received();
  ASSERT_EQ(received.size(), 3u);
  EXPECT_EQ(received[0].kind, Kind::kAdmitted);
  EXPECT_FALSE(received[0].advanced) << "the fence was already at 5";
  EXPECT_EQ(received[1].kind, Kind::kStale);
  EXPECT_EQ(received[1].highest, 5u);
  EXPECT_EQ(received[2].kind, Kind::kAdmitted);
  EXPECT_EQ(controller.Inspect("k")->writes_in_flight, 2u);
}

// One round trip for a key's first write through a remote store: the load is the advance.
TEST(AdmissionLoadTest, FirstWriteOfAnUncachedKeyLoadsItByAdvancing) {
  RemoteStore store;
  AdmissionController controller(store, AdmissionOptions{});
  Decisions decisions;
  EXPECT_FALSE(controller.Admit("fresh", 3, "a", decisions.Callback()));
  EXPECT_FALSE(controller.Admit("fresh", 2, "b", decisions.Callback()));
  EXPECT_EQ(store.advances_, 1);
  EXPECT_EQ(store.reads_, 0) << "no read before the advance";
  store.Finish(Status::Ok());
  auto received = decisions.received();
  ASSERT_EQ(received.size(), 2u);
  EXPECT_EQ(received[0].kind, Kind::kAdmitted);
  EXPECT_TRUE(received[0].advanced) << "the load wrote token 3";
  EXPECT_EQ(received[1].kind, Kind::kStale);
  EXPECT_EQ(received[1].highest, 3u);
  EXPECT_EQ(controller.Inspect("fresh")->durable.highest, 3u);
  store.MemoryFenceStore::Get("fresh", [](Status status, std::optional<FenceRecord> record) {
    ASSERT_TRUE(status.ok());
    ASSERT_TRUE(record.has_value());
    EXPECT_EQ(record->highest, 3u);
  });
}

// The advance never lowers a fence: a zombie that finds the key uncached is refused as stale
// from what the advance found, and the fence stays where it was.
TEST(AdmissionLoadTest, LoadingAdvanceThatFindsAHigherFenceRefusesStale) {
  RemoteStore store;
  store.Seed("k", 9);
  AdmissionController controller(store, AdmissionOptions{});
  Decisions decisions;
  EXPECT_FALSE(controller.Admit("k", 5, "zombie", decisions.Callback()));
  store.Finish(Status::Ok());
  ASSERT_EQ(decisions.size(), 1u);
  EXPECT_EQ(decisions.received()[0].kind, Kind::kStale);
  EXPECT_EQ(decisions.received()[0].highest, 9u);
  EXPECT_EQ(controller.Inspect("k")->durable.highest, 9u);
}

// Token 0 must not create a record, and a bounded advance is measured against the record
// before any write: both read first.
TEST(AdmissionLoadTest, TokenZeroAndBoundedAdvancesReadBeforeWriting) {
  RemoteStore store;
  store.Seed("bounded", 5);
  AdmissionController controller(store, AdmissionOptions{});
  Decisions zero, bounded;
  EXPECT_FALSE(controller.Admit("unfenced", 0, "a", zero.Callback()));
  EXPECT_FALSE(controller.Admit("bounded", 100, "b", bounded.Callback(), Token{10}));
  EXPECT_EQ(store.reads_, 2);
  EXPECT_EQ(store.advances_, 0);
  store.Finish(Status::Ok());
  ASSERT_EQ(zero.size(), 1u);
  EXPECT_EQ(zero.received()[0].kind, Kind::kAdmitted);
  ASSERT_EQ(bounded.size(), 1u);
  EXPECT_EQ(bounded.received()[0].kind, Kind::kTooFarAhead);
  EXPECT_EQ(controller.Inspect("bounded")->durable.highest, 5u) << "nothing written";
}

TEST(AdmissionLoadTest, FailedLoadRefusesAndRetriesOnNextWrite) {
  RemoteStore store;
  AdmissionController controller(store, AdmissionOptions{});
  Decisions decisions;
  EXPECT_FALSE(controller.Admit("k", 1, "a", decisions.Callback()));
  store.Finish(Status::IOError("advance failed"));
  ASSERT_EQ(decisions.size(), 1u);
  EXPECT_EQ(decisions.received()[0].kind, Kind::kStoreError);

  Decisions retry;
  EXPECT_FALSE(controller.Admit("k", 1, "b", retry.Callback()));
  EXPECT_EQ(store.pending(), 1u);
  store.Finish(Status::Ok());
  ASSERT_EQ(retry.size(), 1u);
  EXPECT_EQ(retry.received()[0].kind, Kind::kAdmitted);
}

// A store that reads on the caller's thread (like RocksDB) and can run something between a read
// and its return: the window in which the admission core holds no mutex.
class LocalReadStore : public MemoryFenceStore {
 public:
  std::optional<LocalRead> ReadLocal(std::string_view key) override {
    ++local_reads_;
    if (fail_next_) {
      fail_next_ = false;
      return LocalRead{Status::IOError("read failed"), std::nullopt};
    }
    std::optional<LocalRead> read = MemoryFenceStore::ReadLocal(key);
    if (auto during = std::move(during_next_read_)) {
      during_next_read_ = nullptr;
      during();
    }
    return read;
  }
  void Get(std::string_view key, GetCallback callback) override {
    ++gets_;
    MemoryFenceStore::Get(key, std::move(callback));
  }
  std::function<void()> during_next_read_;
  bool fail_next_ = false;
  int local_reads_ = 0;
  int gets_ = 0;
};

TEST(AdmissionLocalReadTest, UncachedKeyIsDecidedOnTheCallersThread) {
  LocalReadStore store;
  store.Advance("k", 5, 0, [](Status, FenceRecord) {});
  AdmissionController controller(store, AdmissionOptions{});
  auto current = controller.Admit("k", 5, "a", Unexpected());
  ASSERT_TRUE(current.has_value());
  EXPECT_EQ(current->kind, Kind::kAdmitted);
  controller.Complete("k", 5);
  auto unfenced = controller.Admit("other", 0, "b", Unexpected());
  ASSERT_TRUE(unfenced.has_value());
  EXPECT_EQ(store.local_reads_, 2);
  EXPECT_EQ(store.gets_, 0) << "a store that reads locally needs no callback";
}

TEST(AdmissionLocalReadTest, FailedReadRefusesAndCachesNothing) {
  LocalReadStore store;
  store.Advance("k", 5, 0, [](Status, FenceRecord) {});
  AdmissionController controller(store, AdmissionOptions{});
  store.fail_next_ = true;
  auto failed = controller.Admit("k", 5, "a", Unexpected());
  ASSERT_TRUE(failed.has_value());
  EXPECT_EQ(failed->kind, Kind::kStoreError);
  EXPECT_FALSE(controller.Inspect("k")->cached);
  auto retried = controller.Admit("k", 4, "b", Unexpected());
  ASSERT_TRUE(retried.has_value());
  EXPECT_EQ(retried->kind, Kind::kStale);
  EXPECT_EQ(retried->highest, 5u);
}

// The read of an uncached key is made without the shard mutex. Meanwhile the key can be
// cached, advanced and evicted again by another writer: the read is then out of date, and
// trusting it would admit a token below the fence.
TEST(AdmissionLocalReadTest, AReadOverlappingAnEvictionIsNotTrusted) {
  LocalReadStore store;
  store.Advance("k", 5, 0, [](Status, FenceRecord) {});
  AdmissionOptions options;
  options.max_cached_keys = 1;
  options.shards = 1;
  AdmissionController controller(store, options);
  store.during_next_read_ = [&] {
    auto advance = controller.Admit("k", 7, "newer", Unexpected());
    ASSERT_TRUE(advance.has_value());
    ASSERT_EQ(advance->kind, Kind::kAdmitted);
    controller.Complete("k", 7);
    for (int i = 0; i < 4; ++i) {  // push "k" out of the one-key cache
      const std::string other = "other" + std::to_string(i);
      ASSERT_TRUE(controller.Admit(other, 1, "evict", Unexpected()).has_value());
      controller.Complete(other, 1);
    }
    ASSERT_FALSE(controller.Inspect("k")->cached);
    store.gets_ = 0;  // Inspect() read through Get()
  };
  // Reads highest 5 before the advance to 7, and returns after "k" was evicted.
  auto zombie = controller.Admit("k", 6, "zombie", Unexpected());
  ASSERT_TRUE(zombie.has_value());
  EXPECT_EQ(zombie->kind, Kind::kStale);
  EXPECT_EQ(zombie->highest, 7u);
  EXPECT_EQ(store.gets_, 1) << "the overlapping read was not read again";
}

}  // namespace
}  // namespace fencegate::lockstore
