// Idempotency-Key handling of a Session (README "Idempotency keys"): the first request with a
// key is forwarded once its in-flight marker is durable; its response is kept and replayed to
// retries; conflicting or concurrent uses are refused. Fencing runs first: a stale token never
// reaches this code.
#include <boost/beast/core/string.hpp>

#include "gateway/http/time_format.h"
#include "gateway/server/network_thread.h"
#include "gateway/session/session.h"

namespace fencegate::gateway {
namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using boost::system::error_code;
using State = lockstore::IdempotencyRecord::State;

namespace {

constexpr std::size_t kFingerprintReadChunk = 16 * 1024;

bool Listed(const std::vector<std::string>& methods, std::string_view method) {
  for (const std::string& listed : methods) {
    if (listed == method) return true;
  }
  return false;
}

}  // namespace

bool Session::CheckIdempotencyKey() {
  const auto& config = exchange_.route->config->idempotency;
  auto& request = parser_->get();
  if (!config || !Listed(config->methods, request.method_string())) return true;
  const std::size_t fields = request.count(config->header);
  if (fields == 0) {
    if (!config->required) return true;
    Refuse({.status = 400,
            .slug = "idempotency-key-missing",
            .title = "Idempotency key required",
            .detail = "this route requires an Idempotency-Key field on this method",
            .outcome = "idempotency_key_missing"});
    return false;
  }
  std::string key;
  if (fields > 1 || !ParseIdempotencyKey(request.find(config->header)->value(), &key)) {
    Refuse({.status = 400,
            .slug = "idempotency-key-invalid",
            .title = "Invalid idempotency key",
            .detail = "the Idempotency-Key field must appear once and hold a string of 1 to 255 "
                      "visible ASCII characters (an sf-string)",
            .outcome = "idempotency_key_invalid"});
    return false;
  }
  IdempotencyExchange& idem = exchange_.idem.emplace();
  idem.config = &*config;
  idem.key = std::move(key);
  return true;
}

void Session::Proceed() {
  if (!exchange_.idem) {
    Forward();
    return;
  }
  IdempotencyExchange& idem = *exchange_.idem;
  auto& request = parser_->get();
  const std::string_view route = exchange_.route->config->name;
  if (idem.config->mode == IdempotencyConfig::Mode::kForward) {
    // The backend deduplicates; it sees a key bound to this fence key, never the raw one.
    const std::string derived = DeriveForwardKey(route, exchange_.fence_key, idem.key);
    request.erase(idem.config->header);
    request.set(idem.config->forward_header, derived);
    Forward();
    return;
  }
  std::string identity;
  if (!idem.config->identity_header.empty() && request.count(idem.config->identity_header) > 0) {
    // Hashed: the identity may be a credential, and store keys are visible on disk.
    identity = encoding::Sha256Of(request[idem.config->identity_header]);
  }
  idem.scope_key = IdempotencyScopeKey(route, exchange_.fence_key, identity, idem.key);
  idem.request_digest = RequestDigest(request.method_string(), request.target());
  const std::int64_t now = NowUnixMs();
  idem.expires_ms = now + idem.config->expire_after.count();
  lockstore::IdempotencyRecord marker;
  marker.created_ms = now;
  marker.expires_ms = idem.expires_ms;
  marker.request_digest = idem.request_digest;
  self_hold_ = shared_from_this();
  context_.idempotency->Begin(idem.scope_key, std::move(marker),
                              [this](lockstore::IdempotencyStore::BeginResult result) {
                                // On the store's writer thread: hop back.
                                thread_.inbox().Post([this, result = std::move(result)]() mutable {
                                  OnIdempotencyBegin(std::move(result));
                                });
                              });
}

void Session::OnIdempotencyBegin(lockstore::IdempotencyStore::BeginResult result) {
  const auto self = std::move(self_hold_);
  IdempotencyExchange& idem = *exchange_.idem;
  using Kind = lockstore::IdempotencyStore::BeginResult::Kind;
  switch (result.kind) {
    case Kind::kStarted:
      idem.claimed = true;
      idem.hashing = true;
      idem.body_hash.emplace();
      Forward();
      return;
    case Kind::kError:
      scratch_ = result.status.ToString();
      RefuseAfterAdmission({.status = 503,
                            .slug = "idempotency-store-error",
                            .title = "Idempotency store unavailable",
                            .detail = scratch_,
                            .outcome = "store_error",
                            .retry_after = true});
      return;
    case Kind::kExisting:
      break;
  }
  if (result.record.request_digest != idem.request_digest) {
    RefuseAfterAdmission({.status = 422,
                          .slug = "idempotency-key-reused",
                          .title = "Idempotency key reused",
                          .detail = "this key was used with a different method or target",
                          .outcome = "idempotency_key_reused"});
    return;
  }
  if (result.record.state == State::kInFlight) {
    RefuseAfterAdmission({.status = 409,
                          .slug = "idempotency-request-in-flight",
                          .title = "Request in progress",
                          .detail = "a request with this idempotency key is still being processed",
                          .outcome = "idempotency_in_flight",
                          .retry_after = true});
    return;
  }
  // Completed or unknown: whether it is the same request depends on the body too.
  idem.existing = std::move(result.record);
  idem.hashing = true;
  idem.body_hash.emplace();
  ReadBodyForFingerprint();
}

void Session::ReadBodyForFingerprint() {
  if (parser_->is_done()) {
    MatchStoredRecord();
    return;
  }
  scratch_.resize(kFingerprintReadChunk);
  self_hold_ = shared_from_this();
  AsyncReadBody(net::buffer(scratch_), [this](error_code ec, std::size_t, bool done) {
    const auto self = std::move(self_hold_);
    if (ec) {
      // The client broke framing or went away: nobody to answer.
      CompleteAdmission();
      exchange_.close_after = true;
      FinishRequest();
      return;
    }
    if (done) {
      MatchStoredRecord();
    } else {
      ReadBodyForFingerprint();
    }
  });
}

void Session::MatchStoredRecord() {
  IdempotencyExchange& idem = *exchange_.idem;
  idem.hashing = false;
  const lockstore::IdempotencyRecord& record = *idem.existing;
  if (!record.body_digest.empty() && record.body_digest != idem.body_hash->Final()) {
    RefuseAfterAdmission({.status = 422,
                          .slug = "idempotency-key-reused",
                          .title = "Idempotency key reused",
                          .detail = "this key was used with a different request body",
                          .outcome = "idempotency_key_reused"});
    return;
  }
  if (record.state == State::kCompleted) {
    ReplayStoredResponse(record);
    return;
  }
  // Never forwarded again: it may have been applied. The client must find out by other means.
  RefuseAfterAdmission({.status = 409,
                        .slug = "idempotency-outcome-unknown",
                        .title = "Outcome not kept",
                        .detail = "a request with this idempotency key was forwarded and may have "
                                  "been applied, but its response was not kept (too large, the "
                                  "backend exchange broke, or the gateway restarted); it is not "
                                  "forwarded again",
                        .outcome = "idempotency_outcome_unknown"});
}

void Session::ReplayStoredResponse(const lockstore::IdempotencyRecord& record) {
  StoredResponse stored;
  if (!DecodeStoredResponse(record.response, &stored)) {
    RefuseAfterAdmission({.status = 500,
                          .slug = "idempotency-record-corrupt",
                          .title = "Stored response unreadable",
                          .detail = "the stored response of this idempotency key does not decode",
                          .outcome = "store_error"});
    return;
  }
  CompleteAdmission();
  phase_ = Phase::kResponding;
  exchange_.outcome = "idempotent_replay";
  exchange_.upstream_status = record.upstream_status;
  exchange_.status = stored.status;
  response_.base() = adapters::ResponseHeader{};
  response_.result(stored.status);
  for (const auto& field : stored.fields) response_.insert(field.name_string(), field.value());
  response_.set(kIdempotencyReplayedField, "?1");
  response_.set(kIdempotencyExpiresField, HttpDate(record.expires_ms));
  problem_body_ = std::move(stored.body);
  response_.content_length(problem_body_.size());
  WriteOwnResponse();
}

void Session::RefuseAfterAdmission(const Refusal& refusal) {
  CompleteAdmission();
  Refuse(refusal);
}

// Keeps a copy of the response for replays, up to max_response_bytes in all.
void Session::CaptureResponse(net::const_buffer body) {
  IdempotencyExchange& idem = *exchange_.idem;
  if (idem.capture_overflow) return;
  if (idem.captured.body.size() + body.size() > idem.config->max_response_bytes) {
    idem.capture_overflow = true;
    idem.captured.body.clear();
    idem.captured.body.shrink_to_fit();
    return;
  }
  idem.captured.body.append(static_cast<const char*>(body.data()), body.size());
}

lockstore::IdempotencyRecord Session::OutcomeRecord(State state) const {
  const IdempotencyExchange& idem = *exchange_.idem;
  lockstore::IdempotencyRecord record;
  record.state = state;
  record.created_ms = exchange_.started_unix_ms;
  record.expires_ms = idem.expires_ms;
  record.upstream_status =
      exchange_.upstream_status != 0 ? exchange_.upstream_status : exchange_.status;
  record.request_digest = idem.request_digest;
  return record;
}

// The client must not see the end of a response whose outcome is not yet durable: a client
// that got the whole answer and retried after kill -9 must be replayed, not refused.
void Session::WriteLastPieceDurably(net::const_buffer body) {
  IdempotencyExchange& idem = *exchange_.idem;
  idem.claimed = false;
  idem.hashing = false;
  const bool keep = !idem.capture_overflow && parser_->is_done();
  lockstore::IdempotencyRecord record = OutcomeRecord(keep ? State::kCompleted : State::kUnknown);
  if (parser_->is_done()) record.body_digest = idem.body_hash->Final();
  if (keep) {
    idem.captured.status = exchange_.status;
    record.response = EncodeStoredResponse(idem.captured);
  }
  idem.captured = StoredResponse{};
  context_.idempotency->Finish(
      idem.scope_key, std::move(record),
      [self = shared_from_this(), body](lockstore::Status) mutable {
        // A failed write leaves the marker in flight: retries get 409, then (after a restart)
        // "outcome unknown"; never a second application. `self` moves into the posted handler:
        // a copy left here could be the last one and destroy the session on the store's thread.
        auto& inbox = self->thread_.inbox();
        inbox.Post([self = std::move(self), body] { self->WriteBodyPiece(body, true); });
      });
}

// After the backend exchange, when the outcome was not written with the response's last piece:
// a request that never reached the backend frees the key; anything else may have been applied.
// OnForwardDone() runs again once the store has it.
void Session::SettleIdempotency(adapters::ForwardOutcome outcome) {
  IdempotencyExchange& idem = *exchange_.idem;
  idem.claimed = false;
  idem.hashing = false;
  const bool never_reached = !outcome.backend_reached && !outcome.response_started;
  // As above: `self` and the outcome move on to the network thread, nothing stays behind.
  auto resume = [self = shared_from_this(),
                 outcome = std::move(outcome)](lockstore::Status) mutable {
    auto& inbox = self->thread_.inbox();
    inbox.Post(
        [self = std::move(self), outcome = std::move(outcome)] { self->OnForwardDone(outcome); });
  };
  if (never_reached) {
    context_.idempotency->Abandon(idem.scope_key, std::move(resume));
    return;
  }
  lockstore::IdempotencyRecord record = OutcomeRecord(State::kUnknown);
  if (parser_->is_done()) record.body_digest = idem.body_hash->Final();
  context_.idempotency->Finish(idem.scope_key, std::move(record), std::move(resume));
}

}  // namespace fencegate::gateway
