#include "lockstore/codec/lock_record_codec.h"

#include <cstdint>

#include "lockstore/codec/byte_codec.h"

namespace fencegate::lockstore {
namespace {

constexpr char kLockFormat = 1;
constexpr char kAuditFormat = 1;

bool GetI64(std::string_view* in, std::int64_t* v) {
  std::uint64_t u = 0;
  if (!GetFixed64(in, &u)) return false;
  *v = static_cast<std::int64_t>(u);
  return true;
}

}  // namespace

std::string EncodeLockValue(const LockRecord& record) {
  std::string out;
  out.push_back(kLockFormat);
  out.push_back(static_cast<char>(record.state));
  PutFixed64(&out, record.last_token);
  PutFixed64(&out, static_cast<std::uint64_t>(record.ttl_ms));
  PutFixed64(&out, static_cast<std::uint64_t>(record.acquired_at_unix_ms));
  PutLengthPrefixed(&out, record.owner_hash);
  return out;
}

Status DecodeLockValue(std::string_view value, LockRecord* record) {
  if (value.size() < 2 || value[0] != kLockFormat) return Status::Corruption("lock value format");
  const auto state = static_cast<std::uint8_t>(value[1]);
  if (state > static_cast<std::uint8_t>(LockRecord::State::kQuarantined)) {
    return Status::Corruption("lock value state");
  }
  record->state = static_cast<LockRecord::State>(state);
  value.remove_prefix(2);
  if (!GetFixed64(&value, &record->last_token) || !GetI64(&value, &record->ttl_ms) ||
      !GetI64(&value, &record->acquired_at_unix_ms) ||
      !GetLengthPrefixed(&value, &record->owner_hash) || !value.empty()) {
    return Status::Corruption("lock value truncated or oversized");
  }
  return Status::Ok();
}

std::string EncodeLockAuditValue(const LockAuditRecord& record) {
  std::string out;
  out.push_back(kAuditFormat);
  PutFixed64(&out, static_cast<std::uint64_t>(record.at_unix_ms));
  PutFixed64(&out, record.previous_token);
  PutFixed64(&out, record.fence_token);
  PutLengthPrefixed(&out, record.lock);
  PutLengthPrefixed(&out, record.operator_id);
  PutLengthPrefixed(&out, record.reason);
  PutLengthPrefixed(&out, record.previous_owner_id);
  return out;
}

Status DecodeLockAuditValue(std::string_view value, LockAuditRecord* record) {
  if (value.empty() || value[0] != kAuditFormat) return Status::Corruption("lock audit format");
  value.remove_prefix(1);
  if (!GetI64(&value, &record->at_unix_ms) || !GetFixed64(&value, &record->previous_token) ||
      !GetFixed64(&value, &record->fence_token) || !GetLengthPrefixed(&value, &record->lock) ||
      !GetLengthPrefixed(&value, &record->operator_id) ||
      !GetLengthPrefixed(&value, &record->reason) ||
      !GetLengthPrefixed(&value, &record->previous_owner_id) || !value.empty()) {
    return Status::Corruption("lock audit value truncated or oversized");
  }
  return Status::Ok();
}

}  // namespace fencegate::lockstore
