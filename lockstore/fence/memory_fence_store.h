#pragma once

#include <memory>

#include "lockstore/fence/fence_store.h"

namespace fencegate::lockstore {

// A non-durable store for unit tests. Calls back inline unless deferred mode is on, in which
// case advances wait until RunPending() so tests control the interleaving.
class MemoryFenceStore : public FenceStore {
 public:
  MemoryFenceStore();
  ~MemoryFenceStore() override;

  void Get(std::string_view key, GetCallback callback) override;
  std::optional<LocalRead> ReadLocal(std::string_view key) override;
  void Advance(std::string_view key, Token token, std::int64_t now_ms,
               AdvanceCallback callback) override;
  void RecordRejection(RejectionRecord record) override;
  std::vector<RejectionRecord> RecentRejections(std::size_t limit) override;
  RejectionPage QueryRejections(const RejectionQuery& query) override;
  Status ListFences(std::string_view prefix, std::string_view after, std::size_t limit,
                    FencePage* page) override;
  void Repair(FenceRepairRecord record, RepairCallback callback) override;
  std::vector<FenceRepairRecord> RecentRepairs(std::size_t limit) override;
  Status Flush() override;
  bool Ready() const override;
  Status ReadRouteBindings(std::map<std::string, std::string>* out) override;
  Status WriteRouteBindings(const std::map<std::string, std::string>& bindings) override;
  Status HasFenceWithPrefix(std::string_view prefix, bool* found) override;

  // Test controls.
  void SetDeferred(bool deferred);       // queue advances instead of applying them
  std::size_t RunPending();              // apply queued advances; returns how many
  void FailNextAdvances(Status status);  // subsequent advances fail with `status`
  std::size_t advance_calls() const;

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace fencegate::lockstore
