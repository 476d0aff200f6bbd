#pragma once

#include <cstdint>
#include <string>
#include <string_view>

// The two encodings every stored record is made of: fixed-width big-endian integers (so that keys
// sort numerically) and strings prefixed by their length as a varint32. Shared by the fence,
// lock and idempotency record codecs so that all of them refuse the same malformed input.
namespace fencegate::lockstore {

void PutFixed64(std::string* out, std::uint64_t value);

// Consumes 8 bytes from the front of `in`; false when fewer remain.
bool GetFixed64(std::string_view* in, std::uint64_t* value);

void PutLengthPrefixed(std::string* out, std::string_view text);

// Consumes a length-prefixed string from the front of `in`. False on a truncated string or a
// length that is not in its one shortest form (overlong varints would let two encodings stand
// for one record).
[[nodiscard]] bool GetLengthPrefixed(std::string_view* in, std::string* text);

}  // namespace fencegate::lockstore
