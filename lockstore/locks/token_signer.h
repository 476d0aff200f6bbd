#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "lockstore/locks/lock_rules.h"
#include "lockstore/tokens/token.h"

namespace fencegate::lockstore {

// One HMAC-SHA256 key of the token keyring. `id` travels in every signature (kid=...), so a
// verifier knows which key to use; the secret never leaves the gateway.
struct TokenKey {
  std::string id;      // 1 to 64 of A-Z a-z 0-9 . _ -
  std::string secret;  // at least kMinTokenSecretBytes bytes
};

// The keys that sign the built-in lock API's fencing tokens and verify them on fenced routes.
// Rotation: add the new key, make it the signing key, and drop the old one once every token it
// signed has expired (a signature lives no longer than its lease).
struct TokenKeyring {
  std::vector<TokenKey> keys;  // every key that verifies
  std::string signing_key_id;  // the one that signs new tokens; must be in `keys`
  bool empty() const { return keys.empty(); }
};

inline constexpr std::size_t kMinTokenSecretBytes = 32;
bool IsValidTokenKeyId(std::string_view id);

// The verdict on a Fencing-Token-Signature field for a presented token and fence key.
enum class SignatureCheck {
  kValid,
  kMalformed,   // not kid=..;exp=..;scope=..;mac=.. (400)
  kForged,      // unknown key id, or the MAC does not match (token, scope or expiry changed)
  kExpired,     // the lease it was issued for has ended
  kWrongScope,  // signed for a lock whose fence keys do not include this request's
};

// Signs and verifies fencing tokens. The MAC covers the scope (the lock name), the token and
// the lease expiry (Unix ms), so none of them can be changed without the key:
//   HMAC-SHA256(secret, "fencegate-token-v1\n" scope "\n" token "\n" expiry)
// The field clients send next to `Fencing-Token: N` (README "Tokens"):
//   Fencing-Token-Signature: kid=<id>;exp=<unix ms>;scope=<lock name>;mac=<base64url, no padding>
// A signature is in scope for a fence key when `rules` bind that lock name to it (locks.rules
// fence_keys), i.e. the fences a grant of that lock raises. Immutable: threads share it.
class TokenSigner {
 public:
  TokenSigner(TokenKeyring keyring, LockRules rules);

  // The field value for `token` of lock `scope`, valid until `expires_ms`.
  std::string Sign(std::string_view scope, Token token, std::int64_t expires_ms) const;

  // Checks `field_value` for `token` presented on `fence_key` at wall-clock `now_ms`.
  SignatureCheck Verify(std::string_view field_value, Token token, std::string_view fence_key,
                        std::int64_t now_ms) const;

  const std::string& signing_key_id() const { return keyring_.signing_key_id; }

 private:
  std::string Mac(const TokenKey& key, std::string_view scope, Token token,
                  std::int64_t expires_ms) const;
  const TokenKey* Find(std::string_view id) const;

  TokenKeyring keyring_;
  LockRules rules_;
};

// The header's name, for the gateway and clients.
inline constexpr std::string_view kTokenSignatureField = "Fencing-Token-Signature";

}  // namespace fencegate::lockstore
