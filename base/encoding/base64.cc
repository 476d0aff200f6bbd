#include "base/encoding/base64.h"

#include <openssl/evp.h>

#include <algorithm>
#include <climits>
#include <memory>

namespace fencegate::encoding {

std::string Base64Encode(std::string_view bytes) {
  std::string out(4 * ((bytes.size() + 2) / 3), '\0');
  const int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                reinterpret_cast<const unsigned char*>(bytes.data()),
                                static_cast<int>(bytes.size()));
  out.resize(static_cast<std::size_t>(n));
  return out;
}

std::optional<std::string> Base64Decode(std::string_view text) {
  // The decoder skips blanks and line breaks (PEM); this format has none.
  const bool in_alphabet = std::all_of(text.begin(), text.end(), [](char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '+' ||
           c == '/' || c == '=';
  });
  if (!in_alphabet || text.size() % 4 != 0 || text.size() > INT_MAX) return std::nullopt;
  // EVP_DecodeBlock would read '=' inside the text as zero bits; the streaming decoder refuses
  // anything after the padding and counts the padding out of the length.
  const std::unique_ptr<EVP_ENCODE_CTX, decltype(&EVP_ENCODE_CTX_free)> context(
      EVP_ENCODE_CTX_new(), EVP_ENCODE_CTX_free);
  if (!context) return std::nullopt;
  EVP_DecodeInit(context.get());
  std::string out(3 * text.size() / 4, '\0');
  auto* const bytes = reinterpret_cast<unsigned char*>(out.data());
  int length = 0;
  if (EVP_DecodeUpdate(context.get(), bytes, &length,
                       reinterpret_cast<const unsigned char*>(text.data()),
                       static_cast<int>(text.size())) < 0) {
    return std::nullopt;
  }
  int tail = 0;
  if (EVP_DecodeFinal(context.get(), bytes + length, &tail) < 0) return std::nullopt;
  out.resize(static_cast<std::size_t>(length + tail));
  return out;
}

std::string Base64UrlEncode(std::string_view bytes) {
  std::string out = Base64Encode(bytes);
  while (!out.empty() && out.back() == '=') out.pop_back();
  std::replace(out.begin(), out.end(), '+', '-');
  std::replace(out.begin(), out.end(), '/', '_');
  return out;
}

}  // namespace fencegate::encoding
