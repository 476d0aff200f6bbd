#include "base/net/field_lists.h"

#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

namespace fencegate::adapters {
namespace {

std::vector<std::string> Items(std::string_view list) {
  std::vector<std::string> items;
  ForEachListItem(list, [&items](std::string_view item) { items.emplace_back(item); });
  return items;
}

TEST(TrimOwsTest, RemovesSpacesAndTabsAtBothEndsOnly) {
  EXPECT_EQ(TrimOws(" \t keep-alive \t"), "keep-alive");
  EXPECT_EQ(TrimOws("a b"), "a b");
  EXPECT_EQ(TrimOws(" \t "), "");
  EXPECT_EQ(TrimOws(""), "");
  EXPECT_EQ(TrimOws("\r\nx"), "\r\nx");  // only OWS: anything else is the parser's business
}

TEST(ForEachListItemTest, SplitsOnCommasAndTrimsEachItem) {
  EXPECT_EQ(Items("close"), (std::vector<std::string>{"close"}));
  EXPECT_EQ(Items("keep-alive, X-Secret ,\tUpgrade"),
            (std::vector<std::string>{"keep-alive", "X-Secret", "Upgrade"}));
}

TEST(ForEachListItemTest, SkipsEmptyItemsAsRfc9110Allows) {
  EXPECT_EQ(Items(",, a ,, ,b,"), (std::vector<std::string>{"a", "b"}));
  EXPECT_TRUE(Items("").empty());
  EXPECT_TRUE(Items(" , \t,").empty());
}

TEST(ForEachListItemTest, ItemsAreViewsOfTheList) {
  const std::string list = "a, bb";
  std::vector<const char*> starts;
  ForEachListItem(list, [&starts](std::string_view item) { starts.push_back(item.data()); });
  ASSERT_EQ(starts.size(), 2u);
  EXPECT_EQ(starts[0], list.data());
  EXPECT_EQ(starts[1], list.data() + 3);
}

}  // namespace
}  // namespace fencegate::adapters
