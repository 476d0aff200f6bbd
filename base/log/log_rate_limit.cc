#include "base/log/log_rate_limit.h"

#include <functional>

namespace fencegate::log {

LogRateLimit::Verdict LogRateLimit::Admit(std::string_view key, std::int64_t second) {
  Slot& slot = slots_[std::hash<std::string_view>()(key) % kSlots];
  std::int64_t last = slot.second.load(std::memory_order_relaxed);
  // One thread per second wins the exchange and logs; the others count themselves.
  if (last != second && slot.second.compare_exchange_strong(last, second)) {
    return {.log = true, .suppressed = slot.suppressed.exchange(0)};
  }
  slot.suppressed.fetch_add(1, std::memory_order_relaxed);
  return {.log = false};
}

}  // namespace fencegate::log
