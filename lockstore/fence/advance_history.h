#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "lockstore/tokens/token.h"

namespace fencegate::lockstore {

// One durable advance of a fence, as the admin API's fence history shows it.
struct AdvanceEntry {
  std::string fence_key;
  Token token = 0;
  std::int64_t at_ms = 0;  // Unix milliseconds of the advance
  std::string request_id;  // the write that raised the fence
};

// The most recent advances of all fences since the process started, in a ring of fixed
// capacity: memory stays bounded however many keys are written, and the oldest advances fall
// out first. Fed by the admission controller once per durable advance (never per admitted
// write at an unchanged token); read by the admin listener. Thread-safe.
class AdvanceHistory {
 public:
  explicit AdvanceHistory(std::size_t capacity);

  void Record(std::string_view fence_key, Token token, std::int64_t at_ms,
              std::string_view request_id);

  // The kept advances of `fence_key`, newest first, at most `limit`.
  std::vector<AdvanceEntry> ForKey(std::string_view fence_key, std::size_t limit) const;

 private:
  mutable std::mutex mu_;
  std::vector<AdvanceEntry> ring_;  // sized to the capacity up front; slots are reused
  std::size_t next_ = 0;            // the slot the next advance goes to
  std::size_t size_ = 0;            // filled slots
};

}  // namespace fencegate::lockstore
