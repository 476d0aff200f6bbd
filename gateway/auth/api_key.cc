#include "gateway/auth/api_key.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>

#include <cctype>

namespace fencegate::gateway::auth {
namespace {

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

bool IsB64TokenChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.' || c == '_' ||
         c == '~' || c == '+' || c == '/';
}

}  // namespace

KeyDigest DigestApiKey(std::string_view key) {
  KeyDigest digest{};
  unsigned int length = 0;
  EVP_Digest(key.data(), key.size(), digest.data(), &length, EVP_sha256(), nullptr);
  return digest;
}

bool ParseKeyDigestHex(std::string_view hex, KeyDigest* out) {
  if (hex.size() != 2 * out->size()) return false;
  for (std::size_t i = 0; i < out->size(); ++i) {
    const int high = HexDigit(hex[2 * i]);
    const int low = HexDigit(hex[2 * i + 1]);
    if (high < 0 || low < 0) return false;
    (*out)[i] = static_cast<unsigned char>(high * 16 + low);
  }
  return true;
}

bool DigestsEqual(const KeyDigest& a, const KeyDigest& b) {
  return CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

std::optional<std::string_view> ParseBearer(std::string_view field) {
  constexpr std::string_view kScheme = "bearer";
  if (field.size() <= kScheme.size() || field[kScheme.size()] != ' ') return std::nullopt;
  for (std::size_t i = 0; i < kScheme.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(field[i])) != kScheme[i]) return std::nullopt;
  }
  std::string_view token = field.substr(kScheme.size());
  while (!token.empty() && token.front() == ' ') token.remove_prefix(1);
  // b64token = 1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"="
  std::size_t end = 0;
  while (end < token.size() && IsB64TokenChar(token[end])) ++end;
  if (end == 0) return std::nullopt;
  while (end < token.size() && token[end] == '=') ++end;
  if (end != token.size()) return std::nullopt;
  return token;
}

}  // namespace fencegate::gateway::auth
