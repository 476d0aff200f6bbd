#include "lockstore/fence/admission_core.h"

#include <algorithm>
#include <cassert>
#include <future>

namespace fencegate::lockstore {
namespace {

using Clock = std::chrono::steady_clock;

// Slots the eviction sweep may look at per inserted key: bounds the work of one insert while
// still freeing, on average, more than the one key the insert added.
constexpr std::size_t kEvictionScanSlots = 8;

std::int64_t SystemNowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

AdmissionDecision Admitted(Token token, bool advanced, std::chrono::nanoseconds barrier_wait) {
  AdmissionDecision decision;
  decision.kind = AdmissionDecision::Kind::kAdmitted;
  decision.highest = token;
  decision.advanced = advanced;
  decision.barrier_wait = barrier_wait;
  return decision;
}

// kStale, kRepairing, kTooFarAhead, or kStoreError with its status.
AdmissionDecision Refused(AdmissionDecision::Kind kind, Token highest, Status status = {}) {
  AdmissionDecision decision;
  decision.kind = kind;
  decision.highest = highest;
  decision.status = std::move(status);
  return decision;
}

}  // namespace

AdmissionCore::AdmissionCore(FenceStore& store, AdmissionOptions options)
    : store_(store),
      options_([&] {
        if (!options.now_ms) options.now_ms = SystemNowMs;
        return std::move(options);
      }()),
      shard_count_(std::max<std::size_t>(1, options_.shards)),
      keys_per_shard_(std::max<std::size_t>(1, options_.max_cached_keys / shard_count_)),
      shards_(std::make_unique<Shard[]>(shard_count_)) {}

HashedKey AdmissionCore::Hash(std::string_view key) const {
  return {key, std::hash<std::string_view>{}(key)};
}

AdmissionCore::Shard& AdmissionCore::ShardFor(const HashedKey& key) {
  // Fibonacci mixing: the table inside the shard buckets by the same hash, so the shard must
  // be chosen from different bits.
  const std::uint64_t mixed = static_cast<std::uint64_t>(key.hash) * 0x9E3779B97F4A7C15ull;
  return shards_[(mixed >> 32) % shard_count_];
}

std::optional<AdmissionDecision> AdmissionCore::Admit(std::string_view key, Token token,
                                                      std::string_view request_id,
                                                      AdmissionController::Callback callback,
                                                      std::optional<Token> max_advance) {
  const HashedKey hashed = Hash(key);
  Shard& shard = ShardFor(hashed);
  std::shared_ptr<Delivery> delivery;
  auto make_waiter = [&] {
    delivery = std::make_shared<Delivery>(std::move(callback));
    return Waiter{delivery, std::string(request_id), Clock::now()};
  };
  Effects effects;
  std::uint64_t erasures_before_read = 0;
  {
    std::lock_guard lock(shard.mu);
    KeyState* state = shard.keys.Find(hashed);
    if (state == nullptr) {
      erasures_before_read = shard.keys.erasures();
    } else if (state->loaded) {
      auto decision = Decide(key, *state, token, max_advance, request_id, make_waiter, effects);
      if (decision) return decision;  // the hot path: nothing allocated, nothing to run
    } else {
      state->loading.push_back({token, max_advance, make_waiter()});
    }
  }
  if (delivery) {
    Run(effects);
    return delivery->TakeEarly();
  }
  // Not cached. The read is made without the mutex (it may touch the disk); its result is
  // current unless the key's state was dropped meanwhile, which the shard's erasure count
  // reveals: a state that was never dropped cannot have advanced the fence unseen.
  std::optional<FenceStore::LocalRead> read = store_.ReadLocal(key);
  if (read && !read->status.ok()) {
    return Refused(AdmissionDecision::Kind::kStoreError, 0, std::move(read->status));
  }
  bool load = false;
  {
    std::lock_guard lock(shard.mu);
    KeyState* state = shard.keys.Find(hashed);
    const bool inserted = state == nullptr;
    if (inserted) {
      state = &shard.keys.Insert(hashed);
      if (read && shard.keys.erasures() == erasures_before_read) {
        state->loaded = true;
        if (read->record) state->durable = *read->record;
        state->target = state->durable.highest;
      } else {
        load = true;
      }
    }
    std::optional<AdmissionDecision> decision;
    if (state->loaded) {
      decision = Decide(key, *state, token, max_advance, request_id, make_waiter, effects);
    } else {
      state->loading.push_back({token, max_advance, make_waiter()});
    }
    // A refusal creates no state: a key the store has no record of is not kept as a fence at
    // 0 (the next write reads the store again, as for any key not cached).
    if (inserted && decision && decision->kind != AdmissionDecision::Kind::kAdmitted &&
        !(read && read->record) && state->Idle()) {
      shard.keys.Erase(hashed);
      return decision;
    }
    // Last: the sweep may drop the state just read if this write left it idle (refused).
    if (inserted) shard.keys.EvictIdle(keys_per_shard_, kEvictionScanSlots);
    if (decision) return decision;
  }
  if (load) Load(key, token, max_advance, /*reads_locally=*/read.has_value());
  Run(effects);
  return delivery->TakeEarly();
}

void AdmissionCore::Load(std::string_view key, Token token, std::optional<Token> max_advance,
                         bool reads_locally) {
  // A store that reads over the network (no ReadLocal) pays the same round trip for an advance
  // as for a read, and an advance answers with the record it leaves: the write that found the
  // key uncached loads it by raising the fence to its own token, which is what admitting it
  // would do next anyway. Not for token 0 (it must not create a record for a key never fenced)
  // nor for a bounded advance (the bound is measured against the record before the write); a
  // local store re-reads (its read was overtaken by an eviction) without writing.
  if (reads_locally || token == 0 || max_advance) {
    store_.Get(key, [weak = weak_from_this(), owned_key = std::string(key)](
                        Status status, std::optional<FenceRecord> record) {
      if (auto self = weak.lock()) self->OnLoaded(owned_key, status, record, 0);
    });
    return;
  }
  const std::int64_t now_ms = options_.now_ms();
  store_.Advance(key, token, now_ms,
                 [weak = weak_from_this(), owned_key = std::string(key), token, now_ms](
                     Status status, FenceRecord record) {
                   auto self = weak.lock();
                   if (!self) return;
                   // The store wrote this token, rather than finding it there, when the record
                   // carries this advance's time.
                   const bool wrote = record.highest == token && record.advanced_at_ms == now_ms;
                   self->OnLoaded(owned_key, status,
                                  status.ok() ? std::optional(record) : std::nullopt,
                                  status.ok() && wrote ? token : 0);
                 });
}

template <typename MakeWaiter>
std::optional<AdmissionDecision> AdmissionCore::Decide(std::string_view key, KeyState& state,
                                                       Token token,
                                                       std::optional<Token> max_advance,
                                                       std::string_view request_id,
                                                       MakeWaiter&& make_waiter, Effects& effects) {
  if (state.repairing) return Refused(AdmissionDecision::Kind::kRepairing, state.target);
  if (token < state.target) return Refused(AdmissionDecision::Kind::kStale, state.target);
  // Decided here, under the shard mutex, so the bound is measured against the same highest
  // the advance would raise.
  if (max_advance && token - state.target > *max_advance)
    return Refused(AdmissionDecision::Kind::kTooFarAhead, state.target);
  if (token == state.target) {
    if (state.groups.empty()) {
      assert(state.inflight_count == 0 || state.inflight_token == token);
      MarkAdmitted(state, token, request_id, 1);
      return Admitted(token, false, {});
    }
    // The newest group carries target: join it and be released with it.
    state.groups.back().waiters.push_back(make_waiter());
    return std::nullopt;
  }
  // A newer token: it becomes the highest at once (later lower tokens are stale), but its
  // writes wait until the store has made it durable.
  state.target = token;
  WaitGroup& group = state.groups.emplace_back();
  group.id = state.next_group_id++;
  group.token = token;
  group.advancing = true;
  group.waiters.push_back(make_waiter());
  ++state.advances_outstanding;
  effects.advances.push_back({key, token, group.id});
  return std::nullopt;
}

void AdmissionCore::MarkAdmitted(KeyState& state, Token token, std::string_view request_id,
                                 std::uint64_t count) {
  state.inflight_token = token;
  state.inflight_count += count;
  state.last_admitted_token = token;
  state.last_admitted_at_ms = options_.now_ms();
  state.last_admitted_request_id.assign(request_id);
}

void AdmissionCore::ReleaseGroups(KeyState& state, Effects& effects) {
  const auto now = Clock::now();
  while (!state.groups.empty()) {
    WaitGroup& head = state.groups.front();
    if (!head.durable) break;
    if (state.inflight_count > 0 && state.inflight_token < head.token) break;
    for (Waiter& waiter : head.waiters) {
      const auto waited = now - std::max(waiter.arrived, head.durable_at);
      effects.decisions.emplace_back(std::move(waiter.delivery),
                                     Admitted(head.token, head.advancing, waited));
    }
    MarkAdmitted(state, head.token, head.waiters.back().request_id, head.waiters.size());
    state.groups.erase(state.groups.begin());
  }
}

void AdmissionCore::OnLoaded(const std::string& key, const Status& status,
                             const std::optional<FenceRecord>& record, Token advanced_to) {
  const HashedKey hashed = Hash(key);
  Shard& shard = ShardFor(hashed);
  Effects effects;
  {
    std::lock_guard lock(shard.mu);
    KeyState* found = shard.keys.Find(hashed);
    assert(found != nullptr);  // a loading key is never idle, so never evicted
    KeyState& state = *found;
    std::vector<LoadingRequest> loading = std::move(state.loading);
    state.loading.clear();
    if (!status.ok()) {
      for (LoadingRequest& request : loading) {
        effects.decisions.emplace_back(std::move(request.waiter.delivery),
                                       Refused(AdmissionDecision::Kind::kStoreError, 0, status));
      }
      shard.keys.Erase(hashed);  // the next write retries the read
    } else {
      state.loaded = true;
      if (record) state.durable = *record;
      state.target = state.durable.highest;
      for (LoadingRequest& request : loading) {
        auto decision = Decide(
            key, state, request.token, request.max_advance, request.waiter.request_id,
            [&] { return std::move(request.waiter); }, effects);
        if (!decision) continue;
        // The load itself advanced the fence to this write's token (the first one queued).
        if (advanced_to != 0 && &request == &loading.front() &&
            decision->kind == AdmissionDecision::Kind::kAdmitted &&
            decision->highest == advanced_to) {
          decision->advanced = true;
          if (options_.advance_history != nullptr) {
            options_.advance_history->Record(key, advanced_to, record->advanced_at_ms,
                                             request.waiter.request_id);
          }
        }
        effects.decisions.emplace_back(std::move(request.waiter.delivery), *decision);
      }
      // Every write refused and the store has no record: no state is kept (see Admit).
      if (!record && state.Idle() && state.target == 0) {
        shard.keys.Erase(hashed);
      }
    }
  }
  Run(effects);
}

void AdmissionCore::OnAdvanced(const std::string& key, std::uint64_t group_id, const Status& status,
                               const FenceRecord& record) {
  const HashedKey hashed = Hash(key);
  Shard& shard = ShardFor(hashed);
  Effects effects;
  {
    std::lock_guard lock(shard.mu);
    KeyState* found = shard.keys.Find(hashed);
    assert(found != nullptr);  // an outstanding advance keeps the key cached
    KeyState& state = *found;
    --state.advances_outstanding;
    if (status.ok()) {
      if (record.highest > state.durable.highest) state.durable = record;
      // A durable highest covers every group at or below it, whichever advance carried it
      // (the store may fold several advances of the key into one write).
      const auto now = Clock::now();
      for (WaitGroup& group : state.groups) {
        if (group.durable || group.token > state.durable.highest) continue;
        group.durable = true;
        group.durable_at = now;
        if (options_.advance_history != nullptr && group.advancing && !group.waiters.empty()) {
          options_.advance_history->Record(key, group.token, record.advanced_at_ms,
                                           group.waiters.front().request_id);
        }
      }
      state.target = std::max(state.target, state.durable.highest);
    } else {
      auto failed = std::find_if(state.groups.begin(), state.groups.end(),
                                 [&](const WaitGroup& group) { return group.id == group_id; });
      // A group already made durable by a later advance does not care that its own failed.
      if (failed != state.groups.end() && !failed->durable) {
        auto refused = std::move(failed->waiters);
        state.groups.erase(failed);
        // Nothing was admitted at the failed token: the fence falls back to what is durable
        // or still being made durable, and a later write with that token tries afresh.
        state.target = state.durable.highest;
        for (const WaitGroup& group : state.groups) {
          state.target = std::max(state.target, group.token);
        }
        for (Waiter& waiter : refused) {
          effects.decisions.emplace_back(
              std::move(waiter.delivery),
              Refused(AdmissionDecision::Kind::kStoreError, state.target, status));
        }
      }
    }
    ReleaseGroups(state, effects);
  }
  Run(effects);
}

void AdmissionCore::Complete(std::string_view key, Token token) {
  const HashedKey hashed = Hash(key);
  Shard& shard = ShardFor(hashed);
  Effects effects;
  {
    std::lock_guard lock(shard.mu);
    KeyState* found = shard.keys.Find(hashed);
    if (found == nullptr) return;
    KeyState& state = *found;
    // A Complete() without a matching admission is a caller bug; ignoring it keeps the
    // accounting of the writes that really are in flight intact.
    if (state.inflight_count == 0 || state.inflight_token != token) return;
    if (--state.inflight_count > 0 || state.groups.empty()) return;
    ReleaseGroups(state, effects);
  }
  Run(effects);
}

std::size_t AdmissionCore::ForgetIdle(const std::function<bool(std::string_view key)>& matches) {
  std::size_t busy = 0;
  for (std::size_t i = 0; i < shard_count_; ++i) {
    Shard& shard = shards_[i];
    std::lock_guard lock(shard.mu);
    shard.keys.EraseIf([&](std::string_view key, const KeyState& state) {
      if (!matches(key)) return false;
      if (state.Idle()) return true;
      ++busy;
      return false;
    });
  }
  return busy;
}

std::optional<FenceView> AdmissionCore::Inspect(std::string_view key) {
  const HashedKey hashed = Hash(key);
  Shard& shard = ShardFor(hashed);
  {
    std::lock_guard lock(shard.mu);
    const KeyState* found = shard.keys.Find(hashed);
    if (found != nullptr && found->loaded) {
      const KeyState& state = *found;
      FenceView view;
      view.durable = state.durable;
      view.pending_advance = state.target > state.durable.highest ? state.target : 0;
      view.writes_in_flight = state.inflight_count;
      for (const WaitGroup& group : state.groups) view.writes_waiting += group.waiters.size();
      view.last_admitted_token = state.last_admitted_token;
      view.last_admitted_at_ms = state.last_admitted_at_ms;
      view.last_admitted_request_id = state.last_admitted_request_id;
      view.cached = true;
      return view;
    }
  }
  std::promise<std::optional<FenceRecord>> read;
  store_.Get(key, [&read](Status status, std::optional<FenceRecord> record) {
    read.set_value(status.ok() ? record : std::nullopt);
  });
  std::optional<FenceRecord> record = read.get_future().get();
  if (!record) return std::nullopt;
  FenceView view;
  view.durable = *record;
  return view;
}

void AdmissionCore::Repair(FenceRepairRecord record, AdmissionController::RepairCallback callback) {
  const HashedKey hashed = Hash(record.fence_key);
  Shard& shard = ShardFor(hashed);
  std::optional<RepairOutcome> busy;
  {
    std::lock_guard lock(shard.mu);
    KeyState* state = shard.keys.Find(hashed);
    if (state == nullptr) {
      // Not cached: a state that refuses writes until the repair is durable; the store itself
      // knows whether the key exists.
      state = &shard.keys.Insert(hashed);
      state->loaded = true;
    } else if (!state->Idle()) {
      busy.emplace();
      busy->kind = RepairOutcome::Kind::kBusy;
      busy->writes_in_flight = state->inflight_count;
      for (const WaitGroup& group : state->groups) busy->writes_waiting += group.waiters.size();
      busy->writes_waiting += state->loading.size();
    }
    if (!busy) state->repairing = true;
  }
  if (busy) {
    busy->record = std::move(record);
    callback(*busy);
    return;
  }
  const std::string key = record.fence_key;
  store_.Repair(std::move(record), [weak = weak_from_this(), key, callback = std::move(callback)](
                                       Status status, FenceRepairRecord stored) {
    if (auto self = weak.lock()) self->OnRepaired(key);
    RepairOutcome outcome;
    outcome.record = std::move(stored);
    outcome.status = status;
    if (status.ok()) {
      outcome.kind = RepairOutcome::Kind::kRepaired;
    } else if (status.code() == Status::Code::kNotFound) {
      outcome.kind = RepairOutcome::Kind::kNotFound;
    } else if (status.code() == Status::Code::kInvalidArgument) {
      outcome.kind = RepairOutcome::Kind::kNotLower;
    } else {
      outcome.kind = RepairOutcome::Kind::kStoreError;
    }
    callback(outcome);
  });
}

void AdmissionCore::OnRepaired(const std::string& key) {
  const HashedKey hashed = Hash(key);
  Shard& shard = ShardFor(hashed);
  std::lock_guard lock(shard.mu);
  KeyState* state = shard.keys.Find(hashed);
  if (state == nullptr) return;
  // Nothing was admitted while repairing, so the state is idle: drop it, and the next write
  // reads the store's record, repaired or not.
  state->repairing = false;
  shard.keys.Erase(hashed);
}

void AdmissionCore::Run(Effects& effects) {
  for (PendingAdvance& advance : effects.advances) {
    store_.Advance(advance.key, advance.token, options_.now_ms(),
                   [weak = weak_from_this(), key = std::string(advance.key),
                    group_id = advance.group_id](Status status, FenceRecord record) {
                     if (auto self = weak.lock()) self->OnAdvanced(key, group_id, status, record);
                   });
  }
  for (auto& [delivery, decision] : effects.decisions) delivery->Deliver(decision);
}

}  // namespace fencegate::lockstore
