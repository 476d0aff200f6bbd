#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "base/net/fast_random.h"

namespace fencegate::gateway {

// True when a client-sent X-Request-Id can be passed on and logged as is: 1 to 128 visible
// ASCII characters (no spaces, no control characters, nothing that could split a log line).
bool IsAcceptableRequestId(std::string_view id);

// Generates random 128-bit request ids as 32 lower-case hex digits. Not thread-safe: one per
// network thread. Ids need to be unique, not unpredictable, so a fast PRNG seeded from
// std::random_device is enough.
class RequestIdGenerator {
 public:
  // Replaces the contents of `out` (its capacity is reused).
  void Generate(std::string* out);

 private:
  adapters::FastRandom random_;
};

}  // namespace fencegate::gateway
