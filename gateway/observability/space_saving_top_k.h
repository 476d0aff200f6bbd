#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace fencegate::gateway {

// The most frequent keys of an unbounded stream in bounded memory: the Space-Saving algorithm
// (Metwally, Agrawal, El Abbadi, 2005). It keeps `capacity` counters; a key without one takes
// over the smallest, inheriting its count. Every key seen more than total/capacity times is
// kept, and a kept key's count is at most `error` above its true count. Thread-safe: Offer()
// comes from any network thread (on the refusal path only), Top() from the admin thread.
class SpaceSavingTopK {
 public:
  struct Entry {
    std::string key;
    std::uint64_t count = 0;  // an upper bound of the key's occurrences
    std::uint64_t error = 0;  // how much of `count` may belong to keys it replaced
  };

  explicit SpaceSavingTopK(std::size_t capacity);

  void Offer(std::string_view key);

  // The `n` largest counts, largest first (ties by key).
  std::vector<Entry> Top(std::size_t n) const;

 private:
  struct KeyHash {
    using is_transparent = void;
    std::size_t operator()(std::string_view key) const {
      return std::hash<std::string_view>{}(key);
    }
  };

  const std::size_t capacity_;
  mutable std::mutex mu_;
  std::vector<Entry> entries_;  // at most capacity_
  std::unordered_map<std::string, std::size_t, KeyHash, std::equal_to<>> index_;  // key -> entry
};

// The refusals' top fence keys and clients for GET /admin/summary, fed by
// Session::RecordRejection.
class RefusalTops {
 public:
  // Counters per table: enough that the top 10 are exact unless refusals spread evenly over
  // more than ~64 keys.
  static constexpr std::size_t kCounters = 64;

  // `fence_key` or `client` empty (a refusal before a key was derived): not counted there.
  void Count(std::string_view fence_key, std::string_view client) {
    if (!fence_key.empty()) fence_keys_.Offer(fence_key);
    if (!client.empty()) clients_.Offer(client);
  }
  const SpaceSavingTopK& fence_keys() const { return fence_keys_; }
  const SpaceSavingTopK& clients() const { return clients_; }

 private:
  SpaceSavingTopK fence_keys_{kCounters};
  SpaceSavingTopK clients_{kCounters};
};

}  // namespace fencegate::gateway
