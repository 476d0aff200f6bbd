#pragma once

#include <cmath>
#include <cstdint>
#include <string_view>

// The hash of the fence_key policy. Several gateways in front of the same servers must send a
// key to the same server, so the hash is fixed here rather than taken from std::hash (which
// may differ between builds): FNV-1a 64 over the bytes, then the splitmix64 finalizer, whose
// avalanche FNV-1a lacks on short keys.

namespace fencegate::adapters {

inline constexpr std::uint64_t Fnv1a64(std::string_view bytes) {
  std::uint64_t hash = 0xcbf29ce484222325ull;
  for (const char byte : bytes) {
    hash ^= static_cast<unsigned char>(byte);
    hash *= 0x100000001b3ull;
  }
  return hash;
}

// splitmix64's finalizer (Steele, Lea, Flood 2014): a bijection in which every input bit
// changes every output bit with probability about 1/2.
inline constexpr std::uint64_t Mix64(std::uint64_t value) {
  value ^= value >> 30;
  value *= 0xbf58476d1ce4e5b9ull;
  value ^= value >> 27;
  value *= 0x94d049bb133111ebull;
  value ^= value >> 31;
  return value;
}

// A server's part of the hash, computed once from its configured url: every gateway that is
// configured with the same urls agrees, whatever the servers' addresses.
inline constexpr std::uint64_t ServerSeed(std::string_view url) { return Mix64(Fnv1a64(url)); }

// Weighted rendezvous hashing ("highest random weight"): each server scores a key with
// -weight / ln(u), u uniform in (0, 1) from the hash of (key, server); the highest score wins.
// A server gets keys in proportion to its weight, and when it leaves only its own keys move
// (the others' scores do not change).
inline double RendezvousScore(std::uint64_t key_hash, std::uint64_t server_seed, unsigned weight) {
  const std::uint64_t hash = Mix64(key_hash ^ server_seed);
  // The top 53 bits, centred in their interval so that u is never 0 or 1.
  const double uniform = (static_cast<double>(hash >> 11) + 0.5) * 0x1.0p-53;
  return -static_cast<double>(weight) / std::log(uniform);
}

}  // namespace fencegate::adapters
