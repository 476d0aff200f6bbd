// The etcd client and EtcdFenceStore against a real etcd (Debian etcd-server 3.4) on loopback.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <future>
#include <random>
#include <thread>

#include "lockstore/etcd/etcd_client.h"
#include "lockstore/etcd/etcd_fence_store.h"
#include "tests/etcd/etcd_cluster.h"
#include "tests/lockstore/fence_listing_checks.h"
#include "tests/support/eventually.h"

namespace fencegate::lockstore::etcd {
namespace {

using etcdtest::EtcdCluster;

EtcdClientOptions ClientOptions(std::vector<std::string> endpoints) {
  EtcdClientOptions options;
  options.endpoints = std::move(endpoints);
  options.request_timeout = std::chrono::milliseconds(500);
  options.operation_timeout = std::chrono::milliseconds(2000);
  return options;
}

std::unique_ptr<EtcdFenceStore> OpenStore(std::vector<std::string> endpoints,
                                          const std::string& prefix) {
  EtcdFenceStoreOptions options;
  options.client = ClientOptions(std::move(endpoints));
  options.prefix = prefix;
  options.probe_interval = std::chrono::milliseconds(100);
  std::unique_ptr<EtcdFenceStore> store;
  EXPECT_TRUE(EtcdFenceStore::Open(options, &store).ok());
  return store;
}

std::pair<Status, FenceRecord> AdvanceSync(FenceStore& store, std::string_view key, Token token) {
  std::promise<std::pair<Status, FenceRecord>> done;
  store.Advance(key, token, 1000 + static_cast<std::int64_t>(token),
                [&done](Status status, FenceRecord record) {
                  done.set_value({std::move(status), record});
                });
  return done.get_future().get();
}

std::pair<Status, std::optional<FenceRecord>> GetSync(FenceStore& store, std::string_view key) {
  std::promise<std::pair<Status, std::optional<FenceRecord>>> done;
  store.Get(key, [&done](Status status, std::optional<FenceRecord> record) {
    done.set_value({std::move(status), record});
  });
  return done.get_future().get();
}

class EtcdSingle : public etcdtest::OneMemberEtcdTest {};

TEST(EtcdFenceEncoding, ByteOrderIsNumericOrder) {
  std::mt19937_64 random(7);
  std::vector<Token> tokens{0, 1, 9, 10, 15, 16, 255, 256, kMaxToken - 1, kMaxToken};
  for (int i = 0; i < 1000; ++i) tokens.push_back(random() & kMaxToken);
  for (Token a : tokens) {
    const Token b = tokens[(a * 31 + 7) % tokens.size()];
    EXPECT_EQ(a < b, EncodeEtcdTokenPrefix(a) < EncodeEtcdTokenPrefix(b)) << a << " " << b;
    // A stored value with the same token is never "less" than the bare prefix.
    EXPECT_FALSE(EncodeEtcdFence(a, 123) < EncodeEtcdTokenPrefix(a));
  }
  FenceRecord record;
  ASSERT_TRUE(DecodeEtcdFence(EncodeEtcdFence(kMaxToken, 1700000000000), &record));
  EXPECT_EQ(record.highest, kMaxToken);
  EXPECT_EQ(record.advanced_at_ms, 1700000000000);
  EXPECT_FALSE(DecodeEtcdFence("12", &record));
  EXPECT_FALSE(DecodeEtcdFence("zzzzzzzzzzzzzzzz:1", &record));
  EXPECT_FALSE(DecodeEtcdFence("8000000000000000:1", &record));  // above kMaxToken
}

TEST_F(EtcdSingle, ClientPutGetPrefixAndBinaryKeys) {
  EtcdClient client(ClientOptions(cluster_->endpoints()), std::make_shared<EtcdClientCounters>());
  const std::string key("/t/client/k\0\xff", 13);
  ASSERT_TRUE(client.Put(key, std::string("v\0x", 3), 0).ok());
  ASSERT_TRUE(client.Put("/t/client/other", "w", 0).ok());
  std::optional<EtcdKeyValue> kv;
  ASSERT_TRUE(client.Get(key, &kv).ok());
  ASSERT_TRUE(kv.has_value());
  EXPECT_EQ(kv->value, std::string("v\0x", 3));
  EXPECT_GT(kv->mod_revision, 0);
  ASSERT_TRUE(client.Get("/t/client/absent", &kv).ok());
  EXPECT_FALSE(kv.has_value());
  std::vector<EtcdKeyValue> kvs;
  ASSERT_TRUE(client.GetPrefix("/t/client/", &kvs).ok());
  EXPECT_EQ(kvs.size(), 2u);
  ASSERT_TRUE(client.Delete("/t/client/other").ok());
  ASSERT_TRUE(client.GetPrefix("/t/client/", &kvs).ok());
  EXPECT_EQ(kvs.size(), 1u);
}

TEST_F(EtcdSingle, TxnComparesAndReportsTheFailureBranch) {
  EtcdClient client(ClientOptions(cluster_->endpoints()), std::make_shared<EtcdClientCounters>());
  const std::string key = "/t/txn/k";
  const EtcdOp put{EtcdOp::Kind::kPut, key, "1", 0};
  const EtcdOp read{EtcdOp::Kind::kRange, key, {}, 0};
  const EtcdCompare absent{
      key, EtcdCompare::Target::kCreateRevision, EtcdCompare::Result::kEqual, {}, 0};
  EtcdTxnResult result;
  ASSERT_TRUE(client.Txn({absent}, {put}, {read}, true, &result).ok());
  EXPECT_TRUE(result.succeeded);
  ASSERT_TRUE(client.Txn({absent}, {put}, {read}, true, &result).ok());
  EXPECT_FALSE(result.succeeded);
  ASSERT_EQ(result.ranges.size(), 1u);
  EXPECT_EQ(result.ranges[0]->value, "1");
  const EtcdCompare same_mod{key,
                             EtcdCompare::Target::kModRevision,
                             EtcdCompare::Result::kEqual,
                             {},
                             result.ranges[0]->mod_revision};
  ASSERT_TRUE(
      client.Txn({same_mod}, {{EtcdOp::Kind::kPut, key, "2", 0}}, {read}, true, &result).ok());
  EXPECT_TRUE(result.succeeded);
  ASSERT_TRUE(
      client.Txn({same_mod}, {{EtcdOp::Kind::kPut, key, "3", 0}}, {read}, true, &result).ok());
  EXPECT_FALSE(result.succeeded);  // the mod revision moved
  EXPECT_EQ(result.ranges.at(0)->value, "2");
}

TEST_F(EtcdSingle, LeaseKeysVanishWithTheLease) {
  EtcdClient client(ClientOptions(cluster_->endpoints()), std::make_shared<EtcdClientCounters>());
  std::int64_t lease = 0;
  ASSERT_TRUE(client.LeaseGrant(5, &lease).ok());
  ASSERT_NE(lease, 0);
  ASSERT_TRUE(client.Put("/t/lease/k", "owned", lease).ok());
  std::int64_t ttl = 0;
  ASSERT_TRUE(client.LeaseKeepAlive(lease, &ttl).ok());
  EXPECT_GT(ttl, 0);
  EXPECT_LE(ttl, 5);
  std::optional<EtcdKeyValue> kv;
  ASSERT_TRUE(client.Get("/t/lease/k", &kv).ok());
  ASSERT_TRUE(kv.has_value());
  EXPECT_EQ(kv->lease, lease);
  ASSERT_TRUE(client.LeaseRevoke(lease).ok());
  ASSERT_TRUE(client.Get("/t/lease/k", &kv).ok());
  EXPECT_FALSE(kv.has_value());
  // A revoked lease cannot be renewed: etcd answers TTL 0 or "not found".
  const Status renewed = client.LeaseKeepAlive(lease, &ttl);
  EXPECT_TRUE(!renewed.ok() || ttl <= 0) << renewed.ToString() << " ttl " << ttl;
}

TEST_F(EtcdSingle, ClientFailsOverFromADeadEndpoint) {
  auto counters = std::make_shared<EtcdClientCounters>();
  std::vector<std::string> endpoints{"127.0.0.1:" + std::to_string(etcdtest::FreePort())};
  for (const std::string& live : cluster_->endpoints()) endpoints.push_back(live);
  EtcdClient client(ClientOptions(endpoints), counters);
  ASSERT_TRUE(client.Put("/t/failover/k", "x", 0).ok());
  EXPECT_GE(counters->failovers.load(), 1u);
  EXPECT_EQ(client.current_endpoint(), cluster_->endpoints()[0]);
}

TEST_F(EtcdSingle, AdvanceRaisesNeverLowersAndGetReadsIt) {
  auto store = OpenStore(cluster_->endpoints(), "/t/store1/");
  auto [status, record] = AdvanceSync(*store, "k", 5);
  ASSERT_TRUE(status.ok()) << status.ToString();
  EXPECT_EQ(record.highest, 5u);
  std::tie(status, record) = AdvanceSync(*store, "k", 3);
  ASSERT_TRUE(status.ok());
  EXPECT_EQ(record.highest, 5u);  // not lowered; the callback reports the higher record
  std::tie(status, record) = AdvanceSync(*store, "k", 16);  // crosses a hex digit
  EXPECT_EQ(record.highest, 16u);
  const auto [get_status, got] = GetSync(*store, "k");
  ASSERT_TRUE(get_status.ok());
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(got->highest, 16u);
  EXPECT_FALSE(GetSync(*store, "never").second.has_value());
  // One transaction per advance, the first write included: the store compares against what it
  // wrote last (create_revision 0 for the new key), and 3 only confirms the record at 5.
  EXPECT_EQ(store->stats().txn_conflicts, 0u);
  EXPECT_EQ(store->stats().advances, 2u);
  EXPECT_EQ(store->stats().advance_requests, 3u);
  EXPECT_EQ(store->stats().advance_txns, 3u);
}

// Advances from many threads, of many keys and of one hot key, share transactions: fewer
// transactions than advances, every caller gets a record at least at its token, the hot key's
// record as read back from etcd never goes down, and every key ends at its highest token.
TEST_F(EtcdSingle, ConcurrentAdvancesFoldIntoFewTransactions) {
  auto store = OpenStore(cluster_->endpoints(), "/t/fold/");
  constexpr int kThreads = 8;
  constexpr int kPerThread = 100;
  constexpr int kKeys = 40;
  std::atomic<int> failed{0};
  std::atomic<int> below{0};
  std::atomic<bool> writing{true};
  std::atomic<int> went_down{0};
  std::thread reader([&] {
    Token last = 0;
    while (writing.load()) {
      const auto [status, got] = GetSync(*store, "hot");
      if (!status.ok() || !got) continue;
      if (got->highest < last) ++went_down;
      last = got->highest;
    }
  });
  std::vector<std::thread> writers;
  for (int t = 0; t < kThreads; ++t) {
    writers.emplace_back([&, t] {
      for (int i = 0; i < kPerThread; ++i) {
        const Token token = 1 + static_cast<Token>(i * kThreads + t);
        const std::string key = i % 2 == 0 ? "hot" : "k" + std::to_string((i * 7 + t) % kKeys);
        store->Advance(key, token, 0, [&, token](Status status, FenceRecord record) {
          if (!status.ok()) ++failed;
          if (status.ok() && record.highest < token) ++below;
        });
      }
    });
  }
  for (std::thread& writer : writers) writer.join();
  ASSERT_TRUE(store->Flush().ok());
  writing = false;
  reader.join();
  EXPECT_EQ(failed.load(), 0);
  EXPECT_EQ(below.load(), 0);
  EXPECT_EQ(went_down.load(), 0);
  const EtcdFenceStore::Stats stats = store->stats();
  EXPECT_EQ(stats.advance_requests, static_cast<std::uint64_t>(kThreads * kPerThread));
  EXPECT_LT(stats.advance_txns, stats.advance_requests);
  // The hot key's highest token: the last even i of the last thread.
  EXPECT_EQ(GetSync(*store, "hot").second->highest,
            static_cast<Token>(1 + (kPerThread - 2) * kThreads + kThreads - 1));
  for (int k = 0; k < kKeys; ++k) {
    Token expected = 0;
    for (int t = 0; t < kThreads; ++t) {
      for (int i = 1; i < kPerThread; i += 2) {
        if ((i * 7 + t) % kKeys == k) expected = std::max<Token>(expected, 1 + i * kThreads + t);
      }
    }
    const auto got = GetSync(*store, "k" + std::to_string(k)).second;
    if (expected == 0) continue;
    ASSERT_TRUE(got.has_value()) << k;
    EXPECT_EQ(got->highest, expected) << k;
  }
}

// Reads from many threads share transactions too, and what they read makes the next advance of
// an existing key one transaction (its compare uses the revision read).
TEST_F(EtcdSingle, ConcurrentReadsShareTransactions) {
  auto writer = OpenStore(cluster_->endpoints(), "/t/reads/");
  for (int k = 0; k < 10; ++k)
    ASSERT_TRUE(AdvanceSync(*writer, "k" + std::to_string(k), 5).first.ok());
  auto store = OpenStore(cluster_->endpoints(), "/t/reads/");
  constexpr int kReads = 400;
  std::atomic<int> wrong{0};
  const std::uint64_t round_trips_before = store->stats().round_trips;
  std::vector<std::thread> readers;
  for (int t = 0; t < 4; ++t) {
    readers.emplace_back([&, t] {
      for (int i = 0; i < kReads / 4; ++i) {
        const int k = (i + t) % 12;  // k10 and k11 do not exist
        store->Get("k" + std::to_string(k), [&, k](Status status, std::optional<FenceRecord> got) {
          const bool right = status.ok() && (k < 10 ? got && got->highest == 5 : !got);
          if (!right) ++wrong;
        });
      }
    });
  }
  for (std::thread& reader : readers) reader.join();
  ASSERT_TRUE(store->Flush().ok());
  EXPECT_EQ(wrong.load(), 0);
  // The readiness probe's reads count too; far fewer than one round trip per read remain.
  EXPECT_LT(store->stats().round_trips - round_trips_before, static_cast<std::uint64_t>(kReads));
  const auto [status, record] = AdvanceSync(*store, "k3", 6);
  ASSERT_TRUE(status.ok()) << status.ToString();
  EXPECT_EQ(record.highest, 6u);
  EXPECT_EQ(store->stats().advance_txns, 1u);
  EXPECT_EQ(store->stats().txn_conflicts, 0u);
}

// Another writer raises a key behind the store's back: the store's compare on the revision it
// last wrote fails, the same transaction reads the key, and the store never writes below it.
TEST_F(EtcdSingle, AKeyWrittenBehindTheStoresBackIsReadAndNeverLowered) {
  auto store = OpenStore(cluster_->endpoints(), "/t/behind/");
  EtcdClient client(ClientOptions(cluster_->endpoints()), std::make_shared<EtcdClientCounters>());
  ASSERT_TRUE(AdvanceSync(*store, "k", 5).first.ok());
  ASSERT_TRUE(client.Put("/t/behind/fences/k", EncodeEtcdFence(50, 1), 0).ok());
  auto [status, record] = AdvanceSync(*store, "k", 10);
  ASSERT_TRUE(status.ok()) << status.ToString();
  EXPECT_EQ(record.highest, 50u);  // refused: the caller sees the higher record
  EXPECT_EQ(GetSync(*store, "k").second->highest, 50u);
  EXPECT_EQ(store->stats().txn_conflicts, 1u);
  EXPECT_EQ(store->stats().advance_txns, 2u);  // the failed compare read the key in its txn
  // Raised again behind its back, but below the next token: read, then written in a retry.
  ASSERT_TRUE(client.Put("/t/behind/fences/k", EncodeEtcdFence(60, 1), 0).ok());
  std::tie(status, record) = AdvanceSync(*store, "k", 70);
  ASSERT_TRUE(status.ok()) << status.ToString();
  EXPECT_EQ(record.highest, 70u);
  EXPECT_EQ(GetSync(*store, "k").second->highest, 70u);
  EXPECT_EQ(store->stats().advance_txns, 4u);
  // A key created behind the store's back fails the create_revision == 0 compare the same way.
  ASSERT_TRUE(client.Put("/t/behind/fences/new", EncodeEtcdFence(9, 1), 0).ok());
  std::tie(status, record) = AdvanceSync(*store, "new", 3);
  ASSERT_TRUE(status.ok()) << status.ToString();
  EXPECT_EQ(record.highest, 9u);
  EXPECT_EQ(GetSync(*store, "new").second->highest, 9u);
}

// More keys waiting than one transaction may carry: several transactions, each within the limit
// (etcd refuses a transaction with more than --max-txn-ops operations in a branch).
TEST_F(EtcdSingle, ABatchLargerThanTheTxnLimitIsSplit) {
  EtcdFenceStoreOptions options;
  options.client = ClientOptions(cluster_->endpoints());
  options.prefix = "/t/split/";
  options.max_txn_ops = 4;
  std::unique_ptr<EtcdFenceStore> store;
  ASSERT_TRUE(EtcdFenceStore::Open(options, &store).ok());
  constexpr int kKeys = 200;
  std::atomic<int> failed{0};
  for (int i = 0; i < kKeys; ++i) {
    store->Advance("k" + std::to_string(i), 1 + i, 0, [&](Status status, FenceRecord) {
      if (!status.ok()) ++failed;
    });
  }
  ASSERT_TRUE(store->Flush().ok());
  EXPECT_EQ(failed.load(), 0);
  EXPECT_GE(store->stats().advance_txns, static_cast<std::uint64_t>(kKeys / 4));
  for (int i = 0; i < kKeys; i += 37) {
    EXPECT_EQ(GetSync(*store, "k" + std::to_string(i)).second->highest, 1u + i);
  }
  // With etcd's default limit a batch this large still fits its transactions.
  auto defaults = OpenStore(cluster_->endpoints(), "/t/split-default/");
  for (int i = 0; i < 3 * kKeys; ++i) {
    defaults->Advance("k" + std::to_string(i), 1, 0, [&](Status status, FenceRecord) {
      if (!status.ok()) ++failed;
    });
  }
  ASSERT_TRUE(defaults->Flush().ok());
  EXPECT_EQ(failed.load(), 0);
  EXPECT_GE(defaults->stats().advance_txns, 5u);  // 600 keys, at most 128 per transaction
}

TEST_F(EtcdSingle, ListsFencesInKeyOrderByPageWithRangeLimits) {
  // Another store's fences under a neighbouring prefix stay out of this one's listing.
  auto neighbour = OpenStore(cluster_->endpoints(), "/t/listing-other/");
  ASSERT_TRUE(AdvanceSync(*neighbour, "files:/0", 1).first.ok());
  auto store = OpenStore(cluster_->endpoints(), "/t/listing/");
  listing_checks::ExpectPaginatedFenceListing(*store);
  FencePage page;
  ASSERT_TRUE(store->ListFences("", "", 2, &page).ok());
  EXPECT_EQ(page.fences.size(), 2u);
  EXPECT_TRUE(page.more);  // etcd's range answer says more keys follow
}

TEST_F(EtcdSingle, QueriesRejectionsByFilterNewestFirst) {
  auto store = OpenStore(cluster_->endpoints(), "/t/rejections/");
  listing_checks::ExpectFilteredRejectionQuery(*store);
}

TEST_F(EtcdSingle, RepairLowersOnlyDownwardsAndIsAudited) {
  auto store = OpenStore(cluster_->endpoints(), "/t/repair/");
  ASSERT_TRUE(AdvanceSync(*store, "k", 10).first.ok());
  const auto repair = [&](Token to) {
    std::promise<std::pair<Status, FenceRepairRecord>> done;
    FenceRepairRecord record;
    record.fence_key = "k";
    record.new_highest = to;
    record.operator_id = "test";
    record.reason = "inflated";
    store->Repair(record, [&done](Status status, FenceRepairRecord out) {
      done.set_value({std::move(status), std::move(out)});
    });
    return done.get_future().get();
  };
  auto [status, record] = repair(5);
  ASSERT_TRUE(status.ok()) << status.ToString();
  EXPECT_EQ(record.previous_highest, 10u);
  EXPECT_EQ(GetSync(*store, "k").second->highest, 5u);
  EXPECT_EQ(repair(7).first.code(), Status::Code::kInvalidArgument);
  FenceRepairRecord never;
  never.fence_key = "never";
  std::promise<Status> absent;
  store->Repair(never, [&absent](Status s, FenceRepairRecord) { absent.set_value(s); });
  EXPECT_EQ(absent.get_future().get().code(), Status::Code::kNotFound);
  const auto audit = store->RecentRepairs(10);
  ASSERT_EQ(audit.size(), 1u);
  EXPECT_EQ(audit[0].previous_highest, 10u);
  EXPECT_EQ(audit[0].new_highest, 5u);
  EXPECT_EQ(audit[0].sequence, record.sequence);
}

// Two stores on the same prefix are two replicas: racing advances end at the maximum, and no
// advance is told "done" with a record below its token.
TEST_F(EtcdSingle, RacingReplicasEndAtTheMaximum) {
  auto a = OpenStore(cluster_->endpoints(), "/t/race/");
  auto b = OpenStore(cluster_->endpoints(), "/t/race/");
  constexpr int kPerReplica = 200;
  std::atomic<int> below{0};
  std::atomic<int> failed{0};
  std::promise<void> done;
  std::atomic<int> left{2 * kPerReplica};
  std::mt19937 random(11);
  std::vector<Token> tokens(2 * kPerReplica);
  for (Token& token : tokens) token = 1 + random() % 1000;
  for (int i = 0; i < 2 * kPerReplica; ++i) {
    FenceStore& store = i % 2 == 0 ? static_cast<FenceStore&>(*a) : *b;
    const Token token = tokens[i];
    store.Advance("race:" + std::to_string(i % 3), token, 0,
                  [&, token](Status status, FenceRecord record) {
                    if (!status.ok()) ++failed;
                    if (status.ok() && record.highest < token) ++below;
                    if (--left == 0) done.set_value();
                  });
  }
  done.get_future().wait();
  EXPECT_EQ(failed.load(), 0);
  EXPECT_EQ(below.load(), 0);
  for (int k = 0; k < 3; ++k) {
    Token expected = 0;
    for (int i = k; i < 2 * kPerReplica; i += 3) expected = std::max(expected, tokens[i]);
    const auto got = GetSync(*a, "race:" + std::to_string(k)).second;
    ASSERT_TRUE(got.has_value());
    EXPECT_EQ(got->highest, expected) << k;
  }
}

// Without a quorum, operations fail Unavailable (the gateway answers 503) and the store says it
// is not ready; a store with a quorum is ready.
TEST(EtcdCluster3, NoQuorumFailsClosed) {
  std::string error;
  auto cluster = EtcdCluster::Start(3, &error);
  ASSERT_NE(cluster, nullptr) << error;
  auto store = OpenStore(cluster->endpoints(), "/t/quorum/");
  ASSERT_TRUE(AdvanceSync(*store, "k", 7).first.ok());
  EXPECT_TRUE(integration::Eventually([&] { return store->Ready(); }, std::chrono::seconds(5)));
  cluster->Kill(0);
  // One member down: still a quorum, through failover.
  ASSERT_TRUE(AdvanceSync(*store, "k", 8).first.ok());
  cluster->Kill(1);
  const auto [status, record] = AdvanceSync(*store, "k", 9);
  EXPECT_EQ(status.code(), Status::Code::kUnavailable) << status.ToString();
  const auto [get_status, got] = GetSync(*store, "k");
  EXPECT_EQ(get_status.code(), Status::Code::kUnavailable) << get_status.ToString();
  EXPECT_FALSE(store->Ready());
  EXPECT_GE(store->stats().failovers, 1u);
}

// etcd stops while advances are queued and in flight: each one is either committed (its record
// at least its token) or failed Unavailable, never acknowledged otherwise, and the batches in
// flight fail as a whole.
TEST(EtcdCluster1, StoppedEtcdFailsTheBatchClosed) {
  std::string error;
  auto cluster = EtcdCluster::Start(1, &error);
  ASSERT_NE(cluster, nullptr) << error;
  EtcdFenceStoreOptions options;
  options.client = ClientOptions(cluster->endpoints());
  options.client.request_timeout = std::chrono::milliseconds(200);
  options.client.operation_timeout = std::chrono::milliseconds(500);
  options.prefix = "/t/stopped/";
  std::unique_ptr<EtcdFenceStore> store;
  ASSERT_TRUE(EtcdFenceStore::Open(options, &store).ok());
  ASSERT_TRUE(AdvanceSync(*store, "k0", 1).first.ok());
  constexpr int kAdvances = 300;
  std::atomic<int> unavailable{0};
  std::atomic<int> other{0};
  std::atomic<int> below{0};
  std::atomic<int> answered{0};
  for (int i = 0; i < kAdvances; ++i) {
    const Token token = 2 + i;
    store->Advance("k" + std::to_string(i % 20), token, 0,
                   [&, token](Status status, FenceRecord record) {
                     ++answered;
                     if (status.code() == Status::Code::kUnavailable) {
                       ++unavailable;
                     } else if (!status.ok()) {
                       ++other;
                     } else if (record.highest < token) {
                       ++below;
                     }
                   });
  }
  cluster->Kill(0);
  // Queued after the kill: these batches certainly fail.
  for (int i = kAdvances; i < kAdvances + 50; ++i) {
    store->Advance("k" + std::to_string(i % 20), 2 + i, 0, [&](Status status, FenceRecord) {
      ++answered;
      if (status.code() == Status::Code::kUnavailable) ++unavailable;
      if (status.ok()) ++other;
    });
  }
  ASSERT_TRUE(store->Flush().ok());
  EXPECT_EQ(answered.load(), kAdvances + 50);
  EXPECT_EQ(other.load(), 0);
  EXPECT_EQ(below.load(), 0);
  EXPECT_GE(unavailable.load(), 50);
  EXPECT_LT(store->stats().advance_txns, store->stats().advance_requests);
  EXPECT_FALSE(store->Ready());
}

}  // namespace
}  // namespace fencegate::lockstore::etcd
