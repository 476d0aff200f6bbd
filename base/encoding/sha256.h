#pragma once

#include <array>
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

namespace fencegate::encoding {

inline constexpr std::size_t kSha256Bytes = 32;
using Sha256Digest = std::array<unsigned char, kSha256Bytes>;

// SHA-256 over data given in pieces (a request body as it streams through).
class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(Sha256&&) noexcept;
  Sha256& operator=(Sha256&&) noexcept;

  void Reset();
  void Update(const void* data, std::size_t size);
  // The 32-byte digest; Reset() before reuse.
  std::string Final();

 private:
  struct Context;
  std::unique_ptr<Context> context_;
};

// The SHA-256 digest of `data`: raw bytes, as an array or a 32-byte string, or as 64 lower-case
// hex digits (what sha256sum prints).
Sha256Digest DigestSha256(std::string_view data);
std::string Sha256Of(std::string_view data);
std::string Sha256Hex(std::string_view data);

// HMAC-SHA256 (RFC 2104) of `data` under `key`: the 32 raw bytes.
std::string HmacSha256(std::string_view key, std::string_view data);

}  // namespace fencegate::encoding
