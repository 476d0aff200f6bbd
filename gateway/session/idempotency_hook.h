#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <boost/asio/buffer.hpp>

#include "base/encoding/sha256.h"
#include "base/net/http_header.h"
#include "gateway/config/config.h"
#include "gateway/session/idempotency.h"
#include "lockstore/idempotency/idempotency_record.h"

namespace fencegate::gateway {

// The Idempotency-Key side of one request in progress (README "Idempotency keys"): the key, the
// in-flight marker, the request body's fingerprint and the copy of the response kept for
// replays. The session drives the store and the client; this holds what they exchange and
// decides what is stored. Disengaged (reset for every request) unless the route lists the
// request's method and the request carries a valid key, so every other request pays one
// branch at each stage.
class IdempotencyHook {
 public:
  void Reset();
  void Engage(const IdempotencyConfig& config, std::string key);
  bool engaged() const { return config_ != nullptr; }
  const IdempotencyConfig& config() const { return *config_; }
  const std::string& key() const { return key_; }
  const std::string& scope_key() const { return scope_key_; }

  // Mode store, before forwarding: the in-flight marker to store under scope_key().
  // `identity`: the value of the route's identity field when the request carries it.
  lockstore::IdempotencyRecord Marker(std::string_view route, std::string_view fence_key,
                                      std::optional<std::string_view> identity,
                                      std::string_view method, std::string_view target,
                                      std::int64_t now_ms);
  // Whether a record found in the store was made by a request with this method and target.
  bool SameRequestHead(const lockstore::IdempotencyRecord& record) const {
    return record.request_digest == request_digest_;
  }

  // Our marker is stored: the outcome is owed to the store, the request body is fingerprinted
  // and the response kept.
  void Claim();
  // The outcome is no longer owed (written, or about to be): nothing more is captured.
  void EndClaim();
  bool claimed() const { return claimed_; }

  // A completed or unknown record of the same head: fingerprint the body to compare.
  void MatchAgainst(lockstore::IdempotencyRecord record);
  const lockstore::IdempotencyRecord& stored() const { return *stored_; }
  // Once the whole body was fingerprinted: false when the stored record was made with another
  // body.
  bool BodyMatchesStored();

  // The request body as it passes (the adapter's buffer).
  void OnRequestBody(const void* data, std::size_t size) {
    if (hashing_) body_hash_->Update(data, size);
  }
  // The backend's response header while claimed: keeps the fields a replay needs and tells the
  // client when the key may be used afresh.
  void OnResponseHeader(adapters::ResponseHeader& header);
  // Each piece of the response body while claimed, up to max_response_bytes in all.
  void OnResponseBody(boost::asio::const_buffer body);

  // The records that settle a claimed key; each ends the claim. The body's fingerprint is in
  // them when the request body was read whole (`body_done`). `status` is the response's (0: none
  // written), kept as the upstream status when the backend's is not known.
  //
  // With the response's last piece: completed, with the response, when it was kept whole and
  // the body read whole; otherwise unknown.
  lockstore::IdempotencyRecord ResponseOutcome(bool body_done, unsigned status,
                                               unsigned upstream_status, std::int64_t created_ms);
  // The backend exchange ended without the response's last piece: it may have been applied but
  // cannot be replayed.
  lockstore::IdempotencyRecord UnknownOutcome(bool body_done, unsigned status,
                                              unsigned upstream_status, std::int64_t created_ms);

 private:
  lockstore::IdempotencyRecord Outcome(bool keep, bool body_done, unsigned status,
                                       unsigned upstream_status, std::int64_t created_ms);

  const IdempotencyConfig* config_ = nullptr;
  std::string key_;
  std::string scope_key_;
  std::string request_digest_;
  std::int64_t expires_ms_ = 0;
  bool claimed_ = false;
  bool hashing_ = false;           // request body bytes feed body_hash_
  bool capture_overflow_ = false;  // the response outgrew max_response_bytes: not kept
  std::optional<encoding::Sha256> body_hash_;
  std::optional<lockstore::IdempotencyRecord> stored_;
  StoredResponse captured_;
};

}  // namespace fencegate::gateway
