#pragma once

#include <cstddef>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <boost/container/small_vector.hpp>

#include "lockstore/fence/admission.h"
#include "lockstore/fence/fence_store.h"
#include "lockstore/fence/key_state.h"
#include "lockstore/fence/key_table.h"

namespace fencegate::lockstore {

// The admission rules behind AdmissionController. Owned through a shared_ptr so that store
// callbacks, which hold a weak_ptr, never touch a destroyed controller.
//
// Locking: one mutex per shard of the key table. Store calls and waiter callbacks are collected
// as Effects while the mutex is held and run after it is released, so a store that calls back
// inline, or a callback that re-enters the controller, cannot deadlock.
class AdmissionCore : public std::enable_shared_from_this<AdmissionCore> {
 public:
  AdmissionCore(FenceStore& store, AdmissionOptions options);

  std::optional<AdmissionDecision> Admit(std::string_view key, Token token,
                                         std::string_view request_id,
                                         AdmissionController::Callback callback,
                                         std::optional<Token> max_advance);
  void Complete(std::string_view key, Token token);
  std::optional<FenceView> Inspect(std::string_view key);
  void Repair(FenceRepairRecord record, AdmissionController::RepairCallback callback);
  std::size_t ForgetIdle(const std::function<bool(std::string_view key)>& matches);

 private:
  struct Shard {
    std::mutex mu;
    KeyTable keys;
  };

  struct PendingAdvance {
    std::string_view key;  // the caller's key, alive until Run() returns
    Token token = 0;
    std::uint64_t group_id = 0;
  };

  // Work decided under a shard mutex, to run after releasing it. Most calls decide one thing:
  // inline room for it keeps the hot paths free of allocations.
  struct Effects {
    boost::container::small_vector<std::pair<std::shared_ptr<Delivery>, AdmissionDecision>, 1>
        decisions;
    boost::container::small_vector<PendingAdvance, 1> advances;
  };

  HashedKey Hash(std::string_view key) const;
  Shard& ShardFor(const HashedKey& key);

  template <typename MakeWaiter>
  std::optional<AdmissionDecision> Decide(std::string_view key, KeyState& state, Token token,
                                          std::optional<Token> max_advance,
                                          std::string_view request_id, MakeWaiter&& make_waiter,
                                          Effects& effects);
  void MarkAdmitted(KeyState& state, Token token, std::string_view request_id, std::uint64_t count);
  void ReleaseGroups(KeyState& state, Effects& effects);

  // Loads an uncached key for a write of `token`: a read, or for a store without local reads
  // an advance (see the .cc).
  void Load(std::string_view key, Token token, std::optional<Token> max_advance,
            bool reads_locally);
  // `advanced_to`: the token the load wrote for the first queued write (0: it only read).
  void OnLoaded(const std::string& key, const Status& status,
                const std::optional<FenceRecord>& record, Token advanced_to);
  void OnAdvanced(const std::string& key, std::uint64_t group_id, const Status& status,
                  const FenceRecord& record);
  void OnRepaired(const std::string& key);
  void Run(Effects& effects);

  FenceStore& store_;
  const AdmissionOptions options_;
  const std::size_t shard_count_;
  const std::size_t keys_per_shard_;
  std::unique_ptr<Shard[]> shards_;
};

}  // namespace fencegate::lockstore
