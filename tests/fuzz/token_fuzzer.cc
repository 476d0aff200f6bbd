// Fuzzes lockstore::ParseToken against a string-based reference of the documented grammar:
// OWS 1*DIGIT OWS with a value of at most 2^63-1. Also checks that a parsed token printed back
// parses to the same value, with or without surrounding whitespace.

#include <optional>
#include <string>
#include <string_view>

#include "lockstore/tokens/token.h"
#include "tests/fuzz/fuzz_support.h"

namespace {

using fencegate::lockstore::Token;

// Decides by comparing decimal strings, not by arithmetic, so it shares no overflow logic with
// the parser under test.
std::optional<Token> ReferenceParse(std::string_view value) {
  const auto is_ows = [](char c) { return c == ' ' || c == '\t'; };
  while (!value.empty() && is_ows(value.front())) value.remove_prefix(1);
  while (!value.empty() && is_ows(value.back())) value.remove_suffix(1);
  if (value.empty()) return std::nullopt;
  for (char c : value) {
    if (c < '0' || c > '9') return std::nullopt;
  }
  while (value.size() > 1 && value.front() == '0') value.remove_prefix(1);
  constexpr std::string_view kMax = "9223372036854775807";
  if (value.size() > kMax.size() || (value.size() == kMax.size() && value > kMax)) {
    return std::nullopt;
  }
  return std::stoull(std::string(value));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using fencegate::lockstore::kMaxToken;
  using fencegate::lockstore::ParseToken;
  const std::string_view input = fencegate::fuzz::AsText(data, size);

  const std::optional<Token> parsed = ParseToken(input);
  FUZZ_CHECK(parsed == ReferenceParse(input));
  if (parsed) {
    FUZZ_CHECK(*parsed <= kMaxToken);
    const std::string printed = std::to_string(*parsed);
    FUZZ_CHECK(ParseToken(printed) == parsed);
    FUZZ_CHECK(ParseToken(" \t" + printed + "\t ") == parsed);
    // One more digit on a value that is already above a tenth of the maximum must overflow.
    if (*parsed > kMaxToken / 10) FUZZ_CHECK(!ParseToken(printed + "0"));
  }
  return 0;
}
