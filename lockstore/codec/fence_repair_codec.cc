#include "lockstore/codec/fence_repair_codec.h"

#include "lockstore/codec/byte_codec.h"

namespace fencegate::lockstore {
namespace {

constexpr char kRepairFormat = 1;
constexpr std::size_t kFixed = 1 + 3 * 8;

}  // namespace

std::string EncodeFenceRepairValue(const FenceRepairRecord& record) {
  std::string out;
  out.push_back(kRepairFormat);
  PutFixed64(&out, static_cast<std::uint64_t>(record.at_ms));
  PutFixed64(&out, record.previous_highest);
  PutFixed64(&out, record.new_highest);
  for (const std::string* s : {&record.fence_key, &record.operator_id, &record.reason}) {
    PutLengthPrefixed(&out, *s);
  }
  return out;
}

Status DecodeFenceRepairValue(std::string_view value, FenceRepairRecord* record) {
  if (value.size() < kFixed || value[0] != kRepairFormat) {
    return Status::Corruption("fence repair record has an unknown format");
  }
  value.remove_prefix(1);
  std::uint64_t at_ms = 0;
  GetFixed64(&value, &at_ms);
  record->at_ms = static_cast<std::int64_t>(at_ms);
  GetFixed64(&value, &record->previous_highest);
  GetFixed64(&value, &record->new_highest);
  for (std::string* s : {&record->fence_key, &record->operator_id, &record->reason}) {
    if (!GetLengthPrefixed(&value, s)) return Status::Corruption("fence repair record truncated");
  }
  if (!value.empty()) return Status::Corruption("fence repair record has trailing bytes");
  return Status::Ok();
}

}  // namespace fencegate::lockstore
