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
    Refuse({.refusal = Refusal::kIdempotencyKeyMissing, .outcome = "idempotency_key_missing"});
    return false;
  }
  std::string key;
  if (fields > 1 || !ParseIdempotencyKey(request.find(config->header)->value(), &key)) {
    Refuse({.refusal = Refusal::kIdempotencyKeyInvalid, .outcome = "idempotency_key_invalid"});
    return false;
  }
  idempotency_.Engage(*config, std::move(key));
  return true;
}

void Session::Proceed() {
  if (!idempotency_.engaged()) {
    Forward();
    return;
  }
  const IdempotencyConfig& config = idempotency_.config();
  auto& request = parser_->get();
  const std::string_view route = exchange_.route->config->name;
  if (config.mode == IdempotencyConfig::Mode::kForward) {
    // The backend deduplicates; it sees a key bound to this fence key, never the raw one.
    const std::string derived = DeriveForwardKey(route, fenced_.fence_key(), idempotency_.key());
    request.erase(config.header);
    request.set(config.forward_header, derived);
    Forward();
    return;
  }
  std::optional<std::string_view> identity;
  if (!config.identity_header.empty() && request.count(config.identity_header) > 0) {
    identity = request[config.identity_header];
  }
  lockstore::IdempotencyRecord marker = idempotency_.Marker(
      route, fenced_.fence_key(), identity, request.method_string(), request.target(), NowUnixMs());
  self_hold_ = shared_from_this();
  generation_.idempotency->Begin(
      idempotency_.scope_key(), std::move(marker),
      [this](lockstore::IdempotencyStore::BeginResult result) {
        // On the store's writer thread: hop back.
        thread_.inbox().Post([this, result = std::move(result)]() mutable {
          OnIdempotencyBegin(std::move(result));
        });
      });
}

void Session::OnIdempotencyBegin(lockstore::IdempotencyStore::BeginResult result) {
  const auto self = std::move(self_hold_);
  using Kind = lockstore::IdempotencyStore::BeginResult::Kind;
  switch (result.kind) {
    case Kind::kStarted:
      idempotency_.Claim();
      Forward();
      return;
    case Kind::kError:
      scratch_ = result.status.ToString();
      RefuseAfterAdmission({.refusal = Refusal::kIdempotencyStoreError,
                            .detail = scratch_,
                            .outcome = "store_error",
                            .retry_after = true});
      return;
    case Kind::kExisting:
      break;
  }
  if (!idempotency_.SameRequestHead(result.record)) {
    RefuseAfterAdmission(
        {.refusal = Refusal::kIdempotencyKeyReused, .outcome = "idempotency_key_reused"});
    return;
  }
  if (result.record.state == State::kInFlight) {
    RefuseAfterAdmission({.refusal = Refusal::kIdempotencyRequestInFlight,
                          .outcome = "idempotency_in_flight",
                          .retry_after = true});
    return;
  }
  // Completed or unknown: whether it is the same request depends on the body too.
  idempotency_.MatchAgainst(std::move(result.record));
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
  if (!idempotency_.BodyMatchesStored()) {
    RefuseAfterAdmission({.refusal = Refusal::kIdempotencyKeyReused,
                          .detail = "this key was used with a different request body",
                          .outcome = "idempotency_key_reused"});
    return;
  }
  const lockstore::IdempotencyRecord& record = idempotency_.stored();
  if (record.state == State::kCompleted) {
    ReplayStoredResponse(record);
    return;
  }
  // Never forwarded again: it may have been applied. The client must find out by other means.
  RefuseAfterAdmission(
      {.refusal = Refusal::kIdempotencyOutcomeUnknown, .outcome = "idempotency_outcome_unknown"});
}

void Session::ReplayStoredResponse(const lockstore::IdempotencyRecord& record) {
  StoredResponse stored;
  if (!DecodeStoredResponse(record.response, &stored)) {
    RefuseAfterAdmission({.refusal = Refusal::kIdempotencyRecordCorrupt, .outcome = "store_error"});
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

void Session::RefuseAfterAdmission(const RefusalReply& refusal) {
  CompleteAdmission();
  Refuse(refusal);
}

// The client must not see the end of a response whose outcome is not yet durable: a client
// that got the whole answer and retried after kill -9 must be replayed, not refused.
void Session::WriteLastPieceDurably(net::const_buffer body) {
  lockstore::IdempotencyRecord record = idempotency_.ResponseOutcome(
      parser_->is_done(), exchange_.status, exchange_.upstream_status, exchange_.started_unix_ms);
  generation_.idempotency->Finish(
      idempotency_.scope_key(), std::move(record),
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
  idempotency_.EndClaim();
  const bool never_reached = !outcome.backend_reached && !outcome.response_started;
  // As above: `self` and the outcome move on to the network thread, nothing stays behind.
  auto resume = [self = shared_from_this(),
                 outcome = std::move(outcome)](lockstore::Status) mutable {
    auto& inbox = self->thread_.inbox();
    inbox.Post(
        [self = std::move(self), outcome = std::move(outcome)] { self->OnForwardDone(outcome); });
  };
  if (never_reached) {
    generation_.idempotency->Abandon(idempotency_.scope_key(), std::move(resume));
    return;
  }
  lockstore::IdempotencyRecord record = idempotency_.UnknownOutcome(
      parser_->is_done(), exchange_.status, exchange_.upstream_status, exchange_.started_unix_ms);
  generation_.idempotency->Finish(idempotency_.scope_key(), std::move(record), std::move(resume));
}

}  // namespace fencegate::gateway
