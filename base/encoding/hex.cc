#include "base/encoding/hex.h"

#include <boost/url/grammar/hexdig_chars.hpp>

namespace fencegate::encoding {

void AppendHex(std::string_view bytes, std::string* out) {
  out->reserve(out->size() + 2 * bytes.size());
  for (const char c : bytes) {
    const auto byte = static_cast<unsigned char>(c);
    out->push_back(kLowerHexDigits[byte >> 4]);
    out->push_back(kLowerHexDigits[byte & 0xF]);
  }
}

std::string HexEncode(std::string_view bytes) {
  std::string out;
  AppendHex(bytes, &out);
  return out;
}

std::string HexEncode(std::span<const unsigned char> bytes) {
  return HexEncode(std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
}

bool HexDecode(std::string_view hex, std::span<unsigned char> out) {
  if (hex.size() != 2 * out.size()) return false;
  for (std::size_t i = 0; i < out.size(); ++i) {
    const int high = boost::urls::grammar::hexdig_value(hex[2 * i]);
    const int low = boost::urls::grammar::hexdig_value(hex[2 * i + 1]);
    if (high < 0 || low < 0) return false;
    out[i] = static_cast<unsigned char>(high * 16 + low);
  }
  return true;
}

}  // namespace fencegate::encoding
