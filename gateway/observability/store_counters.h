#pragma once

#include <cstdint>

#include <prometheus/counter.h>
#include <prometheus/registry.h>

namespace fencegate::gateway {

// Helpers for exposing a store's own monotonic counters (read from its stats() when /metrics is
// rendered) as Prometheus counters.

inline prometheus::Counter* MakeStoreCounter(prometheus::Registry& registry, const char* name,
                                             const char* help) {
  return &prometheus::BuildCounter().Name(name).Help(help).Register(registry).Add({});
}

// Adds what the store counted since the previous read.
inline void AddStoreDelta(prometheus::Counter* counter, std::uint64_t now, std::uint64_t before) {
  if (now > before) counter->Increment(static_cast<double>(now - before));
}

}  // namespace fencegate::gateway
