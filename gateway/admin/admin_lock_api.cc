#include "gateway/admin/admin_lock_api.h"

#include <future>

#include <boost/json.hpp>

#include "gateway/admin/admin_json.h"
#include "gateway/admin/admin_request.h"
#include "gateway/locks/lock_api.h"
#include "lockstore/locks/lock_rules.h"

namespace fencegate::gateway {
namespace http = boost::beast::http;
namespace json = boost::json;
namespace {

constexpr std::string_view kLocks = "/admin/locks";
constexpr std::string_view kLocksPrefix = "/admin/locks/";
constexpr std::string_view kForceRelease = "/force-release";
constexpr std::string_view kAudit = "/admin/lock-audit";

void Set(const LockHttpResponse& answer, AdminApi::Response* response) {
  response->result(answer.status);
  response->set(http::field::content_type, answer.content_type);
  response->body() = answer.body;
}

json::object ViewJson(const lockstore::LockView& view) {
  json::object out{{"lock", view.name},
                   {"last_token", view.last_token},
                   {"held", view.held},
                   {"waiters", view.waiters},
                   {"quarantine_left_ms", view.quarantine_left.count()}};
  if (view.held) {
    out["holder"] = {{"owner_id", view.owner_id},
                     {"fencing_token", view.holder_token},
                     {"ttl_ms", view.ttl.count()},
                     {"expires_in_ms", view.expires_in.count()},
                     {"held_for_ms", view.held_for.count()},
                     {"acquired_at", Rfc3339OrNull(view.acquired_at_unix_ms)},
                     {"granting", view.granting}};
  } else {
    out["holder"] = nullptr;
  }
  return out;
}

json::object AuditJson(const lockstore::LockAuditRecord& record) {
  return {{"sequence", record.sequence},
          {"at", Rfc3339OrNull(record.at_unix_ms)},
          {"lock", record.lock},
          {"operator", record.operator_id},
          {"reason", record.reason},
          {"previous_owner_id", record.previous_owner_id},
          {"previous_token", record.previous_token},
          {"fence_token", record.fence_token}};
}

// Reads a required, non-empty, bounded string member.
bool RequiredString(const json::object& body, std::string_view key, std::string* out,
                    std::string* error) {
  if (ReadTextMember(body, key, true, out)) return true;
  *error = std::string(key) + " is required: a non-empty string of at most " +
           std::to_string(kMaxAdminTextMember) + " bytes";
  return false;
}

void ForceRelease(const GatewayContext& context, const std::string& name, std::string_view body,
                  std::string_view path, std::string_view principal, AdminApi::Response* response) {
  boost::system::error_code ec;
  const json::value parsed = json::parse(body, ec);
  std::string error;
  std::string reason;
  std::string operator_id;
  if (ec || !parsed.is_object()) {
    error = "the body must be a JSON object {\"reason\": \"...\", \"operator\": \"...\"}";
  } else if (RequiredString(parsed.as_object(), "reason", &reason, &error)) {
    std::string claimed;
    const json::value* field = parsed.as_object().if_contains("operator");
    // Without admin principals the body's operator is all the trail can name: required then.
    if (principal.empty() || field != nullptr) {
      RequiredString(parsed.as_object(), "operator", &claimed, &error);
    }
    operator_id = AuditedOperator(principal, claimed, &reason);
  }
  if (!error.empty()) {
    Set(LockProblem(Refusal::kBadRequest, error, path, ""), response);
    return;
  }
  std::promise<lockstore::ForceReleaseResult> done;
  context.lock_table->ForceRelease(
      name, std::move(operator_id), std::move(reason),
      [&done](lockstore::ForceReleaseResult result) { done.set_value(std::move(result)); });
  const lockstore::ForceReleaseResult result = done.get_future().get();
  if (result.status.code() == lockstore::Status::Code::kNotFound) {
    Set(LockProblem(Refusal::kLockNotHeld, {}, path, ""), response);
    return;
  }
  if (!result.status.ok()) {
    Set(LockProblem(Refusal::kStoreError, result.status.ToString(), path, ""), response);
    return;
  }
  json::object out = AuditJson(result.audit);
  json::array fences;
  for (const auto& fence : result.fences) {
    fences.push_back(
        {{"fence_key", fence.key}, {"raised", fence.raised}, {"highest_token", fence.highest}});
  }
  out["fences"] = std::move(fences);
  SetJson(out, response);
}

}  // namespace

bool IsAdminLockPath(std::string_view path) {
  return path == kLocks || path == kAudit || path.starts_with(kLocksPrefix);
}

std::string_view AdminLockAllow(std::string_view path) {
  return path.starts_with(kLocksPrefix) && path.ends_with(kForceRelease) ? "POST" : "GET, HEAD";
}

void HandleAdminLock(const GatewayContext& context, const AdminApi::Request& request,
                     std::string_view path, std::string_view query, std::string_view principal,
                     AdminApi::Response* response) {
  if (path == kLocks || path == kAudit) {
    std::string error;
    const std::optional<AdminQuery> params = path == kAudit
                                                 ? AdminQuery::Parse(query, {"limit"}, &error)
                                                 : AdminQuery::Parse(query, {}, &error);
    const std::optional<std::size_t> limit = params ? params->Limit(&error) : std::nullopt;
    if (!limit) {
      Set(LockProblem(Refusal::kBadRequest, error, path, ""), response);
      return;
    }
    if (path == kAudit) {
      json::array records;
      for (const auto& record : context.lock_table->RecentAudit(*limit)) {
        records.push_back(AuditJson(record));
      }
      SetJson(records, response);
      return;
    }
  }
  if (path == kLocks) {
    json::array locks;
    for (const auto& view : context.lock_table->List()) locks.push_back(ViewJson(view));
    SetJson({{"locks", std::move(locks)}}, response);
    return;
  }
  std::string_view name = path.substr(kLocksPrefix.size());
  const bool force = name.ends_with(kForceRelease);
  if (force) name.remove_suffix(kForceRelease.size());
  if (!lockstore::IsValidLockName(name)) {
    Set(LockProblem(Refusal::kInvalidLockName, {}, path, ""), response);
    return;
  }
  if (force) {
    ForceRelease(context, std::string(name), request.body(), path, principal, response);
    return;
  }
  const auto view = context.lock_table->Inspect(name);
  if (!view) {
    Set(LockProblem(Refusal::kLockNotFound, {}, path, ""), response);
    return;
  }
  SetJson(ViewJson(*view), response);
}

}  // namespace fencegate::gateway
