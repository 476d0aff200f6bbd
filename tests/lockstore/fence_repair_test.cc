// Operator fence repair (README "Tokens"): the only way down, refused beside writes in flight,
// audited durably in the same synced write.
#include <gtest/gtest.h>

#include <future>
#include <memory>

#include "lockstore/fence/admission.h"
#include "lockstore/fence/memory_fence_store.h"
#include "lockstore/rocksdb/rocksdb_fence_store_impl.h"
#include "tests/support/temp_dir.h"

namespace fencegate::lockstore {
namespace {

using Kind = AdmissionDecision::Kind;
using RepairKind = RepairOutcome::Kind;

AdmissionOptions Options() {
  AdmissionOptions options;
  options.now_ms = [] { return std::int64_t{1000}; };
  return options;
}

FenceRepairRecord Request(std::string key, Token highest) {
  FenceRepairRecord record;
  record.fence_key = std::move(key);
  record.new_highest = highest;
  record.operator_id = "alice";
  record.reason = "token 2^63-1 was inflated";
  record.at_ms = 5000;
  return record;
}

// Runs a repair to its outcome (the stores used here answer without a network thread).
RepairOutcome RepairSync(AdmissionController& controller, FenceRepairRecord record) {
  std::promise<RepairOutcome> done;
  controller.Repair(std::move(record), [&](const RepairOutcome& o) { done.set_value(o); });
  return done.get_future().get();
}

// Admits `token` on `key` with an inline store and returns the decision (not completed).
AdmissionDecision AdmitNow(AdmissionController& controller, std::string_view key, Token token) {
  std::promise<AdmissionDecision> done;
  auto now =
      controller.Admit(key, token, "r", [&](const AdmissionDecision& d) { done.set_value(d); });
  return now ? *now : done.get_future().get();
}

// A memory store whose repairs wait until Release(), so writes can arrive during one.
class HeldRepairStore : public MemoryFenceStore {
 public:
  void Repair(FenceRepairRecord record, RepairCallback callback) override {
    held_record_ = std::move(record);
    held_callback_ = std::move(callback);
  }
  void Release() { MemoryFenceStore::Repair(std::move(held_record_), std::move(held_callback_)); }

