#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "base/net/fast_random.h"

namespace fencegate::gateway {

// W3C Trace Context (https://www.w3.org/TR/trace-context/), the traceparent field:
// "00-<trace id: 32 hex>-<parent id: 16 hex>-<flags: 2 hex>", lower-case hex.
inline constexpr std::string_view kTraceparentField = "traceparent";
inline constexpr std::size_t kTraceparentSize = 55;
inline constexpr std::size_t kTraceIdSize = 32;

// The trace id of `value` when it is a traceparent to pass on, per the spec's parsing rules:
// version 00 exactly as laid out above; a later version (not ff) at least that long, with '-'
// after the flags if more follows; ids not all zero. Empty otherwise. A view into `value`.
std::string_view ParseTraceparent(std::string_view value);

// Generates traceparents that start a new trace: version 00, a random trace id and parent id,
// flags 01 (sampled: the gateway does not decide sampling, so it does not hide the trace from
// backends that would record it). Not thread-safe: one per network thread. Ids need to be
// unique, not unpredictable, so a fast PRNG seeded once from std::random_device is enough.
class TraceparentGenerator {
 public:
  void Generate(std::array<char, kTraceparentSize>* out);

 private:
  adapters::FastRandom random_;
};

// The trace of one request as the gateway handles it: the trace id for the logs, and the
// traceparent the gateway generated for the backend, if it did. Fixed-size: no allocation.
class RequestTrace {
 public:
  // `received`: the first traceparent field of the request, `count` how many it carried
  // (several make it invalid). With `generate`, a request without a valid one gets a new one.
  void Resolve(std::string_view received, std::size_t count, bool generate,
               TraceparentGenerator& generator);

  std::string_view trace_id() const { return {trace_id_.data(), trace_id_size_}; }
  // The traceparent to send upstream in place of the client's; empty: pass the request's on.
  std::string_view generated() const {
    return generated_ ? std::string_view(traceparent_.data(), traceparent_.size())
                      : std::string_view();
  }

 private:
  std::array<char, kTraceIdSize> trace_id_;
  std::size_t trace_id_size_ = 0;
  std::array<char, kTraceparentSize> traceparent_;
  bool generated_ = false;
};

}  // namespace fencegate::gateway
