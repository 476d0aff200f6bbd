#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include "lockstore/fence/fence_record.h"

namespace fencegate::lockstore {

// A filtered read of the rejection trail (FenceStore::QueryRejections), newest first. Empty
// string filters match anything; a set one matches its field exactly.
struct RejectionQuery {
  std::string route;
  std::string reason;
  std::string fence_key;
  std::string principal;
  std::string client;
  // Records at or after these Unix milliseconds (0: any). The scan runs newest first and stops
  // at the first older record, so the trail's wall-clock order decides, not a full scan.
  std::int64_t since_ms = 0;
  // Records with a sequence below this one (0: from the newest): the next page after a page
  // whose last record had this sequence.
  std::uint64_t before_sequence = 0;
  std::size_t limit = 100;
};

// The answer: `more` when older matching records may follow the last one.
struct RejectionPage {
  std::vector<RejectionRecord> records;
  bool more = false;
};

// Whether `record` passes the query's field filters (not since_ms, before_sequence or limit).
bool MatchesRejectionFilters(const RejectionQuery& query, const RejectionRecord& record);

// Adds `record` (newest first) to `page` if it passes the query; returns false once the scan
// should stop: the record is older than since_ms, or the page is full (then `more` is set,
// since this record might match or be followed by one that does).
bool CollectRejection(const RejectionQuery& query, const RejectionRecord& record,
                      RejectionPage* page);

// The query over an in-memory trail kept oldest first (the memory and etcd stores).
RejectionPage QueryRejectionTrail(const std::deque<RejectionRecord>& trail,
                                  const RejectionQuery& query);

}  // namespace fencegate::lockstore
