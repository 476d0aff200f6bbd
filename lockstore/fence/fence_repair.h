#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "lockstore/status.h"
#include "lockstore/tokens/token.h"

namespace fencegate::lockstore {

// One operator repair of a fence (README "Tokens"): the only way a fence's highest token ever
// goes down, e.g. after an inflated token was admitted. Kept durably, never trimmed.
struct FenceRepairRecord {
  std::uint64_t sequence = 0;  // assigned by the store, increasing
  std::int64_t at_ms = 0;      // Unix milliseconds
  std::string fence_key;
  Token previous_highest = 0;  // filled in by the store
  Token new_highest = 0;
  std::string operator_id;  // who asked ("unknown" when the request named nobody)
  std::string reason;
};

}  // namespace fencegate::lockstore
