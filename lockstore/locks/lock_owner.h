#pragma once

#include <string>
#include <string_view>

#include "lockstore/status.h"

namespace fencegate::lockstore {

// Owner tokens: 128 random bits from OpenSSL's CSPRNG, as 32 lower-case hex digits. The lock
// table keeps only their SHA-256 (OwnerHash), so neither the store nor the admin API can leak a
// token that would let someone renew or release another's lock.
Status NewOwnerToken(std::string* out);

// True for exactly 32 lower-case hex digits.
bool IsWellFormedOwnerToken(std::string_view token);

// SHA-256 of the token, as 64 hex digits.
std::string OwnerHash(std::string_view token);

// What operators see of an owner: the first 12 hex digits of its hash.
std::string OwnerId(std::string_view owner_hash);

}  // namespace fencegate::lockstore
