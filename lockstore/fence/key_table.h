#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include <boost/unordered/unordered_flat_set.hpp>

#include "lockstore/fence/key_state.h"

namespace fencegate::lockstore {

// A key with its hash computed once, so the shard choice and the table lookup share one hash.
struct HashedKey {
  std::string_view key;
  std::size_t hash = 0;
};

// The cached key states of one shard of the admission core.
//
// States live in slots that an eviction hand sweeps in order (a freed slot is reused at once,
// so a new key starts a whole sweep away from the hand); an open-addressing index of slot
// numbers finds them by key. Admitting a key that is not cached is the common case once there
// are more keys than the cache holds, and with a node-based hash map it cost a chain walk for
// the lookup, another for the eviction's erase, and a node freed and allocated per key: about
// ten cache misses. Here a lookup of an absent key reads one index group, and an eviction
// reads the next slot of the sweep and one index group.
//
// Not thread-safe: the admission core holds the shard's mutex. Not movable: the index's hash
// and equality read the slots through a pointer to this table.
class KeyTable {
 public:
  KeyTable();
  KeyTable(const KeyTable&) = delete;
  KeyTable& operator=(const KeyTable&) = delete;

  std::size_t size() const { return index_.size(); }

  // How many states were removed so far, for any reason. A read of the store made while the
  // mutex was released is current only if no state was removed meanwhile.
  std::uint64_t erasures() const { return erasures_; }

  // The state of `key`, or nullptr. Valid until the next Insert, Erase, EvictIdle or EraseIf.
  KeyState* Find(const HashedKey& key);

  // Adds a default state for `key`, which must not be present.
  KeyState& Insert(const HashedKey& key);

  // Removes the state of `key`, which must be present.
  void Erase(const HashedKey& key);

  // Moves the hand over at most `budget` slots, removing idle states while more than `limit`
  // are kept. Busy states (writes in flight or waiting) are passed over.
  void EvictIdle(std::size_t limit, std::size_t budget);

  // Calls `visit` for each state; removes those for which it returns true.
  void EraseIf(const std::function<bool(std::string_view key, const KeyState& state)>& visit);

 private:
  struct Slot {
    std::string key;  // keeps a short key's buffer when the slot is reused
    std::size_t hash = 0;
    bool used = false;
    KeyState state;
  };

  struct SlotHash {
    using is_transparent = void;
    const std::vector<Slot>* slots;
    std::size_t operator()(std::uint32_t slot) const { return (*slots)[slot].hash; }
    std::size_t operator()(const HashedKey& key) const { return key.hash; }
  };

  struct SlotEqual {
    using is_transparent = void;
    const std::vector<Slot>* slots;
    bool operator()(std::uint32_t a, std::uint32_t b) const {
      return (*slots)[a].key == (*slots)[b].key;
    }
    bool operator()(const HashedKey& a, std::uint32_t b) const { return a.key == (*slots)[b].key; }
    bool operator()(std::uint32_t a, const HashedKey& b) const { return (*slots)[a].key == b.key; }
  };

  void Free(std::uint32_t slot);

  std::vector<Slot> slots_;
  std::vector<std::uint32_t> free_slots_;
  std::size_t hand_ = 0;  // the next slot the eviction sweep looks at
  std::uint64_t erasures_ = 0;
  boost::unordered_flat_set<std::uint32_t, SlotHash, SlotEqual> index_;
};

}  // namespace fencegate::lockstore
