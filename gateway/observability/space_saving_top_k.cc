#include "gateway/observability/space_saving_top_k.h"

#include <algorithm>

namespace fencegate::gateway {

SpaceSavingTopK::SpaceSavingTopK(std::size_t capacity)
    : capacity_(std::max<std::size_t>(capacity, 1)) {
  entries_.reserve(capacity_);
  index_.reserve(capacity_);
}

void SpaceSavingTopK::Offer(std::string_view key) {
  std::lock_guard lock(mu_);
  if (auto it = index_.find(key); it != index_.end()) {
    ++entries_[it->second].count;
    return;
  }
  if (entries_.size() < capacity_) {
    index_.emplace(std::string(key), entries_.size());
    entries_.push_back({std::string(key), 1, 0});
    return;
  }
  // A linear scan over a few dozen counters: cheaper than keeping them ordered on every Offer.
  const auto smallest =
      std::min_element(entries_.begin(), entries_.end(),
                       [](const Entry& a, const Entry& b) { return a.count < b.count; });
  const std::size_t slot = static_cast<std::size_t>(smallest - entries_.begin());
  index_.erase(smallest->key);
  smallest->key.assign(key);
  smallest->error = smallest->count;
  ++smallest->count;
  index_.emplace(smallest->key, slot);
}

std::vector<SpaceSavingTopK::Entry> SpaceSavingTopK::Top(std::size_t n) const {
  std::vector<Entry> out;
  {
    std::lock_guard lock(mu_);
    out = entries_;
  }
  const auto larger = [](const Entry& a, const Entry& b) {
    return a.count != b.count ? a.count > b.count : a.key < b.key;
  };
  const std::size_t kept = std::min(n, out.size());
  std::partial_sort(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(kept), out.end(),
                    larger);
  out.resize(kept);
  return out;
}

}  // namespace fencegate::gateway
