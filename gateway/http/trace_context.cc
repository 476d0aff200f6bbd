#include "gateway/http/trace_context.h"

#include <algorithm>
#include <array>
#include <cstring>

#include "base/encoding/hex.h"

namespace fencegate::gateway {
namespace {

// Offsets in a version-00 traceparent.
constexpr std::size_t kTraceIdAt = 3;
constexpr std::size_t kParentIdAt = 36;
constexpr std::size_t kParentIdSize = 16;
constexpr std::size_t kFlagsAt = 53;

// A table: every client traceparent is 52 hex digits.
constexpr std::array<bool, 256> kLowerHexDigit = [] {
  std::array<bool, 256> table{};
  for (int c = '0'; c <= '9'; ++c) table[c] = true;
  for (int c = 'a'; c <= 'f'; ++c) table[c] = true;
  return table;
}();

bool IsLowerHex(std::string_view text) {
  return std::all_of(text.begin(), text.end(),
                     [](char c) { return kLowerHexDigit[static_cast<unsigned char>(c)]; });
}

bool IsAllZero(std::string_view text) {
  return std::all_of(text.begin(), text.end(), [](char c) { return c == '0'; });
}

void WriteHex(std::uint64_t word, char* out) {
  for (int i = 15; i >= 0; --i) {
    out[i] = encoding::kLowerHexDigits[word & 0xF];
    word >>= 4;
  }
}

}  // namespace

std::string_view ParseTraceparent(std::string_view value) {
  if (value.size() < kTraceparentSize) return {};
  const std::string_view version = value.substr(0, 2);
  if (!IsLowerHex(version) || version == "ff") return {};
  if (version == "00" && value.size() != kTraceparentSize) return {};
  // A later version may append fields; what it shares with 00 is read the same way.
  if (value.size() > kTraceparentSize && value[kTraceparentSize] != '-') return {};
  if (value[2] != '-' || value[kParentIdAt - 1] != '-' || value[kFlagsAt - 1] != '-') return {};
  const std::string_view trace_id = value.substr(kTraceIdAt, kTraceIdSize);
  const std::string_view parent_id = value.substr(kParentIdAt, kParentIdSize);
  if (!IsLowerHex(trace_id) || !IsLowerHex(parent_id) || !IsLowerHex(value.substr(kFlagsAt, 2))) {
    return {};
  }
  if (IsAllZero(trace_id) || IsAllZero(parent_id)) return {};
  return trace_id;
}

void TraceparentGenerator::Generate(std::array<char, kTraceparentSize>* out) {
  char* text = out->data();
  std::memcpy(text, "00-", 3);
  // An all-zero id is invalid; xorshift128+ can return 0, so draw again (practically never).
  std::uint64_t high = 0;
  std::uint64_t low = 0;
  while (high == 0 && low == 0) {
    high = random_.Next();
    low = random_.Next();
  }
  WriteHex(high, text + kTraceIdAt);
  WriteHex(low, text + kTraceIdAt + 16);
  text[kParentIdAt - 1] = '-';
  std::uint64_t parent = 0;
  while (parent == 0) parent = random_.Next();
  WriteHex(parent, text + kParentIdAt);
  std::memcpy(text + kFlagsAt - 1, "-01", 3);
}

void RequestTrace::Resolve(std::string_view received, std::size_t count, bool generate,
                           TraceparentGenerator& generator) {
  generated_ = false;
  trace_id_size_ = 0;
  // Several traceparent fields cannot be told apart: the spec treats that as invalid.
  const std::string_view trace_id = count == 1 ? ParseTraceparent(received) : std::string_view();
  if (!trace_id.empty()) {
    std::memcpy(trace_id_.data(), trace_id.data(), kTraceIdSize);
    trace_id_size_ = kTraceIdSize;
    return;
  }
  if (!generate) return;
  generator.Generate(&traceparent_);
  generated_ = true;
  std::memcpy(trace_id_.data(), traceparent_.data() + kTraceIdAt, kTraceIdSize);
  trace_id_size_ = kTraceIdSize;
}

}  // namespace fencegate::gateway
