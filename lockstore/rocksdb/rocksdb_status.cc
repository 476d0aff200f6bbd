#include "lockstore/rocksdb/rocksdb_status.h"

#include <rocksdb/status.h>

namespace fencegate::lockstore {

Status FromRocksDb(const rocksdb::Status& status) {
  if (status.ok()) return Status::Ok();
  if (status.IsNotFound()) return Status::NotFound(status.ToString());
  if (status.IsCorruption()) return Status::Corruption(status.ToString());
  if (status.IsInvalidArgument()) return Status::InvalidArgument(status.ToString());
  if (status.IsShutdownInProgress()) return Status::Unavailable(status.ToString());
  return Status::IOError(status.ToString());
}

}  // namespace fencegate::lockstore
