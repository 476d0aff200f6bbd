#include "lockstore/fence/key_table.h"

#include <cassert>
#include <utility>

namespace fencegate::lockstore {
namespace {

constexpr std::size_t kKeptKeyCapacity = 128;

}  // namespace

KeyTable::KeyTable() : index_(0, SlotHash{&slots_}, SlotEqual{&slots_}) {}

KeyState* KeyTable::Find(const HashedKey& key) {
  auto it = index_.find(key);
  return it == index_.end() ? nullptr : &slots_[*it].state;
}

KeyState& KeyTable::Insert(const HashedKey& key) {
  std::uint32_t slot;
  if (free_slots_.empty()) {
    slot = static_cast<std::uint32_t>(slots_.size());
    slots_.emplace_back();
  } else {
    slot = free_slots_.back();
    free_slots_.pop_back();
  }
  Slot& entry = slots_[slot];
  entry.key.assign(key.key);
  entry.hash = key.hash;
  entry.used = true;
  [[maybe_unused]] const bool inserted = index_.insert(slot).second;
  assert(inserted);
  return entry.state;
}

void KeyTable::Erase(const HashedKey& key) {
  auto it = index_.find(key);
  assert(it != index_.end());
  const std::uint32_t slot = *it;
  index_.erase(it);
  Free(slot);
}

void KeyTable::EvictIdle(std::size_t limit, std::size_t budget) {
  for (std::size_t looked = 0; looked < budget && size() > limit; ++looked) {
    if (hand_ >= slots_.size()) hand_ = 0;
    const auto slot = static_cast<std::uint32_t>(hand_++);
    if (slots_[slot].used && slots_[slot].state.Idle()) {
      index_.erase(slot);
      Free(slot);
    }
  }
}

void KeyTable::EraseIf(
    const std::function<bool(std::string_view key, const KeyState& state)>& visit) {
  for (std::size_t i = 0; i < slots_.size(); ++i) {
    const auto slot = static_cast<std::uint32_t>(i);
    if (slots_[slot].used && visit(slots_[slot].key, slots_[slot].state)) {
      index_.erase(slot);
      Free(slot);
    }
  }
}

void KeyTable::Free(std::uint32_t slot) {
  Slot& entry = slots_[slot];
  entry.used = false;
  entry.state = KeyState{};
  // Typical keys reuse their slot's buffer; an unusually long one does not keep its memory
  // after its state is gone.
  if (entry.key.capacity() > kKeptKeyCapacity) std::string().swap(entry.key);
  free_slots_.push_back(slot);
  ++erasures_;
}

}  // namespace fencegate::lockstore
