#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "lockstore/fence/fence_record.h"
#include "lockstore/status.h"

namespace fencegate::lockstore {

// The on-disk encodings of the RocksDB fence store. Integers are big-endian so that RocksDB's
// bytewise comparator orders rejection sequences numerically.

// Fence value: highest (u64) then advanced_at_ms (i64): exactly 16 bytes. Returned by value,
// not as a std::string (one heap allocation per advance written on the store thread).
inline constexpr std::size_t kFenceValueSize = 16;
using EncodedFenceValue = std::array<char, kFenceValueSize>;
EncodedFenceValue EncodeFenceValue(const FenceRecord& record);
Status DecodeFenceValue(std::string_view value, FenceRecord* record);

// Rejection key: the sequence as 8 big-endian bytes.
std::string EncodeSequenceKey(std::uint64_t sequence);
Status DecodeSequenceKey(std::string_view key, std::uint64_t* sequence);

// Rejection value: a format byte, the fixed-width fields, then each string as a varint32 length
// followed by its bytes. The sequence lives in the key, not here. Format 1 has no trace id;
// format 2 appends it; format 3 appends the client address, principal and user agent after it.
// A record is written in the oldest format that holds it, so a gateway that predates those
// fields can still read it; every format decodes.
std::string EncodeRejectionValue(const RejectionRecord& record);
Status DecodeRejectionValue(std::string_view value, RejectionRecord* record);

}  // namespace fencegate::lockstore
