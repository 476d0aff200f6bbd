#include "lockstore/locks/lock_owner.h"

#include <openssl/evp.h>
#include <openssl/rand.h>

#include <algorithm>

namespace fencegate::lockstore {
namespace {

constexpr std::size_t kOwnerTokenBytes = 16;
constexpr std::size_t kOwnerIdDigits = 12;
constexpr char kHex[] = "0123456789abcdef";

std::string Hex(const unsigned char* data, std::size_t size) {
  std::string out;
  out.reserve(size * 2);
  for (std::size_t i = 0; i < size; ++i) {
    out.push_back(kHex[data[i] >> 4]);
    out.push_back(kHex[data[i] & 0xf]);
  }
  return out;
}

}  // namespace

Status NewOwnerToken(std::string* out) {
  unsigned char bytes[kOwnerTokenBytes];
  if (RAND_bytes(bytes, sizeof bytes) != 1) {
    return Status::Unavailable("the random number generator failed");
  }
  *out = Hex(bytes, sizeof bytes);
  return Status::Ok();
}

bool IsWellFormedOwnerToken(std::string_view token) {
  return token.size() == kOwnerTokenBytes * 2 &&
         std::all_of(token.begin(), token.end(),
                     [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

std::string OwnerHash(std::string_view token) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  EVP_Digest(token.data(), token.size(), digest, &size, EVP_sha256(), nullptr);
  return Hex(digest, size);
}

std::string OwnerId(std::string_view owner_hash) {
  return std::string(owner_hash.substr(0, kOwnerIdDigits));
}

}  // namespace fencegate::lockstore
