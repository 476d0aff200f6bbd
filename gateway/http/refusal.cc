#include "gateway/http/refusal.h"

#include <array>

namespace fencegate::gateway {
namespace {

using enum Refusal;

// One row per Refusal, in enum order. A detail here is the one the client gets unless the
// refusing site knows more (which limit, which field, the store's own message).
constexpr std::array kRefusals = std::to_array<RefusalRow>({
    {kTlsOnPlainPort, 400, "tls-on-plain-port", "TLS sent to a plain HTTP port",
     "this listener speaks plain HTTP, not TLS"},
    {kPlainHttpOnTlsPort, 400, "plain-http-on-tls-port", "Plain HTTP sent to a TLS port",
     "this listener speaks HTTPS only"},
    {kHeaderTooLarge, 431, "request-header-too-large", "Request header fields too large",
     "the request header block exceeds limits.max_header_bytes"},
    {kBodyTooLarge, 413, "request-body-too-large", "Content too large",
     "the request body exceeds limits.max_body_bytes"},
    {kBadRequest, 400, "bad-request", "Bad request", "the request is malformed"},
    {kBadHost, 400, "bad-host", "Bad Host",
     "the Host field is not a host name or IP literal with an optional port"},
    {kBadPath, 400, "bad-path", "Bad request path", "the request target is not a usable path"},
    {kUnderscoreInHeaderName, 400, "underscore-in-header-name", "Header name with an underscore",
     "field names with '_' are refused (limits.headers_with_underscores)"},
    {kNoRoute, 404, "no-route", "No route", "no route matches the request's host and path"},
    {kNotFound, 404, "not-found", "Not found", "no such resource"},
    {kMethodNotAllowed, 405, "method-not-allowed", "Method not allowed",
     "this resource does not allow this method"},
    {kUnauthenticated, 401, "unauthenticated", "Authentication required",
     "this resource needs credentials: Authorization: Bearer <key> or a client certificate"},
    {kForbidden, 403, "forbidden", "Not permitted",
     "the policy does not let this principal make this request"},
    {kMissingToken, 428, "missing-token", "Fencing token required",
     "a fenced write needs a Fencing-Token header"},
    {kInvalidToken, 400, "invalid-token", "Invalid fencing token",
     "Fencing-Token must be a decimal integer between 0 and 2^63-1"},
    {kNoFenceKey, 400, "no-fence-key", "No fence key",
     "the route's fence_key template does not resolve for this request"},
    {kUnsignedToken, 403, "unsigned-token", "Signed fencing token required",
     "this route accepts only tokens issued by the lock API, sent with their "
     "Fencing-Token-Signature"},
    {kInvalidTokenSignature, 400, "invalid-token-signature", "Invalid fencing token signature",
     "Fencing-Token-Signature must be kid=ID;exp=UNIX_MS;scope=LOCK;mac=BASE64URL"},
    {kForgedToken, 403, "forged-token", "Fencing token signature does not verify",
     "the signature does not match this token, lock and expiry under any configured key"},
    {kExpiredToken, 403, "expired-token", "Fencing token expired",
     "the lease this token was signed for has ended: renew the lock for a fresh signature"},
    {kTokenScopeMismatch, 403, "token-scope-mismatch", "Fencing token signed for another lock",
     "the signing lock's fence_keys (locks.rules) do not include this request's fence key"},
    {kTokenAdvanceTooLarge, 403, "token-advance-too-large", "Fencing token too far ahead",
     "the token is more than the route's max_token_advance above the highest seen; only a "
     "signed token may jump further"},
    {kTokenVerificationUnavailable, 503, "token-verification-unavailable",
     "Fencing token cannot be verified",
     "the lock service could not say whether this token's holder is live"},
    {kStaleToken, 409, "stale-token", "Stale fencing token",
     "a higher fencing token has already been seen for this fence key; stale_reason says why"},
    {kBarrierTimeout, 503, "barrier-timeout", "Fence busy",
     "older writes on this fence did not finish within timeouts.barrier_wait"},
    {kFenceRepairInProgress, 503, "fence-repair-in-progress", "Fence being repaired",
     "an operator is lowering this fence (POST /admin/fences/{key}/repair)"},
    {kStoreError, 503, "store-error", "Store unavailable", "the store did not answer"},
    {kWriteDeadlineExceeded, 408, "write-deadline-exceeded", "Write took too long",
     "the write did not finish within timeouts.write_deadline of its admission; it was "
     "abandoned and its fence released"},
    {kShardUnavailable, 503, "shard-unavailable", "No replica admits this fence right now",
     "no replica can admit this fence key's shard right now (its owner is unreachable or lost "
     "its etcd lease, or the shard is changing owner); retry"},
    {kResourcesInBodyWithReplicas, 501, "resources-in-body-with-replicas",
     "Not available with replicas",
     "a fenced request that names its resources in its body (S3 DeleteObjects) is not admitted "
     "when replicas share the fences (cluster:); write the resources one by one"},
    {kUpstreamTimeout, 504, "upstream-timeout", "Backend timed out",
     "the backend did not answer in time"},
    {kBackendIoError, 500, "backend-io-error", "Backend I/O error", "the backend's storage failed"},
    {kBadGateway, 502, "bad-gateway", "Bad gateway",
     "the backend did not send a valid HTTP response"},
    {kIdempotencyKeyMissing, 400, "idempotency-key-missing", "Idempotency key required",
     "this route requires an Idempotency-Key field on this method"},
    {kIdempotencyKeyInvalid, 400, "idempotency-key-invalid", "Invalid idempotency key",
     "the Idempotency-Key field must appear once and hold a string of 1 to 255 visible ASCII "
     "characters (an sf-string)"},
    {kIdempotencyStoreError, 503, "idempotency-store-error", "Idempotency store unavailable",
     "the idempotency store did not answer"},
    {kIdempotencyKeyReused, 422, "idempotency-key-reused", "Idempotency key reused",
     "this key was used with a different method or target"},
    {kIdempotencyRequestInFlight, 409, "idempotency-request-in-flight", "Request in progress",
     "a request with this idempotency key is still being processed"},
    {kIdempotencyOutcomeUnknown, 409, "idempotency-outcome-unknown", "Outcome not kept",
     "a request with this idempotency key was forwarded and may have been applied, but its "
     "response was not kept (too large, the backend exchange broke, or the gateway restarted); "
     "it is not forwarded again"},
    {kIdempotencyRecordCorrupt, 500, "idempotency-record-corrupt", "Stored response unreadable",
     "the stored response of this idempotency key does not decode"},
    {kInvalidLockName, 400, "invalid-lock-name", "Invalid lock name",
     "lock names are 1 to 128 characters from A-Z a-z 0-9 . _ : -"},
    {kLockHeld, 409, "lock-held", "Lock held", "another owner holds this lock"},
    {kLockQuarantined, 409, "lock-quarantined", "Lock in lock-delay",
     "this lock was lost recently and is not granted until its lock-delay ends"},
    {kTooManyWaiters, 429, "too-many-waiters", "Too many waiters",
     "too many acquires already wait for this lock"},
    {kLockWaitCancelled, 503, "lock-wait-cancelled", "Wait cancelled",
     "the wait for this lock was cancelled"},
    {kLockLost, 410, "lock-lost", "Lock lost",
     "this owner token does not hold the lock (the lease expired, was released or was forcibly "
     "released): stop working on the protected resource"},
    {kLockNotHeld, 404, "lock-not-held", "Lock not held", "nobody holds this lock"},
    {kLockNotFound, 404, "lock-not-found", "Lock not found", "this lock was never acquired"},
    {kFenceNotFound, 404, "fence-not-found", "Fence not found", "this fence key was never fenced"},
    {kFenceBusy, 409, "fence-busy", "Fence busy",
     "writes on this fence are in flight or waiting, or a repair is running: retry once they "
     "have finished"},
    {kRepairNotLower, 409, "repair-not-lower", "Repair does not lower the fence",
     "highest_token must be below the fence's current highest; a higher token raises the fence "
     "by itself"},
    {kConfigInvalid, 422, "config-invalid", "Configuration invalid",
     "the configuration file was not reloaded: the gateway keeps serving on the one in force "
     "(the errors member lists what --check-config reports)"},
});

static_assert(kRefusals.size() == static_cast<std::size_t>(kConfigInvalid) + 1,
              "one row per Refusal");

}  // namespace

std::span<const RefusalRow> RefusalTable() { return kRefusals; }

const RefusalRow& RefusalText(Refusal refusal) {
  return kRefusals[static_cast<std::size_t>(refusal)];
}

ProblemDetails RefusalProblem(Refusal refusal, std::string_view detail) {
  const RefusalRow& row = RefusalText(refusal);
  return {.status = row.status,
          .slug = row.slug,
          .title = row.title,
          .detail = detail.empty() ? row.detail : detail};
}

}  // namespace fencegate::gateway
