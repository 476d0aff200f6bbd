#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "gateway/http/problem.h"

namespace fencegate::gateway {

// Every way the gateway itself refuses a request, for the proxy, the lock API and the admin
// API alike. The HTTP side of each (status, problem type, title, usual detail) is one row of
// one table (refusal.cc), so a slug means one status everywhere and docs can be checked against
// it (tests/gateway/refusal_test.cc). Adapters' problems (resource_adapters/) are theirs.
enum class Refusal : std::uint8_t {
  // Reading and parsing the request.
  kTlsOnPlainPort,
  kPlainHttpOnTlsPort,
  kHeaderTooLarge,
  kBodyTooLarge,
  kBadRequest,
  kBadHost,
  kBadPath,
  kUnderscoreInHeaderName,
  // Routing and access.
  kNoRoute,
  kNotFound,
  kMethodNotAllowed,
  kUnauthenticated,
  kForbidden,
  // Fencing tokens (README "Tokens").
  kMissingToken,
  kInvalidToken,
  kNoFenceKey,
  kUnsignedToken,
  kInvalidTokenSignature,
  kForgedToken,
  kExpiredToken,
  kTokenScopeMismatch,
  kTokenAdvanceTooLarge,
  kTokenVerificationUnavailable,
  // Admission and the fence store.
  kStaleToken,
  kBarrierTimeout,
  kFenceRepairInProgress,
  kStoreError,
  kWriteDeadlineExceeded,
  kShardUnavailable,
  kResourcesInBodyWithReplicas,
  // The backend exchange.
  kUpstreamTimeout,
  kBackendIoError,
  kBadGateway,
  // Idempotency keys.
  kIdempotencyKeyMissing,
  kIdempotencyKeyInvalid,
  kIdempotencyStoreError,
  kIdempotencyKeyReused,
  kIdempotencyRequestInFlight,
  kIdempotencyOutcomeUnknown,
  kIdempotencyRecordCorrupt,
  // The lock API.
  kInvalidLockName,
  kLockHeld,
  kLockQuarantined,
  kTooManyWaiters,
  kLockWaitCancelled,
  kLockLost,
  // The admin API.
  kLockNotHeld,
  kLockNotFound,
  kFenceNotFound,
  kFenceBusy,
  kRepairNotLower,
  kConfigInvalid,
};

struct RefusalRow {
  Refusal refusal;  // the row's own key: the table is indexed by it (checked by a test)
  unsigned status;
  std::string_view slug;  // the problem type is kProblemTypePrefix + slug
  std::string_view title;
  std::string_view detail;  // used unless the refusing site has a more specific one
};

// The whole table, in enum order.
std::span<const RefusalRow> RefusalTable();

const RefusalRow& RefusalText(Refusal refusal);

// The problem document of `refusal`: the row's status, slug and title, and `detail` when not
// empty, else the row's. The views point into the table and into `detail`.
ProblemDetails RefusalProblem(Refusal refusal, std::string_view detail = {});

}  // namespace fencegate::gateway
