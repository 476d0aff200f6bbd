#include "base/encoding/json_escape.h"

#include <cstdint>

#include "base/encoding/hex.h"

namespace fencegate::gateway {
namespace {

void AppendEscapedByte(unsigned char c, std::string* out) {
  out->append("\\u00");
  out->push_back(encoding::kLowerHexDigits[c >> 4]);
  out->push_back(encoding::kLowerHexDigits[c & 0xF]);
}

// Length of the well-formed UTF-8 sequence starting at text[i], or 0 if it is not one.
std::size_t Utf8SequenceLength(std::string_view text, std::size_t i) {
  const auto lead = static_cast<unsigned char>(text[i]);
  std::size_t length = 0;
  std::uint32_t min_code = 0;
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
    min_code = 0x80;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    min_code = 0x800;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    min_code = 0x10000;
  } else {
    return 0;
  }
  if (i + length > text.size()) return 0;
  std::uint32_t code = lead & (0x3F >> (length - 1));
  for (std::size_t k = 1; k < length; ++k) {
    const auto c = static_cast<unsigned char>(text[i + k]);
    if ((c & 0xC0) != 0x80) return 0;
    code = (code << 6) | (c & 0x3F);
  }
  if (code < min_code || code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF)) return 0;
  return length;
}

}  // namespace

void AppendJsonString(std::string_view text, std::string* out) {
  out->push_back('"');
  AppendJsonEscaped(text, out);
  out->push_back('"');
}

void AppendJsonKey(std::string_view key, std::string* out) {
  if (!out->empty() && out->back() != '{') out->push_back(',');
  out->push_back('"');
  out->append(key);
  out->append("\":");
}

void AppendJsonEscaped(std::string_view text, std::string* out) {
  std::size_t i = 0;
  while (i < text.size()) {
    // Copy the longest run that needs no escaping in one append.
    std::size_t run = i;
    while (run < text.size()) {
      const auto c = static_cast<unsigned char>(text[run]);
      if (c < 0x20 || c == '"' || c == '\\' || c >= 0x80) break;
      ++run;
    }
    out->append(text.data() + i, run - i);
    i = run;
    if (i == text.size()) break;
    const auto c = static_cast<unsigned char>(text[i]);
    if (c >= 0x80) {
      const std::size_t length = Utf8SequenceLength(text, i);
      if (length == 0) {
        AppendEscapedByte(c, out);
        ++i;
      } else {
        out->append(text.data() + i, length);
        i += length;
      }
      continue;
    }
    switch (c) {
      case '"':
        out->append("\\\"");
        break;
      case '\\':
        out->append("\\\\");
        break;
      case '\n':
        out->append("\\n");
        break;
      case '\r':
        out->append("\\r");
        break;
      case '\t':
        out->append("\\t");
        break;
      default:
        AppendEscapedByte(c, out);
    }
    ++i;
  }
}

}  // namespace fencegate::gateway
