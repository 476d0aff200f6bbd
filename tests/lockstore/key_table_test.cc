#include "lockstore/fence/key_table.h"

#include <gtest/gtest.h>

#include <functional>
#include <set>
#include <string>
#include <vector>

namespace fencegate::lockstore {
namespace {

class KeyTableTest : public ::testing::Test {
 protected:
  // Keeps the keys alive: HashedKey only views them.
  HashedKey Key(const std::string& key) {
    const std::string& kept = *names_.insert(key).first;
    return {kept, std::hash<std::string_view>{}(kept)};
  }

  KeyState& InsertIdle(const std::string& key) {
    KeyState& state = table_.Insert(Key(key));
    state.loaded = true;
    return state;
  }

  std::set<std::string> names_;
  KeyTable table_;
};

TEST_F(KeyTableTest, FindsWhatWasInsertedAndNothingElse) {
  InsertIdle("a").target = 1;
  InsertIdle("b").target = 2;
  ASSERT_NE(table_.Find(Key("a")), nullptr);
  EXPECT_EQ(table_.Find(Key("a"))->target, 1u);
  EXPECT_EQ(table_.Find(Key("b"))->target, 2u);
  EXPECT_EQ(table_.Find(Key("c")), nullptr);
  EXPECT_EQ(table_.size(), 2u);
}

TEST_F(KeyTableTest, ErasedKeysAreGoneAndCounted) {
  InsertIdle("a");
  InsertIdle("b");
  EXPECT_EQ(table_.erasures(), 0u);
  table_.Erase(Key("a"));
  EXPECT_EQ(table_.Find(Key("a")), nullptr);
  EXPECT_NE(table_.Find(Key("b")), nullptr);
  EXPECT_EQ(table_.erasures(), 1u);
  EXPECT_EQ(table_.size(), 1u);
}

TEST_F(KeyTableTest, AReusedSlotStartsFromADefaultState) {
  KeyState& first = InsertIdle("a");
  first.target = 9;
  first.last_admitted_request_id = "r";
  table_.Erase(Key("a"));
  const KeyState& reused = table_.Insert(Key("b"));
  EXPECT_FALSE(reused.loaded);
  EXPECT_EQ(reused.target, 0u);
  EXPECT_TRUE(reused.last_admitted_request_id.empty());
  EXPECT_EQ(table_.Find(Key("a")), nullptr);
}

TEST_F(KeyTableTest, ManyKeysSurviveTheIndexGrowing) {
  constexpr int kKeys = 5000;
  for (int i = 0; i < kKeys; ++i) InsertIdle("key" + std::to_string(i)).target = i;
  for (int i = 0; i < kKeys; ++i) {
    const KeyState* state = table_.Find(Key("key" + std::to_string(i)));
    ASSERT_NE(state, nullptr) << i;
    EXPECT_EQ(state->target, Token(i));
  }
}

TEST_F(KeyTableTest, EvictionKeepsBusyStatesAndStopsAtTheLimit) {
  for (int i = 0; i < 10; ++i) {
    KeyState& state = InsertIdle("k" + std::to_string(i));
    if (i % 2 == 0) state.inflight_count = 1;  // busy: a write in flight
  }
  table_.EvictIdle(/*limit=*/7, /*budget=*/100);
  EXPECT_EQ(table_.size(), 7u) << "evicts only down to the limit";
  table_.EvictIdle(/*limit=*/0, /*budget=*/100);
  EXPECT_EQ(table_.size(), 5u) << "busy states are never evicted";
  for (int i = 0; i < 10; i += 2) EXPECT_NE(table_.Find(Key("k" + std::to_string(i))), nullptr);
  EXPECT_EQ(table_.erasures(), 5u);
}

TEST_F(KeyTableTest, EvictionLooksAtNoMoreSlotsThanItsBudget) {
  for (int i = 0; i < 10; ++i) InsertIdle("k" + std::to_string(i)).inflight_count = 1;
  InsertIdle("idle");
  table_.EvictIdle(/*limit=*/0, /*budget=*/4);
  EXPECT_EQ(table_.size(), 11u) << "the idle state lies beyond the budget";
  table_.EvictIdle(/*limit=*/0, /*budget=*/7);
  EXPECT_EQ(table_.Find(Key("idle")), nullptr) << "the sweep resumes where it stopped";
}

TEST_F(KeyTableTest, EraseIfVisitsEveryStateOnce) {
  for (int i = 0; i < 100; ++i) InsertIdle("k" + std::to_string(i));
  std::vector<std::string> visited;
  table_.EraseIf([&](std::string_view key, const KeyState&) {
    visited.emplace_back(key);
    return key.size() == 2;  // k0 .. k9
  });
  EXPECT_EQ(visited.size(), 100u);
  EXPECT_EQ(std::set<std::string>(visited.begin(), visited.end()).size(), 100u);
  EXPECT_EQ(table_.size(), 90u);
  EXPECT_EQ(table_.Find(Key("k5")), nullptr);
  EXPECT_NE(table_.Find(Key("k55")), nullptr);
}

}  // namespace
}  // namespace fencegate::lockstore
