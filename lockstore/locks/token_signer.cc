#include "lockstore/locks/token_signer.h"

#include <openssl/crypto.h>

#include <algorithm>
#include <array>
#include <optional>

#include "base/encoding/base64.h"
#include "base/encoding/sha256.h"

namespace fencegate::lockstore {
namespace {

constexpr std::string_view kMacContext = "fencegate-token-v1\n";
constexpr std::size_t kMacChars = 43;  // base64url of 32 bytes, no padding

// The MAC as Sign writes it: exactly kMacChars of the base64url alphabet. Anything else is a
// malformed field (400), not a MAC that fails to verify (403).
bool IsMacText(std::string_view text) {
  return text.size() == kMacChars && std::all_of(text.begin(), text.end(), [](char c) {
           return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                  c == '-' || c == '_';
         });
}

std::string_view TrimOws(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  return text;
}

// A positive decimal that fits int64; no sign, no spaces.
std::optional<std::int64_t> ParseMillis(std::string_view text) {
  if (text.empty() || text.size() > 18) return std::nullopt;  // 18 digits: far past year 9999
  std::int64_t value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    value = value * 10 + (c - '0');
  }
  return value;
}

struct Fields {
  std::string_view kid, exp, scope, mac;
};

// kid=..;exp=..;scope=..;mac=.. in any order, each exactly once, nothing else.
bool ParseFields(std::string_view value, Fields* out) {
  std::array<bool, 4> seen{};
  while (true) {
    const auto semi = value.find(';');
    const std::string_view part = TrimOws(value.substr(0, semi));
    const auto eq = part.find('=');
    if (eq == std::string_view::npos) return false;
    const std::string_view name = part.substr(0, eq);
    const std::string_view text = part.substr(eq + 1);
    std::size_t slot = 0;
    std::string_view* target = nullptr;
    if (name == "kid") {
      slot = 0, target = &out->kid;
    } else if (name == "exp") {
      slot = 1, target = &out->exp;
    } else if (name == "scope") {
      slot = 2, target = &out->scope;
    } else if (name == "mac") {
      slot = 3, target = &out->mac;
    } else {
      return false;
    }
    if (seen[slot]) return false;
    seen[slot] = true;
    *target = text;
    if (semi == std::string_view::npos) break;
    value.remove_prefix(semi + 1);
  }
  return std::all_of(seen.begin(), seen.end(), [](bool b) { return b; });
}

}  // namespace

bool IsValidTokenKeyId(std::string_view id) {
  if (id.empty() || id.size() > 64) return false;
  return std::all_of(id.begin(), id.end(), [](char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' ||
           c == '_' || c == '-';
  });
}

TokenSigner::TokenSigner(TokenKeyring keyring, LockRules rules)
    : keyring_(std::move(keyring)), rules_(std::move(rules)) {}

const TokenKey* TokenSigner::Find(std::string_view id) const {
  for (const TokenKey& key : keyring_.keys) {
    if (key.id == id) return &key;
  }
  return nullptr;
}

std::string TokenSigner::Mac(const TokenKey& key, std::string_view scope, Token token,
                             std::int64_t expires_ms) const {
  std::string message(kMacContext);
  message.append(scope);
  message += '\n';
  message += std::to_string(token);
  message += '\n';
  message += std::to_string(expires_ms);
  return encoding::Base64UrlEncode(encoding::HmacSha256(key.secret, message));
}

std::string TokenSigner::Sign(std::string_view scope, Token token, std::int64_t expires_ms) const {
  const TokenKey* key = Find(keyring_.signing_key_id);
  if (key == nullptr) return {};  // the config loader refuses a keyring like that
  return "kid=" + key->id + ";exp=" + std::to_string(expires_ms) + ";scope=" + std::string(scope) +
         ";mac=" + Mac(*key, scope, token, expires_ms);
}

SignatureCheck TokenSigner::Verify(std::string_view field_value, Token token,
                                   std::string_view fence_key, std::int64_t now_ms) const {
  Fields fields;
  if (!ParseFields(field_value, &fields)) return SignatureCheck::kMalformed;
  const auto expires_ms = ParseMillis(fields.exp);
  if (!expires_ms || !IsValidLockName(fields.scope) || !IsValidTokenKeyId(fields.kid) ||
      !IsMacText(fields.mac)) {
    return SignatureCheck::kMalformed;
  }
  const TokenKey* key = Find(fields.kid);
  if (key == nullptr) return SignatureCheck::kForged;  // never issued by us, or key retired
  const std::string expected = Mac(*key, fields.scope, token, *expires_ms);
  // Constant time: a client must not learn the MAC byte by byte from response timing.
  if (CRYPTO_memcmp(expected.data(), fields.mac.data(), kMacChars) != 0) {
    return SignatureCheck::kForged;
  }
  if (*expires_ms <= now_ms) return SignatureCheck::kExpired;
  const LockPolicy policy = rules_.Resolve(fields.scope);
  if (std::find(policy.fence_keys.begin(), policy.fence_keys.end(), fence_key) ==
      policy.fence_keys.end()) {
    return SignatureCheck::kWrongScope;
  }
  return SignatureCheck::kValid;
}

}  // namespace fencegate::lockstore
