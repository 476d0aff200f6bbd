#include "lockstore/fence/rejection_query.h"

namespace fencegate::lockstore {

bool MatchesRejectionFilters(const RejectionQuery& query, const RejectionRecord& record) {
  const auto matches = [](const std::string& wanted, const std::string& actual) {
    return wanted.empty() || wanted == actual;
  };
  return matches(query.route, record.route) && matches(query.reason, record.reason) &&
         matches(query.fence_key, record.fence_key) && matches(query.principal, record.principal) &&
         matches(query.client, record.client);
}

bool CollectRejection(const RejectionQuery& query, const RejectionRecord& record,
                      RejectionPage* page) {
  if (query.before_sequence != 0 && record.sequence >= query.before_sequence) return true;
  if (query.since_ms != 0 && record.at_ms < query.since_ms) return false;
  if (!MatchesRejectionFilters(query, record)) return true;
  if (page->records.size() >= query.limit) {
    page->more = true;
    return false;
  }
  page->records.push_back(record);
  return true;
}

RejectionPage QueryRejectionTrail(const std::deque<RejectionRecord>& trail,
                                  const RejectionQuery& query) {
  RejectionPage page;
  for (auto it = trail.rbegin(); it != trail.rend(); ++it) {
    if (!CollectRejection(query, *it, &page)) break;
  }
  return page;
}

}  // namespace fencegate::lockstore
