#include "gateway/request_id.h"

#include <random>

namespace fencegate::gateway {

bool IsAcceptableRequestId(std::string_view id) {
  if (id.empty() || id.size() > 128) return false;
  for (const char c : id) {
    if (c < 0x21 || c > 0x7E) return false;
  }
  return true;
}

RequestIdGenerator::RequestIdGenerator() {
  std::random_device device;
  for (auto& word : state_) {
    word = (std::uint64_t{device()} << 32) | device();
  }
  if (state_[0] == 0 && state_[1] == 0) state_[0] = 1;
}

// xorshift128+: fast, full 64-bit outputs, period 2^128 - 1.
std::uint64_t RequestIdGenerator::Next() {
  std::uint64_t s1 = state_[0];
  const std::uint64_t s0 = state_[1];
  state_[0] = s0;
  s1 ^= s1 << 23;
  state_[1] = s1 ^ s0 ^ (s1 >> 18) ^ (s0 >> 5);
  return state_[1] + s0;
}

void RequestIdGenerator::Generate(std::string* out) {
  static constexpr char kHex[] = "0123456789abcdef";
  out->resize(32);
  for (int half = 0; half < 2; ++half) {
    std::uint64_t word = Next();
    for (int i = 0; i < 16; ++i) {
      (*out)[half * 16 + i] = kHex[word & 0xF];
      word >>= 4;
    }
  }
}

}  // namespace fencegate::gateway
