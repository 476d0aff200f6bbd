#include <future>
#include <string>

#include <gtest/gtest.h>

#include "tests/support/held_put.h"
#include "tests/support/http_gateway_fixture.h"

namespace fencegate::integration {
namespace {

using BarrierTest = HttpGatewayTest;

// Token 6 must not overtake the still-running write of token 5 on the same fence: the backend
// would otherwise apply 5 after 6.
TEST_F(BarrierTest, NewerTokenWaitsForOlderWriteToComplete) {
  auto slow = PutHeldAtBackend(gateway_->traffic_port(), "/kv/item/x", "5", 500, "five");
  ASSERT_TRUE(backend_.WaitForArrived(1, std::chrono::seconds(5)));

  Response newer = Put("/kv/item/y", "6", "six");
  std::optional<Response> older = slow.get();
  ASSERT_TRUE(older.has_value());
  EXPECT_EQ(older->result_int(), 200);
  EXPECT_EQ(newer.result_int(), 200);

  ASSERT_TRUE(backend_.WaitForCompleted(2, std::chrono::seconds(5)));
  std::vector<RecordedRequest> seen = backend_.Requests();
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[0].body_prefix, "five");
  EXPECT_EQ(seen[1].body_prefix, "six");
  EXPECT_GT(seen[1].arrival, seen[0].completion)
      << "token 6 reached the backend before token 5's write completed";
}

// The barrier is per fence: a write on another fence is not held back.
TEST_F(BarrierTest, OtherFencesAreNotHeldBack) {
  auto slow = PutHeldAtBackend(gateway_->traffic_port(), "/kv/one/x", "5", 800, "one");
  ASSERT_TRUE(backend_.WaitForArrived(1, std::chrono::seconds(5)));
  EXPECT_EQ(Put("/kv/two/x", "6", "two").result_int(), 200);
  std::vector<RecordedRequest> seen = backend_.Requests();
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[0].completion, 0u) << "the other fence's write finished first";
  ASSERT_TRUE(slow.get().has_value());
}

}  // namespace
}  // namespace fencegate::integration
