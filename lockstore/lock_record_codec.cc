#include "lockstore/lock_record_codec.h"

#include <cstdint>

namespace fencegate::lockstore {
namespace {

constexpr char kLockFormat = 1;
constexpr char kAuditFormat = 1;

void PutU64(std::string* out, std::uint64_t v) {
  for (int shift = 56; shift >= 0; shift -= 8) out->push_back(static_cast<char>(v >> shift));
}

bool GetU64(std::string_view* in, std::uint64_t* v) {
  if (in->size() < 8) return false;
  *v = 0;
  for (int i = 0; i < 8; ++i) *v = (*v << 8) | static_cast<unsigned char>((*in)[i]);
  in->remove_prefix(8);
  return true;
}

bool GetI64(std::string_view* in, std::int64_t* v) {
  std::uint64_t u = 0;
  if (!GetU64(in, &u)) return false;
  *v = static_cast<std::int64_t>(u);
  return true;
}

void PutString(std::string* out, std::string_view s) {
  auto length = static_cast<std::uint32_t>(s.size());
  while (length >= 0x80) {
    out->push_back(static_cast<char>((length & 0x7f) | 0x80));
    length >>= 7;
  }
  out->push_back(static_cast<char>(length));
  out->append(s);
}

bool GetString(std::string_view* in, std::string* s) {
  std::uint32_t length = 0;
  for (int shift = 0;; shift += 7) {
    if (in->empty() || shift > 28) return false;
    const auto byte = static_cast<unsigned char>(in->front());
    in->remove_prefix(1);
    length |= static_cast<std::uint32_t>(byte & 0x7f) << shift;
    if ((byte & 0x80) == 0) break;
  }
  if (in->size() < length) return false;
  s->assign(in->substr(0, length));
  in->remove_prefix(length);
  return true;
}

}  // namespace

std::string EncodeLockValue(const LockRecord& record) {
  std::string out;
  out.push_back(kLockFormat);
  out.push_back(static_cast<char>(record.state));
  PutU64(&out, record.last_token);
  PutU64(&out, static_cast<std::uint64_t>(record.ttl_ms));
  PutU64(&out, static_cast<std::uint64_t>(record.acquired_at_unix_ms));
  PutString(&out, record.owner_hash);
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
  if (!GetU64(&value, &record->last_token) || !GetI64(&value, &record->ttl_ms) ||
      !GetI64(&value, &record->acquired_at_unix_ms) || !GetString(&value, &record->owner_hash) ||
      !value.empty()) {
    return Status::Corruption("lock value truncated or oversized");
  }
  return Status::Ok();
}

std::string EncodeLockAuditValue(const LockAuditRecord& record) {
  std::string out;
  out.push_back(kAuditFormat);
  PutU64(&out, static_cast<std::uint64_t>(record.at_unix_ms));
  PutU64(&out, record.previous_token);
  PutU64(&out, record.fence_token);
  PutString(&out, record.lock);
  PutString(&out, record.operator_id);
  PutString(&out, record.reason);
  PutString(&out, record.previous_owner_id);
  return out;
}

Status DecodeLockAuditValue(std::string_view value, LockAuditRecord* record) {
  if (value.empty() || value[0] != kAuditFormat) return Status::Corruption("lock audit format");
  value.remove_prefix(1);
  if (!GetI64(&value, &record->at_unix_ms) || !GetU64(&value, &record->previous_token) ||
      !GetU64(&value, &record->fence_token) || !GetString(&value, &record->lock) ||
      !GetString(&value, &record->operator_id) || !GetString(&value, &record->reason) ||
      !GetString(&value, &record->previous_owner_id) || !value.empty()) {
    return Status::Corruption("lock audit value truncated or oversized");
  }
  return Status::Ok();
}

}  // namespace fencegate::lockstore
