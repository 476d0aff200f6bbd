#include "lockstore/locks/lock_owner.h"

#include <openssl/rand.h>

#include <algorithm>

#include "base/encoding/hex.h"
#include "base/encoding/sha256.h"

namespace fencegate::lockstore {
namespace {

constexpr std::size_t kOwnerTokenBytes = 16;
constexpr std::size_t kOwnerIdDigits = 12;

}  // namespace

Status NewOwnerToken(std::string* out) {
  unsigned char bytes[kOwnerTokenBytes];
  if (RAND_bytes(bytes, sizeof bytes) != 1) {
    return Status::Unavailable("the random number generator failed");
  }
  *out = encoding::HexEncode(bytes);
  return Status::Ok();
}

bool IsWellFormedOwnerToken(std::string_view token) {
  return token.size() == kOwnerTokenBytes * 2 &&
         std::all_of(token.begin(), token.end(),
                     [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

std::string OwnerHash(std::string_view token) { return encoding::Sha256Hex(token); }

std::string OwnerId(std::string_view owner_hash) {
  return std::string(owner_hash.substr(0, kOwnerIdDigits));
}

}  // namespace fencegate::lockstore
