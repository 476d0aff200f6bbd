#include "gateway/auth/api_key.h"

#include <openssl/crypto.h>

#include <cctype>

#include "base/encoding/hex.h"
#include "base/encoding/sha256.h"

namespace fencegate::gateway::auth {
namespace {

bool IsB64TokenChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.' || c == '_' ||
         c == '~' || c == '+' || c == '/';
}

}  // namespace

KeyDigest DigestApiKey(std::string_view key) { return encoding::DigestSha256(key); }

bool ParseKeyDigestHex(std::string_view hex, KeyDigest* out) {
  return encoding::HexDecode(hex, *out);
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
