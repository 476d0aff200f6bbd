#include "gateway/admin/admin_fence_repair.h"

#include <future>

#include <boost/json.hpp>

#include "base/encoding/percent.h"
#include "gateway/admin/admin_json.h"
#include "gateway/admin/admin_request.h"
#include "gateway/http/time_format.h"

namespace fencegate::gateway {
namespace http = boost::beast::http;
namespace json = boost::json;
namespace {

constexpr std::string_view kRepairSuffix = "/repair";
constexpr std::string_view kRepairs = "/admin/fence-repairs";

void BadRequest(std::string_view detail, std::string_view path, AdminApi::Response* response) {
  SetProblem(Refusal::kBadRequest, detail, path, response);
}

json::object RecordJson(const lockstore::FenceRepairRecord& record) {
  std::string at;
  AppendRfc3339Ms(record.at_ms, &at);
  return {{"sequence", record.sequence},
          {"at", at},
          {"fence_key", record.fence_key},
          {"previous_highest", record.previous_highest},
          {"highest_token", record.new_highest},
          {"operator", record.operator_id},
          {"reason", record.reason}};
}

void Repair(const GatewayContext& context, std::string key, std::string_view body,
            std::string_view path, std::string_view principal, AdminApi::Response* response) {
  boost::system::error_code ec;
  const json::value parsed = json::parse(body, ec);
  lockstore::FenceRepairRecord record;
  record.fence_key = std::move(key);
  std::string claimed;
  const json::object* fields = !ec && parsed.is_object() ? &parsed.as_object() : nullptr;
  const json::value* highest = fields ? fields->if_contains("highest_token") : nullptr;
  const bool highest_ok = highest != nullptr &&
                          ((highest->is_uint64() && highest->as_uint64() <= lockstore::kMaxToken) ||
                           (highest->is_int64() && highest->as_int64() >= 0));
  if (fields == nullptr || !highest_ok ||
      !ReadTextMember(*fields, "reason", true, &record.reason) ||
      !ReadTextMember(*fields, "operator", false, &claimed) ||
      fields->size() != (fields->contains("operator") ? 3u : 2u)) {
    BadRequest(
        "the body must be {\"highest_token\": N (0 to 2^63-1), \"reason\": \"...\", "
        "\"operator\": \"...\" (optional)}, strings of 1 to 1024 bytes",
        path, response);
    return;
  }
  record.operator_id = AuditedOperator(principal, claimed, &record.reason);
  if (record.operator_id.empty()) record.operator_id = "unknown";
  record.new_highest = highest->to_number<lockstore::Token>();
  record.at_ms = NowUnixMs();

  std::promise<lockstore::RepairOutcome> done;
  context.admission->Repair(std::move(record), [&done](const lockstore::RepairOutcome& outcome) {
    done.set_value(outcome);
  });
  const lockstore::RepairOutcome outcome = done.get_future().get();
  using Kind = lockstore::RepairOutcome::Kind;
  switch (outcome.kind) {
    case Kind::kRepaired:
      context.metrics->fence_repairs().Increment();
      SetJson(RecordJson(outcome.record), response);
      return;
    case Kind::kBusy: {
      const std::string detail = "writes on this fence are in flight (" +
                                 std::to_string(outcome.writes_in_flight) + ") or waiting (" +
                                 std::to_string(outcome.writes_waiting) +
                                 "), or a repair is running: retry once they have finished";
      SetProblem(Refusal::kFenceBusy, detail, path, response);
      response->set(http::field::retry_after, "1");
      return;
    }
    case Kind::kNotFound:
      SetProblem(Refusal::kFenceNotFound, {}, path, response);
      return;
    case Kind::kNotLower:
      SetProblem(Refusal::kRepairNotLower, {}, path, response);
      return;
    case Kind::kStoreError:
      SetProblem(Refusal::kStoreError, outcome.status.ToString(), path, response);
      return;
  }
}

}  // namespace

bool IsFenceRepairRequest(const AdminApi::Request& request, std::string_view path) {
  if (path == kRepairs) return true;
  return request.method() == http::verb::post && path.starts_with(kAdminFencesPrefix) &&
         path.ends_with(kRepairSuffix) &&
         path.size() > kAdminFencesPrefix.size() + kRepairSuffix.size();
}

void HandleFenceRepair(const GatewayContext& context, const AdminApi::Request& request,
                       std::string_view path, std::string_view query, std::string_view principal,
                       AdminApi::Response* response) {
  if (path == kRepairs) {
    if (request.method() != http::verb::get && request.method() != http::verb::head) {
      SetProblem(Refusal::kMethodNotAllowed, "the repair trail is read-only", path, response);
      response->set(http::field::allow, "GET, HEAD");
      return;
    }
    std::string error;
    const std::optional<AdminQuery> params = AdminQuery::Parse(query, {"limit"}, &error);
    const std::optional<std::size_t> limit = params ? params->Limit(&error) : std::nullopt;
    if (!limit) {
      BadRequest(error, path, response);
      return;
    }
    json::array records;
    for (const auto& record : context.store->RecentRepairs(*limit)) {
      records.push_back(RecordJson(record));
    }
    SetJson(records, response);
    return;
  }
  const std::string_view encoded = path.substr(
      kAdminFencesPrefix.size(), path.size() - kAdminFencesPrefix.size() - kRepairSuffix.size());
  // '+' stays '+': a fence key is a path, not a form.
  std::optional<std::string> key = encoding::PercentDecode(encoded);
  if (!key || key->empty()) {
    BadRequest("the fence key is empty or badly encoded", path, response);
    return;
  }
  Repair(context, std::move(*key), request.body(), path, principal, response);
}

}  // namespace fencegate::gateway
