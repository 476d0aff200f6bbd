#include "lockstore/codec/byte_codec.h"

namespace fencegate::lockstore {

void PutFixed64(std::string* out, std::uint64_t value) {
  for (int shift = 56; shift >= 0; shift -= 8) out->push_back(static_cast<char>(value >> shift));
}

bool GetFixed64(std::string_view* in, std::uint64_t* value) {
  if (in->size() < 8) return false;
  std::uint64_t result = 0;
  for (int i = 0; i < 8; ++i) result = (result << 8) | static_cast<unsigned char>((*in)[i]);
  in->remove_prefix(8);
  *value = result;
  return true;
}

void PutLengthPrefixed(std::string* out, std::string_view text) {
  auto length = static_cast<std::uint32_t>(text.size());
  while (length >= 0x80) {
    out->push_back(static_cast<char>((length & 0x7f) | 0x80));
    length >>= 7;
  }
  out->push_back(static_cast<char>(length));
  out->append(text);
}

bool GetLengthPrefixed(std::string_view* in, std::string* text) {
  std::uint32_t length = 0;
  for (int shift = 0;; shift += 7) {
    if (in->empty() || shift > 28) return false;
    const auto byte = static_cast<unsigned char>(in->front());
    in->remove_prefix(1);
    if ((shift > 0 && byte == 0) || (shift == 28 && byte > 0x0f)) return false;
    length |= static_cast<std::uint32_t>(byte & 0x7f) << shift;
    if ((byte & 0x80) == 0) break;
  }
  if (in->size() < length) return false;
  text->assign(in->substr(0, length));
  in->remove_prefix(length);
  return true;
}

}  // namespace fencegate::lockstore
