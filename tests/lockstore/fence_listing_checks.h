#pragma once

// Checks of FenceStore::ListFences and FenceStore::QueryRejections that every store must pass
// (memory, RocksDB, etcd): each store's test calls them on a fresh store.

#include <gtest/gtest.h>

#include <future>
#include <string>
#include <utility>
#include <vector>

#include "lockstore/fence/fence_store.h"

namespace fencegate::lockstore::listing_checks {

inline void AdvanceAndWait(FenceStore& store, std::string_view key, Token token,
                           std::int64_t now_ms) {
  std::promise<Status> done;
  store.Advance(key, token, now_ms, [&](Status status, FenceRecord) { done.set_value(status); });
  const Status status = done.get_future().get();
  ASSERT_TRUE(status.ok()) << status.ToString();
}

inline std::vector<std::string> Keys(const FencePage& page) {
  std::vector<std::string> keys;
  for (const FenceListing& listing : page.fences) keys.push_back(listing.fence_key);
  return keys;
}

inline FencePage List(FenceStore& store, std::string_view prefix, std::string_view after,
                      std::size_t limit) {
  FencePage page;
  const Status status = store.ListFences(prefix, after, limit, &page);
  EXPECT_TRUE(status.ok()) << status.ToString();
  return page;
}

// Fences under two prefixes and one key that shares the first's text but not its prefix.
inline void ExpectPaginatedFenceListing(FenceStore& store) {
  AdvanceAndWait(store, "files:/b", 3, 1000);
  AdvanceAndWait(store, "files:/a", 7, 2000);
  AdvanceAndWait(store, "files:/c", 1, 3000);
  AdvanceAndWait(store, "files;", 2, 4000);
  AdvanceAndWait(store, "docs:/x", 9, 5000);

  FencePage first = List(store, "files:", "", 2);
  EXPECT_EQ(Keys(first), (std::vector<std::string>{"files:/a", "files:/b"}));
  EXPECT_TRUE(first.more);
  ASSERT_EQ(first.fences.size(), 2u);
  EXPECT_EQ(first.fences[0].record.highest, 7u);
  EXPECT_EQ(first.fences[0].record.advanced_at_ms, 2000);

  FencePage second = List(store, "files:", "files:/b", 2);
  EXPECT_EQ(Keys(second), (std::vector<std::string>{"files:/c"}));
  EXPECT_FALSE(second.more);

  EXPECT_EQ(Keys(List(store, "", "", 100)),
            (std::vector<std::string>{"docs:/x", "files:/a", "files:/b", "files:/c", "files;"}));
  EXPECT_EQ(Keys(List(store, "", "files:/a", 100)),
            (std::vector<std::string>{"files:/b", "files:/c", "files;"}));
  // An `after` below the prefix starts at the prefix; one past it lists nothing.
  EXPECT_EQ(Keys(List(store, "files:", "a", 1)), (std::vector<std::string>{"files:/a"}));
  EXPECT_TRUE(List(store, "files:", "files:/z", 10).fences.empty());
  EXPECT_TRUE(List(store, "nothing", "", 10).fences.empty());
  // Exactly `limit` left: a page that ends the listing may still say more (a store cannot
  // always tell), but the page after it is empty and final.
  const FencePage exact = List(store, "files:", "files:/a", 2);
  EXPECT_EQ(Keys(exact), (std::vector<std::string>{"files:/b", "files:/c"}));
  if (exact.more) {
    EXPECT_TRUE(List(store, "files:", "files:/c", 2).fences.empty());
  }
}

inline RejectionRecord Refusal(std::string route, std::string reason, std::string key,
                               std::string client, std::string principal, std::int64_t at_ms) {
  RejectionRecord record;
  record.at_ms = at_ms;
  record.route = std::move(route);
  record.reason = std::move(reason);
  record.fence_key = std::move(key);
  record.client = std::move(client);
  record.principal = std::move(principal);
  record.method = "PUT";
  record.request_id = "req-" + std::to_string(at_ms);
  return record;
}

inline std::vector<std::string> RequestIds(const RejectionPage& page) {
  std::vector<std::string> ids;
  for (const RejectionRecord& record : page.records) ids.push_back(record.request_id);
  return ids;
}

inline void ExpectFilteredRejectionQuery(FenceStore& store) {
  store.RecordRejection(Refusal("files", "stale_token", "files:/a", "10.0.0.1", "alice", 100));
  store.RecordRejection(Refusal("files", "missing_token", "files:/b", "10.0.0.2", "", 200));
  store.RecordRejection(Refusal("docs", "stale_token", "docs:/a", "10.0.0.1", "bob", 300));
  store.RecordRejection(Refusal("files", "stale_token", "files:/a", "10.0.0.3", "alice", 400));
  store.RecordRejection(Refusal("files", "stale_token", "files:/c", "10.0.0.1", "alice", 500));

  RejectionQuery all;
  const RejectionPage everything = store.QueryRejections(all);
  EXPECT_EQ(RequestIds(everything),
            (std::vector<std::string>{"req-500", "req-400", "req-300", "req-200", "req-100"}));
  EXPECT_FALSE(everything.more);
  ASSERT_EQ(everything.records.size(), 5u);
  EXPECT_EQ(everything.records[0].client, "10.0.0.1");
  EXPECT_EQ(everything.records[0].principal, "alice");
  EXPECT_GT(everything.records[0].sequence, everything.records[1].sequence);

  const auto query = [&](auto&& set) {
    RejectionQuery q;
    set(q);
    return RequestIds(store.QueryRejections(q));
  };
  using Ids = std::vector<std::string>;
  EXPECT_EQ(query([](RejectionQuery& q) { q.route = "docs"; }), Ids{"req-300"});
  EXPECT_EQ(query([](RejectionQuery& q) { q.reason = "missing_token"; }), Ids{"req-200"});
  EXPECT_EQ(query([](RejectionQuery& q) { q.fence_key = "files:/a"; }),
            (Ids{"req-400", "req-100"}));
  EXPECT_EQ(query([](RejectionQuery& q) { q.principal = "bob"; }), Ids{"req-300"});
  EXPECT_EQ(query([](RejectionQuery& q) { q.client = "10.0.0.1"; }),
            (Ids{"req-500", "req-300", "req-100"}));
  EXPECT_EQ(query([](RejectionQuery& q) { q.since_ms = 300; }),
            (Ids{"req-500", "req-400", "req-300"}));
  EXPECT_EQ(query([](RejectionQuery& q) {
              q.route = "files";
              q.reason = "stale_token";
              q.client = "10.0.0.1";
            }),
            (Ids{"req-500", "req-100"}));

  // Pages backwards: `more` only while a matching record follows.
  RejectionQuery paged;
  paged.route = "files";
  paged.limit = 2;
  const RejectionPage first = store.QueryRejections(paged);
  EXPECT_EQ(RequestIds(first), (Ids{"req-500", "req-400"}));
  EXPECT_TRUE(first.more);
  paged.before_sequence = first.records.back().sequence;
  const RejectionPage second = store.QueryRejections(paged);
  EXPECT_EQ(RequestIds(second), (Ids{"req-200", "req-100"}));
  EXPECT_FALSE(second.more);
  paged.before_sequence = second.records.back().sequence;
  EXPECT_TRUE(store.QueryRejections(paged).records.empty());
}

}  // namespace fencegate::lockstore::listing_checks