 private:
  FenceRepairRecord held_record_;
  RepairCallback held_callback_;
};

TEST(FenceRepairTest, LowersTheFenceAndIsAudited) {
  MemoryFenceStore store;
  AdmissionController controller(store, Options());
  ASSERT_EQ(AdmitNow(controller, "k", kMaxToken).kind, Kind::kAdmitted);  // the inflation
  controller.Complete("k", kMaxToken);
  EXPECT_EQ(AdmitNow(controller, "k", 7).kind, Kind::kStale);

  const RepairOutcome outcome = RepairSync(controller, Request("k", 6));
  ASSERT_EQ(outcome.kind, RepairKind::kRepaired) << outcome.status.ToString();
  EXPECT_EQ(outcome.record.previous_highest, kMaxToken);
  EXPECT_EQ(outcome.record.new_highest, 6u);
  EXPECT_EQ(controller.Inspect("k")->durable.highest, 6u);
  // The legitimate holder writes again; lower tokens stay stale.
  EXPECT_EQ(AdmitNow(controller, "k", 7).kind, Kind::kAdmitted);
  controller.Complete("k", 7);
  EXPECT_EQ(AdmitNow(controller, "k", 5).kind, Kind::kStale);

  const auto trail = store.RecentRepairs(10);
  ASSERT_EQ(trail.size(), 1u);
  EXPECT_EQ(trail[0].operator_id, "alice");
  EXPECT_EQ(trail[0].previous_highest, kMaxToken);
}

TEST(FenceRepairTest, RefusedWhileWritesAreInFlightOrWaiting) {
  MemoryFenceStore store;
  AdmissionController controller(store, Options());
  ASSERT_EQ(AdmitNow(controller, "k", 100).kind, Kind::kAdmitted);  // in flight
  RepairOutcome busy = RepairSync(controller, Request("k", 1));
  EXPECT_EQ(busy.kind, RepairKind::kBusy);
  EXPECT_EQ(busy.writes_in_flight, 1u);

  // A newer write waits behind it (advance barrier): still busy.
  std::optional<AdmissionDecision> waiting;
  EXPECT_FALSE(controller.Admit("k", 200, "w", [&](const AdmissionDecision& d) { waiting = d; })
                   .has_value());
  busy = RepairSync(controller, Request("k", 1));
  EXPECT_EQ(busy.kind, RepairKind::kBusy);
  EXPECT_EQ(busy.writes_waiting, 1u);
  EXPECT_EQ(store.RecentRepairs(10).size(), 0u);

  controller.Complete("k", 100);
  ASSERT_TRUE(waiting.has_value());
  controller.Complete("k", 200);
  EXPECT_EQ(RepairSync(controller, Request("k", 1)).kind, RepairKind::kRepaired);
  EXPECT_EQ(controller.Inspect("k")->durable.highest, 1u);
}

TEST(FenceRepairTest, WritesDuringTheRepairAreRefusedAndNothingIsAdmitted) {
  HeldRepairStore store;
  AdmissionController controller(store, Options());
  ASSERT_EQ(AdmitNow(controller, "k", 50).kind, Kind::kAdmitted);
  controller.Complete("k", 50);
  std::optional<RepairOutcome> outcome;
  controller.Repair(Request("k", 10), [&](const RepairOutcome& o) { outcome = o; });
  EXPECT_FALSE(outcome.has_value());
  EXPECT_EQ(AdmitNow(controller, "k", 50).kind, Kind::kRepairing);
  EXPECT_EQ(AdmitNow(controller, "k", 60).kind, Kind::kRepairing);
  EXPECT_EQ(RepairSync(controller, Request("k", 5)).kind, RepairKind::kBusy);  // one at a time
  store.Release();
  ASSERT_TRUE(outcome.has_value());
  EXPECT_EQ(outcome->kind, RepairKind::kRepaired);
  EXPECT_EQ(AdmitNow(controller, "k", 11).kind, Kind::kAdmitted);
  controller.Complete("k", 11);
  EXPECT_EQ(controller.Inspect("k")->durable.highest, 11u);
}

TEST(FenceRepairTest, OnlyLowersAndOnlyKnownKeys) {
  MemoryFenceStore store;
  AdmissionController controller(store, Options());
  EXPECT_EQ(RepairSync(controller, Request("never", 1)).kind, RepairKind::kNotFound);
  ASSERT_EQ(AdmitNow(controller, "k", 9).kind, Kind::kAdmitted);
  controller.Complete("k", 9);
  EXPECT_EQ(RepairSync(controller, Request("k", 9)).kind, RepairKind::kNotLower);
  EXPECT_EQ(RepairSync(controller, Request("k", 10)).kind, RepairKind::kNotLower);
  EXPECT_EQ(controller.Inspect("k")->durable.highest, 9u);
  // A refused repair leaves the key usable.
  EXPECT_EQ(AdmitNow(controller, "never", 3).kind, Kind::kAdmitted);
  controller.Complete("never", 3);
}

TEST(FenceRepairTest, RocksDbRepairIsDurableAndAuditedAcrossReopen) {
  integration::TempDir dir;
  RocksDbFenceStoreOptions options;
  options.path = dir.Join("db");
  options.block_cache_bytes = 1 << 20;
  for (int run = 0; run < 2; ++run) {
    std::unique_ptr<RocksDbFenceStore> store;
    ASSERT_TRUE(RocksDbFenceStore::Open(options, &store).ok());
    AdmissionController controller(*store, Options());
    const Token high = 1000 + static_cast<Token>(run);
    ASSERT_EQ(AdmitNow(controller, "k", high).kind, Kind::kAdmitted);
    controller.Complete("k", high);
    const RepairOutcome outcome = RepairSync(controller, Request("k", static_cast<Token>(run)));
    ASSERT_EQ(outcome.kind, RepairKind::kRepaired) << outcome.status.ToString();
    EXPECT_EQ(outcome.record.sequence, static_cast<std::uint64_t>(run + 1));
    EXPECT_EQ(outcome.record.previous_highest, high);
    EXPECT_EQ(RepairSync(controller, Request("k", 5000)).kind, RepairKind::kNotLower);
    EXPECT_EQ(RepairSync(controller, Request("nope", 1)).kind, RepairKind::kNotFound);
  }
  std::unique_ptr<RocksDbFenceStore> store;
  ASSERT_TRUE(RocksDbFenceStore::Open(options, &store).ok());
  AdmissionController controller(*store, Options());
  EXPECT_EQ(controller.Inspect("k")->durable.highest, 1u);
  const auto trail = store->RecentRepairs(10);
  ASSERT_EQ(trail.size(), 2u);
  EXPECT_EQ(trail[0].sequence, 2u);
  EXPECT_EQ(trail[0].previous_highest, 1001u);
  EXPECT_EQ(trail[0].new_highest, 1u);
  EXPECT_EQ(trail[0].reason, "token 2^63-1 was inflated");
  EXPECT_EQ(trail[1].sequence, 1u);
}

TEST(FenceRepairTest, RecordCodecRoundTripsAndRefusesDamage) {
  FenceRepairRecord record = Request("files:/a b", 3);
  record.previous_highest = kMaxToken;
  const std::string encoded = EncodeFenceRepairValue(record);
  FenceRepairRecord decoded;
  ASSERT_TRUE(DecodeFenceRepairValue(encoded, &decoded).ok());
  EXPECT_EQ(decoded.fence_key, record.fence_key);
  EXPECT_EQ(decoded.previous_highest, kMaxToken);
  EXPECT_EQ(decoded.new_highest, 3u);
  EXPECT_EQ(decoded.at_ms, 5000);
  EXPECT_EQ(decoded.operator_id, "alice");
  EXPECT_FALSE(DecodeFenceRepairValue(encoded.substr(0, encoded.size() - 1), &decoded).ok());
  EXPECT_FALSE(DecodeFenceRepairValue(encoded + "x", &decoded).ok());
  EXPECT_FALSE(DecodeFenceRepairValue("", &decoded).ok());
}

}  // namespace
}  // namespace fencegate::lockstore
