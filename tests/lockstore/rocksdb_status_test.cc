#include "lockstore/rocksdb/rocksdb_status.h"

#include <rocksdb/status.h>

#include <gtest/gtest.h>

namespace fencegate::lockstore {
namespace {

TEST(FromRocksDbTest, OkIsOk) {
  const Status status = FromRocksDb(rocksdb::Status::OK());
  EXPECT_TRUE(status.ok());
  EXPECT_EQ(status.message(), "");
}

TEST(FromRocksDbTest, NotFoundStaysNotFound) {
  const Status status = FromRocksDb(rocksdb::Status::NotFound("no such key"));
  EXPECT_EQ(status.code(), Status::Code::kNotFound);
  EXPECT_EQ(status.message(), "NotFound: no such key");
}

TEST(FromRocksDbTest, CorruptionStaysCorruption) {
  const Status status = FromRocksDb(rocksdb::Status::Corruption("bad block"));
  EXPECT_EQ(status.code(), Status::Code::kCorruption);
  EXPECT_EQ(status.message(), "Corruption: bad block");
}

// The fence, lock and idempotency stores once disagreed here (two reported an I/O error).
TEST(FromRocksDbTest, InvalidArgumentStaysInvalidArgument) {
  const Status status = FromRocksDb(rocksdb::Status::InvalidArgument("unknown family"));
  EXPECT_EQ(status.code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(status.message(), "Invalid argument: unknown family");
}

TEST(FromRocksDbTest, ShutdownInProgressIsUnavailable) {
  const Status status = FromRocksDb(rocksdb::Status::ShutdownInProgress("closing"));
  EXPECT_EQ(status.code(), Status::Code::kUnavailable);
  EXPECT_EQ(status.message(), "Shutdown in progress: closing");
}

TEST(FromRocksDbTest, IoErrorIsIoError) {
  const Status status = FromRocksDb(rocksdb::Status::IOError("fsync failed"));
  EXPECT_EQ(status.code(), Status::Code::kIOError);
  EXPECT_EQ(status.message(), "IO error: fsync failed");
}

// Whatever has no lockstore counterpart is a failure of the storage underneath.
TEST(FromRocksDbTest, EveryOtherCodeIsIoError) {
  for (const rocksdb::Status& other :
       {rocksdb::Status::NoSpace("disk full"), rocksdb::Status::Busy("writes stalled"),
        rocksdb::Status::TimedOut("lock wait"), rocksdb::Status::Aborted("txn"),
        rocksdb::Status::Incomplete("iterator"), rocksdb::Status::NotSupported("feature"),
        rocksdb::Status::TryAgain("later")}) {
    const Status status = FromRocksDb(other);
    EXPECT_EQ(status.code(), Status::Code::kIOError) << other.ToString();
    EXPECT_EQ(status.message(), other.ToString());
  }
}

}  // namespace
}  // namespace fencegate::lockstore
