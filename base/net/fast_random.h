#pragma once

#include <cstdint>
#include <random>

namespace fencegate::adapters {

// xorshift128+, seeded once from std::random_device: fast, full 64-bit outputs, period
// 2^128 - 1. For ids that must be unique, not unpredictable (request ids, trace ids). Not
// thread-safe: one per thread.
class FastRandom {
 public:
  FastRandom() {
    std::random_device device;
    for (auto& word : state_) word = (std::uint64_t{device()} << 32) | device();
    if (state_[0] == 0 && state_[1] == 0) state_[0] = 1;
  }

  std::uint64_t Next() {
    std::uint64_t s1 = state_[0];
    const std::uint64_t s0 = state_[1];
    state_[0] = s0;
    s1 ^= s1 << 23;
    state_[1] = s1 ^ s0 ^ (s1 >> 18) ^ (s0 >> 5);
    return state_[1] + s0;
  }

 private:
  std::uint64_t state_[2];
};

}  // namespace fencegate::adapters
