#include "base/encoding/sha256.h"

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "base/encoding/hex.h"

namespace fencegate::encoding {

struct Sha256::Context {
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  ~Context() { EVP_MD_CTX_free(ctx); }
};

Sha256::Sha256() : context_(std::make_unique<Context>()) { Reset(); }
Sha256::~Sha256() = default;
Sha256::Sha256(Sha256&&) noexcept = default;
Sha256& Sha256::operator=(Sha256&&) noexcept = default;

void Sha256::Reset() { EVP_DigestInit_ex(context_->ctx, EVP_sha256(), nullptr); }

void Sha256::Update(const void* data, std::size_t size) {
  if (size > 0) EVP_DigestUpdate(context_->ctx, data, size);
}

std::string Sha256::Final() {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  EVP_DigestFinal_ex(context_->ctx, digest, &length);
  return std::string(reinterpret_cast<const char*>(digest), length);
}

Sha256Digest DigestSha256(std::string_view data) {
  Sha256Digest digest{};
  EVP_Digest(data.data(), data.size(), digest.data(), nullptr, EVP_sha256(), nullptr);
  return digest;
}

std::string Sha256Of(std::string_view data) {
  const Sha256Digest digest = DigestSha256(data);
  return std::string(reinterpret_cast<const char*>(digest.data()), digest.size());
}

std::string Sha256Hex(std::string_view data) { return HexEncode(DigestSha256(data)); }

std::string HmacSha256(std::string_view key, std::string_view data) {
  std::string mac(kSha256Bytes, '\0');
  HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
       reinterpret_cast<const unsigned char*>(data.data()), data.size(),
       reinterpret_cast<unsigned char*>(mac.data()), nullptr);
  return mac;
}

}  // namespace fencegate::encoding
