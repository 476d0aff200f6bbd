#include "gateway/locks/lock_api.h"

#include <boost/json.hpp>

#include "gateway/http/problem.h"
#include "gateway/http/time_format.h"
#include "lockstore/locks/lock_owner.h"
#include "lockstore/locks/lock_rules.h"

namespace fencegate::gateway {
namespace http = boost::beast::http;
namespace json = boost::json;
namespace {

constexpr std::string_view kJson = "application/json";
using std::chrono::milliseconds;

LockHttpResponse JsonResponse(unsigned status, const json::value& value) {
  return {status, kJson, json::serialize(value), std::chrono::seconds(0)};
}

std::chrono::seconds RetryAfter(milliseconds ms) {
  // Whole seconds, rounded up, at least one: never tell a client to retry before the lock
  // could be free.
  return std::chrono::seconds(std::max<std::int64_t>(1, (ms.count() + 999) / 1000));
}

// Parses the request body: an object whose members are all in `known` (an empty body is {}).
bool ParseBody(std::string_view body, std::initializer_list<std::string_view> known,
               json::object* out, std::string* error) {
  if (body.find_first_not_of(" \t\r\n") == std::string_view::npos) {
    out->clear();
    return true;
  }
  boost::system::error_code ec;
  json::value value = json::parse(body, ec);
  if (ec) {
    *error = "the body is not JSON: " + ec.message();
    return false;
  }
  if (!value.is_object()) {
    *error = "the body must be a JSON object";
    return false;
  }
  for (const auto& member : value.as_object()) {
    if (std::find(known.begin(), known.end(), member.key()) == known.end()) {
      *error = "unknown field \"" + std::string(member.key()) + "\"";
      return false;
    }
  }
  *out = std::move(value.as_object());
  return true;
}

// Reads a non-negative integer member in milliseconds; absent leaves `out` alone.
bool Millis(const json::object& body, std::string_view key, milliseconds* out, std::string* error) {
  const json::value* value = body.if_contains(key);
  if (value == nullptr) return true;
  std::int64_t ms = -1;
  if (value->is_int64()) ms = value->as_int64();
  if (value->is_uint64() && value->as_uint64() <= 1'000'000'000'000ull) {
    ms = static_cast<std::int64_t>(value->as_uint64());
  }
  if (ms < 0) {
    *error = std::string(key) + " must be a non-negative integer (milliseconds)";
    return false;
  }
  *out = milliseconds(ms);
  return true;
}

// The owner token of a renew or release body ({"owner_token": "..."}, nothing else).
bool OwnerTokenFromBody(std::string_view body, std::string* out, std::string* error) {
  json::object fields;
  if (!ParseBody(body, {"owner_token"}, &fields, error)) return false;
  const json::value* value = fields.if_contains("owner_token");
  if (value == nullptr || !value->is_string()) {
    *error = "owner_token (the string the acquire returned) is required";
    return false;
  }
  *out = std::string(value->as_string());
  return true;
}

// The signature fields of a grant or renewal: the lease ends `ttl` from now (wall clock, so a
// verifier can check it without the lock table), and the MAC covers that end.
void AddSignature(const lockstore::TokenSigner* signer, const std::string& name,
                  lockstore::Token token, milliseconds ttl, json::object* out) {
  if (signer == nullptr) return;
  const std::int64_t expires_ms = NowUnixMs() + ttl.count();
  (*out)["fencing_token_signature"] = signer->Sign(name, token, expires_ms);
  (*out)["signature_expires_at_ms"] = expires_ms;
}

json::array FencesJson(const std::vector<lockstore::FenceRaise>& fences) {
  json::array out;
  for (const auto& fence : fences) {
    out.push_back(
        {{"fence_key", fence.key}, {"raised", fence.raised}, {"highest_token", fence.highest}});
  }
  return out;
}

LockHttpResponse RetryableProblem(Refusal refusal, std::string_view detail,
                                  std::string_view instance, std::string_view request_id,
                                  std::chrono::seconds retry_after) {
  LockHttpResponse response = LockProblem(refusal, detail, instance, request_id);
  response.retry_after = retry_after;
  return response;
}

// The store's trouble is passing (an etcd election, a full disk freed): worth a retry soon.
LockHttpResponse StoreUnavailable(std::string_view detail, std::string_view instance,
                                  std::string_view request_id) {
  return RetryableProblem(Refusal::kStoreError, detail, instance, request_id,
                          std::chrono::seconds(1));
}

}  // namespace

LockHttpResponse LockProblem(Refusal refusal, std::string_view detail, std::string_view instance,
                             std::string_view request_id) {
  ProblemDetails problem = RefusalProblem(refusal, detail);
  problem.instance = instance;
  problem.request_id = request_id;
  LockHttpResponse response;
  response.status = problem.status;
  response.content_type = kProblemContentType;
  RenderProblemJson(problem, &response.body);
  return response;
}

LockApi::Wait LockApi::Handle(http::verb method, std::string_view path, std::string_view body,
                              std::string_view request_id, Done done) {
  const std::string_view rest = path.substr(config_.prefix.size());
  const auto slash = rest.find('/');
  const std::string name(rest.substr(0, slash));
  const std::string_view action =
      slash == std::string_view::npos ? std::string_view{} : rest.substr(slash + 1);
  if (!lockstore::IsValidLockName(name)) {
    done(LockProblem(Refusal::kInvalidLockName, {}, path, request_id));
    return {};
  }
  auto not_allowed = [&](std::string_view allow) {
    LockHttpResponse response =
        LockProblem(Refusal::kMethodNotAllowed, "this lock resource allows " + std::string(allow),
                    path, request_id);
    done(std::move(response));
  };
  if (slash == std::string_view::npos) {
    if (method == http::verb::post) return Acquire(name, path, body, std::string(request_id), done);
    if (method == http::verb::get || method == http::verb::head) {
      State(name, done);
      return {};
    }
    not_allowed("GET, HEAD, POST");
    return {};
  }
  if (action != "renew" && action != "release") {
    done(LockProblem(Refusal::kNotFound,
                     "lock resources are {prefix}NAME, NAME/renew and NAME/release", path,
                     request_id));
    return {};
  }
  if (method != http::verb::post) {
    not_allowed("POST");
    return {};
  }
  if (action == "renew") {
    Renew(name, path, body, request_id, done);
  } else {
    Release(name, path, body, request_id, done);
  }
  return {};
}

LockApi::Wait LockApi::Acquire(const std::string& name, std::string_view path,
                               std::string_view body, std::string request_id, Done done) {
  json::object fields;
  std::string error;
  milliseconds ttl = config_.default_ttl;
  milliseconds wait{0};
  if (!ParseBody(body, {"ttl_ms", "wait_ms"}, &fields, &error) ||
      !Millis(fields, "ttl_ms", &ttl, &error) || !Millis(fields, "wait_ms", &wait, &error)) {
    done(LockProblem(Refusal::kBadRequest, error, path, request_id));
    return {};
  }
  Wait pending{name, 0};
  pending.waiter = table_.Acquire(
      name, ttl, wait,
      [name, instance = std::string(path), request_id, done, signer = signer_,
       events = events_](lockstore::AcquireResult result) {
        using Kind = lockstore::AcquireResult::Kind;
        LockHttpResponse response;
        switch (result.kind) {
          case Kind::kGranted: {
            json::object granted{
                {"lock", name},
                {"owner_token", result.owner_token},
                {"fencing_token", result.token},
                {"ttl_ms", result.ttl.count()},
                {"waited_ms", std::chrono::duration_cast<milliseconds>(result.waited).count()},
                {"fences", FencesJson(result.fences)}};
            AddSignature(signer, name, result.token, result.ttl, &granted);
            if (events != nullptr) {
              events->PublishLockGrant(
                  {.lock = name,
                   .owner_id = lockstore::OwnerId(lockstore::OwnerHash(result.owner_token)),
                   .fencing_token = result.token,
                   .at_ms = NowUnixMs()});
            }
            response = JsonResponse(200, granted);
            break;
          }
          case Kind::kHeld:
            response = RetryableProblem(Refusal::kLockHeld, result.detail, instance, request_id,
                                        RetryAfter(result.retry_after));
            break;
          case Kind::kQuarantined:
            response = RetryableProblem(Refusal::kLockQuarantined, result.detail, instance,
                                        request_id, RetryAfter(result.retry_after));
            break;
          case Kind::kBusy:
            response = RetryableProblem(Refusal::kTooManyWaiters, result.detail, instance,
                                        request_id, std::chrono::seconds(1));
            break;
          case Kind::kInvalid:
            response = LockProblem(Refusal::kBadRequest, result.detail, instance, request_id);
            break;
          case Kind::kStoreError:
            response = StoreUnavailable(result.detail, instance, request_id);
            break;
          case Kind::kCancelled:
            response = RetryableProblem(Refusal::kLockWaitCancelled, result.detail, instance,
                                        request_id, std::chrono::seconds(1));
            break;
        }
        done(std::move(response));
      });
  return pending;
}

void LockApi::Renew(const std::string& name, std::string_view path, std::string_view body,
                    std::string_view request_id, Done done) {
  std::string error;
  std::string owner;
  if (!OwnerTokenFromBody(body, &owner, &error)) {
    done(LockProblem(Refusal::kBadRequest, error, path, request_id));
    return;
  }
  table_.RenewAsync(name, owner,
                    [name, instance = std::string(path), request_id = std::string(request_id), done,
                     signer = signer_](lockstore::RenewResult renewed) {
                      if (!renewed.status.ok()) {
                        done(StoreUnavailable(renewed.status.ToString(), instance, request_id));
                        return;
                      }
                      if (!renewed.renewed) {
                        done(LockProblem(Refusal::kLockLost, {}, instance, request_id));
                        return;
                      }
                      json::object out{{"lock", name},
                                       {"fencing_token", renewed.token},
                                       {"ttl_ms", renewed.ttl.count()}};
                      AddSignature(signer, name, renewed.token, renewed.ttl, &out);
                      done(JsonResponse(200, out));
                    });
}

void LockApi::Release(const std::string& name, std::string_view path, std::string_view body,
                      std::string_view request_id, Done done) {
  std::string error;
  std::string owner;
  if (!OwnerTokenFromBody(body, &owner, &error)) {
    done(LockProblem(Refusal::kBadRequest, error, path, request_id));
    return;
  }
  table_.Release(name, owner,
                 [name, instance = std::string(path), request_id = std::string(request_id),
                  done](lockstore::ReleaseResult result) {
                   if (!result.status.ok()) {
                     done(StoreUnavailable(result.status.ToString(), instance, request_id));
                     return;
                   }
                   done(JsonResponse(200, {{"lock", name}, {"released", result.released}}));
                 });
}

void LockApi::State(const std::string& name, Done done) {
  table_.InspectAsync(name, [name, done](std::optional<lockstore::LockView> view) {
    json::object out{{"lock", name}};
    out["held"] = view && view->held;
    out["last_token"] = view ? view->last_token : 0;
    if (view && view->held) {
      // The holder's public id (as in GET /admin/locks): a prefix of its owner token's hash,
      // useless for renewing or releasing.
      out["holder_id"] = view->owner_id;
      out["holder_token"] = view->holder_token;
      out["expires_in_ms"] = view->expires_in.count();
    }
    out["waiters"] = view ? view->waiters : 0;
    done(JsonResponse(200, out));
  });
}

}  // namespace fencegate::gateway
