#pragma once

#include <span>
#include <string>
#include <string_view>

namespace fencegate::encoding {

inline constexpr char kLowerHexDigits[] = "0123456789abcdef";
inline constexpr char kUpperHexDigits[] = "0123456789ABCDEF";

// Two lower-case hex digits per byte of `bytes`, appended to `out` or returned.
void AppendHex(std::string_view bytes, std::string* out);
std::string HexEncode(std::string_view bytes);
std::string HexEncode(std::span<const unsigned char> bytes);

// Exactly 2 * out.size() hex digits (either case) into `out`; false for any other text, with
// `out` then unspecified.
bool HexDecode(std::string_view hex, std::span<unsigned char> out);

}  // namespace fencegate::encoding
