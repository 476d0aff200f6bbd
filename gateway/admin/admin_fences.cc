#include "gateway/admin/admin_fences.h"

#include <boost/json.hpp>

#include "gateway/admin/admin_rejections.h"
#include "gateway/admin/admin_request.h"

namespace fencegate::gateway {
namespace json = boost::json;

void HandleFenceList(const GatewayContext& context, std::string_view query, std::string_view path,
                     AdminResponse* response) {
  std::string error;
  const std::optional<AdminQuery> params =
      AdminQuery::Parse(query, {"prefix", "limit", "after"}, &error);
  const std::optional<std::size_t> limit = params ? params->Limit(&error) : std::nullopt;
  if (!limit) {
    SetProblem(Refusal::kBadRequest, error, path, response);
    return;
  }
  lockstore::FencePage page;
  const lockstore::Status listed =
      context.store->ListFences(params->Value("prefix"), params->Value("after"), *limit, &page);
  if (!listed.ok()) {
    SetProblem(Refusal::kStoreError, listed.ToString(), path, response);
    return;
  }
  json::array fences;
  for (const lockstore::FenceListing& listing : page.fences) {
    fences.push_back({{"fence_key", listing.fence_key},
                      {"highest_token", listing.record.highest},
                      {"advanced_at", Rfc3339OrNull(listing.record.advanced_at_ms)}});
  }
  json::value next = nullptr;
  if (page.more && !page.fences.empty()) next = json::string(page.fences.back().fence_key);
  SetJson({{"fences", std::move(fences)}, {"next", next}}, response);
}

json::object FenceHistoryJson(const GatewayContext& context, const std::string& key) {
  json::array advances;
  if (context.advance_history != nullptr) {
    for (const lockstore::AdvanceEntry& entry :
         context.advance_history->ForKey(key, kFenceHistoryLength)) {
      advances.push_back({{"token", entry.token},
                          {"at", Rfc3339OrNull(entry.at_ms)},
                          {"request_id", entry.request_id}});
    }
  }
  lockstore::RejectionQuery query;
  query.fence_key = key;
  query.limit = kFenceHistoryLength;
  json::array refusals;
  for (const lockstore::RejectionRecord& record : context.store->QueryRejections(query).records) {
    refusals.push_back(RejectionJson(record));
  }
  return {{"advances", std::move(advances)}, {"refusals", std::move(refusals)}};
}

}  // namespace fencegate::gateway
