#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string_view>

namespace fencegate::log {

// Lets one event line a second through per key (a backend's name, say) and counts the rest, so
// that a dead backend under load costs one line a second instead of one per request; the count
// goes into the next line let through. Shared by every thread without a lock: a fixed table of
// kSlots atomic slots, chosen by the key's hash. Keys that share a slot share its budget.
class LogRateLimit {
 public:
  static constexpr std::size_t kSlots = 64;

  struct Verdict {
    bool log = true;
    // When `log`: lines of this key held back since the previous one let through.
    std::uint64_t suppressed = 0;
  };
  // `second`: now, in any monotonic or wall-clock seconds.
  Verdict Admit(std::string_view key, std::int64_t second);

 private:
  struct Slot {
    std::atomic<std::int64_t> second{std::numeric_limits<std::int64_t>::min()};
    std::atomic<std::uint64_t> suppressed{0};
  };
  std::array<Slot, kSlots> slots_;
};

}  // namespace fencegate::log
