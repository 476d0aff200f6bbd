#include "base/net/inline_handler.h"

#include <memory>
#include <utility>

#include <gtest/gtest.h>

namespace fencegate::adapters {
namespace {

TEST(InlineHandlerTest, CallsTheCallableWithItsArguments) {
  int sum = 0;
  InlineHandler<void(int, int)> add = [&sum](int a, int b) { sum += a + b; };
  ASSERT_TRUE(add);
  add(2, 3);
  add(4, 5);
  EXPECT_EQ(sum, 14);
  InlineHandler<int(int)> twice = [](int a) { return 2 * a; };
  EXPECT_EQ(twice(21), 42);
}

TEST(InlineHandlerTest, OwnsItsCapturesAndReleasesThemOnce) {
  auto owner = std::make_shared<int>(7);
  {
    InlineHandler<int()> handler = [owner] { return *owner; };
    EXPECT_EQ(owner.use_count(), 2);
    InlineHandler<int()> moved = std::move(handler);
    EXPECT_FALSE(handler);  // NOLINT(bugprone-use-after-move): a moved-from handler is empty
    EXPECT_EQ(owner.use_count(), 2);
    EXPECT_EQ(moved(), 7);
    InlineHandler<int()> assigned;
    assigned = std::move(moved);
    EXPECT_EQ(owner.use_count(), 2);
    assigned = nullptr;
    EXPECT_FALSE(assigned);
    EXPECT_EQ(owner.use_count(), 1);
    assigned = [owner] { return *owner + 1; };
    EXPECT_EQ(assigned(), 8);
  }
  EXPECT_EQ(owner.use_count(), 1);
}

TEST(InlineHandlerTest, AssigningOverAHandlerReleasesTheOldCallable) {
  auto first = std::make_shared<int>(1);
  auto second = std::make_shared<int>(2);
  InlineHandler<int()> handler = [first] { return *first; };
  handler = [second] { return *second; };
  EXPECT_EQ(first.use_count(), 1);
  EXPECT_EQ(second.use_count(), 2);
  EXPECT_EQ(handler(), 2);
}

TEST(InlineHandlerTest, IsCalledThroughAConstCopyLikeStdFunction) {
  int calls = 0;
  InlineHandler<void()> handler = [&calls]() mutable { ++calls; };
  // A completion lambda captures the handler by value and calls it from its const operator().
  auto completion = [handler = std::move(handler)] { handler(); };
  completion();
  completion();
  EXPECT_EQ(calls, 2);
}

TEST(InlineHandlerTest, HoldsTheLargestCaptureItAdvertises) {
  struct Capture {
    std::shared_ptr<int> owner;
    std::size_t bytes;
    std::size_t more;
    bool last;
  };
  static_assert(sizeof(Capture) <= 48);
  auto owner = std::make_shared<int>(3);
  InlineHandler<std::size_t()> handler = [capture = Capture{owner, 10, 20, true}] {
    return *capture.owner + capture.bytes + capture.more + (capture.last ? 1 : 0);
  };
  EXPECT_EQ(handler(), 34u);
}

}  // namespace
}  // namespace fencegate::adapters
