#include "gateway/http/request_id.h"

#include <array>
#include <cstring>

#include "base/encoding/hex.h"

namespace fencegate::gateway {

bool IsAcceptableRequestId(std::string_view id) {
  if (id.empty() || id.size() > 128) return false;
  for (const char c : id) {
    // Visible ASCII, 0x21-0x7E, in one unsigned comparison.
    if (static_cast<unsigned char>(c - 0x21) > 0x7E - 0x21) return false;
  }
  return true;
}

// The two hex digits of every byte, low nibble first (the order the digits have always come
// in): one lookup per byte instead of one per digit, on every request without an id.
constexpr std::array<std::array<char, 2>, 256> kHexPairs = [] {
  using encoding::kLowerHexDigits;
  std::array<std::array<char, 2>, 256> table{};
  for (int byte = 0; byte < 256; ++byte) {
    table[byte] = {kLowerHexDigits[byte & 0xF], kLowerHexDigits[byte >> 4]};
  }
  return table;
}();

void RequestIdGenerator::Generate(std::string* out) {
  char digits[32];
  for (int half = 0; half < 2; ++half) {
    std::uint64_t word = random_.Next();
    for (int i = 0; i < 8; ++i) {
      std::memcpy(digits + half * 16 + i * 2, kHexPairs[word & 0xFF].data(), 2);
      word >>= 8;
    }
  }
  out->assign(digits, sizeof digits);
}

}  // namespace fencegate::gateway
