#include "gateway/session/idempotency_hook.h"

#include <utility>

namespace fencegate::gateway {

using State = lockstore::IdempotencyRecord::State;

void IdempotencyHook::Reset() {
  if (!engaged()) return;
  *this = IdempotencyHook{};
}

void IdempotencyHook::Engage(const IdempotencyConfig& config, std::string key) {
  config_ = &config;
  key_ = std::move(key);
}

lockstore::IdempotencyRecord IdempotencyHook::Marker(std::string_view route,
                                                     std::string_view fence_key,
                                                     std::optional<std::string_view> identity,
                                                     std::string_view method,
                                                     std::string_view target, std::int64_t now_ms) {
  // Hashed: the identity may be a credential, and store keys are visible on disk.
  scope_key_ = IdempotencyScopeKey(route, fence_key,
                                   identity ? encoding::Sha256Of(*identity) : std::string(), key_);
  request_digest_ = RequestDigest(method, target);
  expires_ms_ = now_ms + config_->expire_after.count();
  lockstore::IdempotencyRecord marker;
  marker.created_ms = now_ms;
  marker.expires_ms = expires_ms_;
  marker.request_digest = request_digest_;
  return marker;
}

void IdempotencyHook::Claim() {
  claimed_ = true;
  hashing_ = true;
  body_hash_.emplace();
}

void IdempotencyHook::EndClaim() {
  claimed_ = false;
  hashing_ = false;
}

void IdempotencyHook::MatchAgainst(lockstore::IdempotencyRecord record) {
  stored_ = std::move(record);
  hashing_ = true;
  body_hash_.emplace();
}

bool IdempotencyHook::BodyMatchesStored() {
  hashing_ = false;
  return stored_->body_digest.empty() || stored_->body_digest == body_hash_->Final();
}

void IdempotencyHook::OnResponseHeader(adapters::ResponseHeader& header) {
  for (const auto& field : header) {
    if (IsStoredResponseField(field.name_string())) {
      captured_.fields.insert(field.name_string(), field.value());
    }
  }
  header.set(kIdempotencyExpiresField, HttpDate(expires_ms_));
}

void IdempotencyHook::OnResponseBody(boost::asio::const_buffer body) {
  if (capture_overflow_) return;
  if (captured_.body.size() + body.size() > config_->max_response_bytes) {
    capture_overflow_ = true;
    captured_.body.clear();
    captured_.body.shrink_to_fit();
    return;
  }
  captured_.body.append(static_cast<const char*>(body.data()), body.size());
}

lockstore::IdempotencyRecord IdempotencyHook::ResponseOutcome(bool body_done, unsigned status,
                                                              unsigned upstream_status,
                                                              std::int64_t created_ms) {
  return Outcome(!capture_overflow_ && body_done, body_done, status, upstream_status, created_ms);
}

lockstore::IdempotencyRecord IdempotencyHook::UnknownOutcome(bool body_done, unsigned status,
                                                             unsigned upstream_status,
                                                             std::int64_t created_ms) {
  return Outcome(false, body_done, status, upstream_status, created_ms);
}

lockstore::IdempotencyRecord IdempotencyHook::Outcome(bool keep, bool body_done,
                                                      unsigned response_status,
                                                      unsigned upstream_status,
                                                      std::int64_t created_ms) {
  EndClaim();
  lockstore::IdempotencyRecord record;
  record.state = keep ? State::kCompleted : State::kUnknown;
  record.created_ms = created_ms;
  record.expires_ms = expires_ms_;
  record.upstream_status = upstream_status != 0 ? upstream_status : response_status;
  record.request_digest = request_digest_;
  if (body_done) record.body_digest = body_hash_->Final();
  if (keep) {
    captured_.status = response_status;
    record.response = EncodeStoredResponse(captured_);
  }
  captured_ = StoredResponse{};
  return record;
}

}  // namespace fencegate::gateway
