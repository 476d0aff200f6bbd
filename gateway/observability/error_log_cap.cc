#include "gateway/observability/error_log_cap.h"

#include <functional>

namespace fencegate::gateway {

ErrorLogCap::ErrorLogCap(unsigned lines_per_second)
    : lines_per_second_(lines_per_second), slots_(lines_per_second == 0 ? 0 : kSlots) {}

ErrorLogCap::Verdict ErrorLogCap::Admit(std::string_view client, std::string_view fence_key,
                                        std::int64_t second) {
  if (lines_per_second_ == 0) return {};
  const std::hash<std::string_view> hash;
  // Mixed so that (client, key) and (key, client) do not meet.
  const std::uint64_t pair = hash(client) * 0x9E3779B97F4A7C15ull ^ hash(fence_key);
  Slot& slot = slots_[pair % kSlots];
  if (slot.hash != pair) {
    slot = {.hash = pair, .second = second};
  } else if (slot.second != second) {
    slot.second = second;
    slot.logged = 0;
  }
  if (slot.logged >= lines_per_second_) {
    ++slot.suppressed;
    return {.log = false};
  }
  ++slot.logged;
  const Verdict verdict{.log = true, .suppressed = slot.suppressed};
  slot.suppressed = 0;
  return verdict;
}

}  // namespace fencegate::gateway
