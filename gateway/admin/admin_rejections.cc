#include "gateway/admin/admin_rejections.h"

#include <charconv>

#include <boost/json.hpp>

#include "gateway/admin/admin_request.h"

namespace fencegate::gateway {
namespace json = boost::json;
namespace {

json::value StringOrNull(const std::string& text) {
  if (text.empty()) return nullptr;
  return json::string(text);
}

}  // namespace

json::object RejectionJson(const lockstore::RejectionRecord& record) {
  json::object item;
  if (record.sequence != 0) {
    item["sequence"] = record.sequence;
  } else {
    item["sequence"] = nullptr;  // not assigned by the store yet
  }
  item["at"] = Rfc3339OrNull(record.at_ms);
  item["route"] = record.route;
  item["reason"] = record.reason;
  item["fence_key"] = record.fence_key;
  item["method"] = record.method;
  item["path"] = record.path;
  if (record.has_presented) {
    item["presented_token"] = record.presented;
  } else {
    item["presented_token"] = nullptr;
  }
  item["highest_token"] = record.highest;
  item["client"] = StringOrNull(record.client);
  item["principal"] = StringOrNull(record.principal);
  item["user_agent"] = StringOrNull(record.user_agent);
  item["request_id"] = record.request_id;
  item["trace_id"] = StringOrNull(record.trace_id);
  return item;
}

void HandleRejections(const GatewayContext& context, std::string_view query, std::string_view path,
                      AdminResponse* response) {
  std::string error;
  const std::optional<AdminQuery> params = AdminQuery::Parse(
      query, {"route", "reason", "fence_key", "principal", "client", "since", "after", "limit"},
      &error);
  const std::optional<std::size_t> limit = params ? params->Limit(&error) : std::nullopt;
  lockstore::RejectionQuery filter;
  if (limit) {
    filter.limit = *limit;
    filter.route = params->Value("route");
    filter.reason = params->Value("reason");
    filter.fence_key = params->Value("fence_key");
    filter.principal = params->Value("principal");
    filter.client = params->Value("client");
    if (const std::string* since = params->Find("since")) {
      const std::optional<std::int64_t> since_ms = ParseTimeParameter(*since);
      if (!since_ms) {
        error = "since must be an RFC 3339 time or Unix milliseconds";
      } else {
        filter.since_ms = *since_ms;
      }
    }
    if (const std::string* after = params->Find("after")) {
      const auto parsed =
          std::from_chars(after->data(), after->data() + after->size(), filter.before_sequence);
      if (parsed.ec != std::errc() || parsed.ptr != after->data() + after->size() ||
          filter.before_sequence == 0) {
        error = "after must be a sequence (a positive integer)";
      }
    }
  }
  if (!error.empty()) {
    SetProblem(Refusal::kBadRequest, error, path, response);
    return;
  }
  const lockstore::RejectionPage page = context.store->QueryRejections(filter);
  json::array rejections;
  for (const lockstore::RejectionRecord& record : page.records) {
    rejections.push_back(RejectionJson(record));
  }
  json::value next = nullptr;
  if (page.more && !page.records.empty()) next = page.records.back().sequence;
  SetJson({{"rejections", std::move(rejections)}, {"next", next}}, response);
}

}  // namespace fencegate::gateway
