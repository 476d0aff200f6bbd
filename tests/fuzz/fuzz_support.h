#pragma once

// Helpers shared by the libFuzzer targets in this directory.

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>
#include <vector>

// A property that must hold for every input. A failure aborts, which libFuzzer reports as a crash
// and saves the input, so a broken property is found and kept like any other bug.
#define FUZZ_CHECK(condition)                                                                 \
  do {                                                                                        \
    if (!(condition)) {                                                                       \
      std::fprintf(stderr, "%s:%d: property violated: %s\n", __FILE__, __LINE__, #condition); \
      std::abort();                                                                           \
    }                                                                                         \
  } while (false)

namespace fencegate::fuzz {

inline std::string_view AsText(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

// Splits an input into `count` fields at '\n'; the last field keeps the rest (newlines
// included), missing fields are empty. Line-based inputs keep the seed corpora readable.
inline std::vector<std::string_view> SplitFields(std::string_view input, std::size_t count) {
  std::vector<std::string_view> fields;
  while (fields.size() + 1 < count) {
    const std::size_t newline = input.find('\n');
    if (newline == std::string_view::npos) break;
    fields.push_back(input.substr(0, newline));
    input.remove_prefix(newline + 1);
  }
  fields.push_back(input);
  fields.resize(count);
  return fields;
}

}  // namespace fencegate::fuzz
