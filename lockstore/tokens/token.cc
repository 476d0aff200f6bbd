#include "lockstore/tokens/token.h"

namespace fencegate::lockstore {
namespace {

bool IsOws(char c) { return c == ' ' || c == '\t'; }

}  // namespace

std::optional<Token> ParseToken(std::string_view field_value) {
  std::size_t begin = 0;
  std::size_t end = field_value.size();
  while (begin < end && IsOws(field_value[begin])) ++begin;
  while (end > begin && IsOws(field_value[end - 1])) --end;
  if (begin == end) return std::nullopt;

  // Checked accumulation instead of strtoull: no locale, no sign or base prefixes, no errno, and
  // any byte outside '0'..'9' (including UTF-8 digits of other scripts) is refused.
  Token value = 0;
  for (std::size_t i = begin; i < end; ++i) {
    const unsigned digit = static_cast<unsigned char>(field_value[i]) - unsigned{'0'};
    if (digit > 9) return std::nullopt;
    if (value > (kMaxToken - digit) / 10) return std::nullopt;
    value = value * 10 + digit;
  }
  return value;
}

}  // namespace fencegate::lockstore
