#include "lockstore/status.h"

#include <gtest/gtest.h>

namespace fencegate::lockstore {
namespace {

TEST(StatusTest, OkHasNoMessage) {
  EXPECT_TRUE(Status::Ok().ok());
  EXPECT_EQ(Status::Ok().ToString(), "OK");
}

TEST(StatusTest, ToStringNamesCodeAndMessage) {
  EXPECT_EQ(Status::IOError("fsync failed").ToString(), "IO error: fsync failed");
  EXPECT_EQ(Status::Unavailable("closed").ToString(), "Unavailable: closed");
  EXPECT_EQ(Status::Corruption("bad").ToString(), "Corruption: bad");
  EXPECT_EQ(Status::InvalidArgument("x").code(), Status::Code::kInvalidArgument);
  EXPECT_FALSE(Status::NotFound("k").ok());
  EXPECT_EQ(Status::NotFound("").ToString(), "Not found");
}

}  // namespace
}  // namespace fencegate::lockstore
