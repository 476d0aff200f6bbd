// Fuzzes the Fencing-Token-Signature parser (lockstore::TokenSigner::Verify, README "Tokens").
// Input lines: the field value, then a lock name and an expiry used for a sign-and-verify round
// trip. Checks that Verify calls a value malformed exactly when a string-based reference of the
// documented grammar does (kid=ID;exp=UNIX_MS;scope=LOCK;mac=43 chars, any order, each once,
// OWS around each part), that nothing but a signature made with the key passes, and that a
// signature this signer made verifies for its own token and fence key and for nothing else.

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "lockstore/locks/lock_rules.h"
#include "lockstore/locks/token_signer.h"
#include "tests/fuzz/fuzz_support.h"

namespace {

using fencegate::lockstore::LockRule;
using fencegate::lockstore::LockRules;
using fencegate::lockstore::SignatureCheck;
using fencegate::lockstore::Token;
using fencegate::lockstore::TokenKeyring;
using fencegate::lockstore::TokenSigner;

constexpr std::int64_t kNowMs = 1'800'000'000'000;
constexpr Token kToken = 42;

const TokenSigner& Signer() {
  // Every lock guards the fence key "kv:<name>" (the rule the README's example uses).
  static const TokenSigner signer(
      TokenKeyring{{{"k1", std::string(32, 's')}, {"k2", std::string(40, 't')}}, "k1"},
      LockRules({LockRule{"*", {"kv:{name}"}, {}}}));
  return signer;
}

std::string_view Trim(std::string_view text) {
  const auto first = text.find_first_not_of(" \t");
  if (first == std::string_view::npos) return {};
  return text.substr(first, text.find_last_not_of(" \t") - first + 1);
}

bool AllOf(std::string_view text, std::string_view allowed) {
  for (char c : text) {
    const bool alnum = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
    if (!alnum && allowed.find(c) == std::string_view::npos) return false;
  }
  return true;
}

// Whether `value` is well formed, decided by splitting strings, not by the parser under test.
bool ReferenceWellFormed(std::string_view value) {
  std::vector<std::string> parts;
  std::string current;
  for (char c : value) {
    if (c == ';') {
      parts.push_back(current);
      current.clear();
    } else {
      current += c;
    }
  }
  parts.push_back(current);
  const std::array<std::string_view, 4> names = {"kid", "exp", "scope", "mac"};
  std::array<std::string, 4> values;
  std::array<int, 4> seen{};
  for (const std::string& part : parts) {
    const std::string_view trimmed = Trim(part);
    const auto eq = trimmed.find('=');
    if (eq == std::string_view::npos) return false;
    bool known = false;
    for (std::size_t i = 0; i < names.size(); ++i) {
      if (trimmed.substr(0, eq) == names[i]) {
        known = true;
        ++seen[i];
        values[i] = std::string(trimmed.substr(eq + 1));
      }
    }
    if (!known) return false;
  }
  for (int count : seen) {
    if (count != 1) return false;
  }
  const std::string& kid = values[0];
  const std::string& exp = values[1];
  const std::string& scope = values[2];
  return !kid.empty() && kid.size() <= 64 && AllOf(kid, "._-") && !exp.empty() &&
         exp.size() <= 18 && AllOf(exp, "") &&
         exp.find_first_not_of("0123456789") == std::string::npos && !scope.empty() &&
         scope.size() <= 128 && AllOf(scope, "._:-") && values[3].size() == 43 &&
         AllOf(values[3], "-_");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto fields = fencegate::fuzz::SplitFields(fencegate::fuzz::AsText(data, size), 3);
  const std::string_view value = fields[0];
  const TokenSigner& signer = Signer();

  const SignatureCheck check = signer.Verify(value, kToken, "kv:orders", kNowMs);
  FUZZ_CHECK((check == SignatureCheck::kMalformed) == !ReferenceWellFormed(value));
  // Passing needs the MAC of the key; the fuzzer cannot find one by chance.
  if (check != SignatureCheck::kMalformed && check != SignatureCheck::kForged) {
    FUZZ_CHECK(value.find("kid=k1") != std::string_view::npos ||
               value.find("kid=k2") != std::string_view::npos);
  }

  // Round trip: what the signer issues parses, verifies for its own token and fence key, and
  // for nothing else.
  const std::string_view scope = fields[1];
  std::int64_t expires = 0;
  for (char c : fields[2].substr(0, 15)) {
    if (c >= '0' && c <= '9') expires = expires * 10 + (c - '0');
  }
  if (!fencegate::lockstore::IsValidLockName(scope) || expires == 0) return 0;
  const std::string signature = signer.Sign(scope, kToken, expires);
  FUZZ_CHECK(ReferenceWellFormed(signature));
  const std::string fence_key = "kv:" + std::string(scope);
  const SignatureCheck own = signer.Verify(signature, kToken, fence_key, kNowMs);
  FUZZ_CHECK(own == (expires > kNowMs ? SignatureCheck::kValid : SignatureCheck::kExpired));
  FUZZ_CHECK(signer.Verify(signature, kToken + 1, fence_key, kNowMs) == SignatureCheck::kForged);
  if (expires > kNowMs) {
    FUZZ_CHECK(signer.Verify(signature, kToken, fence_key + "x", kNowMs) ==
               SignatureCheck::kWrongScope);
  }
  // OWS around the parts and another order of them change nothing.
  const auto mac = signature.rfind(";mac=");
  const std::string reordered =
      " " + signature.substr(mac + 1) + " ;\t" + signature.substr(0, mac) + "\t";
  FUZZ_CHECK(signer.Verify(reordered, kToken, fence_key, kNowMs) == own);
  return 0;
}
