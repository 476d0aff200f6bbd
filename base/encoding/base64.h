#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace fencegate::encoding {

// RFC 4648 section 4 (standard alphabet, '=' padding), as etcd's JSON gateway carries bytes.
std::string Base64Encode(std::string_view bytes);
// The inverse; nullopt for text that is not padded base64 (a length that is not a multiple of
// 4, a character outside the alphabet, blanks, anything after the padding).
std::optional<std::string> Base64Decode(std::string_view text);

// RFC 4648 section 5 (URL- and filename-safe alphabet), without padding: the fencing token MAC.
std::string Base64UrlEncode(std::string_view bytes);

}  // namespace fencegate::encoding
