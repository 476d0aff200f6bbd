#pragma once

#include <string>
#include <string_view>

#include "lockstore/locks/lock_record.h"
#include "lockstore/status.h"

namespace fencegate::lockstore {

// On-disk encodings of lock records and lock audit records: a format byte, fixed-width
// big-endian integers, then varint32-length-prefixed strings. The lock name and the audit
// sequence live in the keys.
std::string EncodeLockValue(const LockRecord& record);
Status DecodeLockValue(std::string_view value, LockRecord* record);

std::string EncodeLockAuditValue(const LockAuditRecord& record);
Status DecodeLockAuditValue(std::string_view value, LockAuditRecord* record);

}  // namespace fencegate::lockstore
