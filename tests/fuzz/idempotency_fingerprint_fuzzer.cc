// Fuzzes the idempotency fingerprint and what is stored for a key (gateway/session/idempotency.h,
// lockstore/idempotency/idempotency_record.h). Input lines: method, target, key field value, then
// the body (the rest). Properties:
// - the body digest computed piece by piece, as the session does while the body streams, equals
//   the digest of the whole body, wherever the pieces are cut;
// - fingerprints and store keys of different tuples differ (length-prefixed, no ambiguity);
// - a parsed key is 1..255 visible ASCII bytes, and re-quoting it as an sf-string parses back;
// - stored responses and records decode arbitrary bytes without crashing, and what decodes
//   re-encodes to a value that decodes to the same thing.

#include <string>
#include <string_view>

#include "base/encoding/sha256.h"
#include "gateway/session/idempotency.h"
#include "lockstore/idempotency/idempotency_record.h"
#include "tests/fuzz/fuzz_support.h"

namespace {

using namespace fencegate::gateway;
using fencegate::encoding::Sha256;
using fencegate::encoding::Sha256Of;

std::string Quote(std::string_view key) {
  std::string out = "\"";
  for (char c : key) {
    if (c == '"' || c == '\\') out.push_back('\\');
    out.push_back(c);
  }
  return out + "\"";
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input = fencegate::fuzz::AsText(data, size);
  const auto fields = fencegate::fuzz::SplitFields(input, 4);
  const std::string_view method = fields[0];
  const std::string_view target = fields[1];
  const std::string_view key_field = fields[2];
  const std::string_view body = fields[3];

  // Streaming digest: cut the body at positions derived from its own bytes.
  Sha256 streamed;
  std::size_t offset = 0;
  while (offset < body.size()) {
    const std::size_t piece = 1 + static_cast<unsigned char>(body[offset]) % 17;
    const std::size_t take = std::min(piece, body.size() - offset);
    streamed.Update(body.data() + offset, take);
    offset += take;
  }
  FUZZ_CHECK(streamed.Final() == Sha256Of(body));

  // Moving one byte from the method into the target must change the fingerprint.
  FUZZ_CHECK(RequestDigest(method, target) == RequestDigest(method, target));
  if (!method.empty()) {
    const std::string shifted = std::string(method.substr(method.size() - 1)) + std::string(target);
    FUZZ_CHECK(RequestDigest(method.substr(0, method.size() - 1), shifted) !=
               RequestDigest(method, target));
    FUZZ_CHECK(IdempotencyScopeKey(method.substr(0, method.size() - 1), shifted, "", key_field) !=
               IdempotencyScopeKey(method, target, "", key_field));
  }

  std::string key;
  if (ParseIdempotencyKey(key_field, &key)) {
    FUZZ_CHECK(!key.empty() && key.size() <= kMaxIdempotencyKeyLength);
    for (char c : key) FUZZ_CHECK(c >= 0x20 && c <= 0x7e);
    std::string again;
    FUZZ_CHECK(ParseIdempotencyKey(Quote(key), &again) && again == key);
    FUZZ_CHECK(DeriveForwardKey(method, target, key).size() == 64);
  }

  StoredResponse response;
  if (DecodeStoredResponse(input, &response)) {
    StoredResponse again;
    FUZZ_CHECK(DecodeStoredResponse(EncodeStoredResponse(response), &again));
    FUZZ_CHECK(again.status == response.status && again.body == response.body);
    FUZZ_CHECK(EncodeStoredResponse(again) == EncodeStoredResponse(response));
  }

  fencegate::lockstore::IdempotencyRecord record;
  if (fencegate::lockstore::DecodeIdempotencyRecord(input, &record).ok()) {
    FUZZ_CHECK(fencegate::lockstore::EncodeIdempotencyRecord(record) == input);
  }
  return 0;
}
