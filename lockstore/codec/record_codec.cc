#include "lockstore/codec/record_codec.h"

#include "lockstore/codec/byte_codec.h"

namespace fencegate::lockstore {
namespace {

constexpr char kRejectionFormat = 1;
constexpr char kRejectionFormatWithTrace = 2;
constexpr char kRejectionFormatWithCaller = 3;

// Reads the 8-byte integer at the front of `in`, whose size the caller has checked.
std::uint64_t Fixed64At(std::string_view in) {
  std::uint64_t value = 0;
  GetFixed64(&in, &value);
  return value;
}

}  // namespace

EncodedFenceValue EncodeFenceValue(const FenceRecord& record) {
  EncodedFenceValue out;
  const auto put = [&out](std::size_t at, std::uint64_t value) {
    for (std::size_t i = 0; i < 8; ++i) out[at + i] = static_cast<char>(value >> (56 - 8 * i));
  };
  put(0, record.highest);
  put(8, static_cast<std::uint64_t>(record.advanced_at_ms));
  return out;
}

Status DecodeFenceValue(std::string_view value, FenceRecord* record) {
  if (value.size() != kFenceValueSize) {
    return Status::Corruption("fence value of " + std::to_string(value.size()) + " bytes");
  }
  record->highest = Fixed64At(value);
  record->advanced_at_ms = static_cast<std::int64_t>(Fixed64At(value.substr(8)));
  return Status::Ok();
}

std::string EncodeSequenceKey(std::uint64_t sequence) {
  std::string out;
  out.reserve(8);
  PutFixed64(&out, sequence);
  return out;
}

Status DecodeSequenceKey(std::string_view key, std::uint64_t* sequence) {
  if (key.size() != 8) return Status::Corruption("rejection key is not 8 bytes");
  *sequence = Fixed64At(key);
  return Status::Ok();
}

std::string EncodeRejectionValue(const RejectionRecord& record) {
  // The oldest format that holds the record, so that an older gateway reads what it can.
  const bool caller =
      !record.client.empty() || !record.principal.empty() || !record.user_agent.empty();
  const bool traced = caller || !record.trace_id.empty();
  std::string out;
  out.reserve(1 + 3 * 8 + 1 + 10 + record.route.size() + record.fence_key.size() +
              record.method.size() + record.path.size() + record.request_id.size() +
              record.reason.size() + record.trace_id.size() + record.client.size() +
              record.principal.size() + record.user_agent.size());
  out.push_back(caller ? kRejectionFormatWithCaller
                       : (traced ? kRejectionFormatWithTrace : kRejectionFormat));
  PutFixed64(&out, static_cast<std::uint64_t>(record.at_ms));
  PutFixed64(&out, record.presented);
  PutFixed64(&out, record.highest);
  out.push_back(record.has_presented ? 1 : 0);
  for (const std::string* s : {&record.route, &record.fence_key, &record.method, &record.path,
                               &record.request_id, &record.reason}) {
    PutLengthPrefixed(&out, *s);
  }
  if (traced) PutLengthPrefixed(&out, record.trace_id);
  if (caller) {
    for (const std::string* s : {&record.client, &record.principal, &record.user_agent}) {
      PutLengthPrefixed(&out, *s);
    }
  }
  return out;
}

Status DecodeRejectionValue(std::string_view value, RejectionRecord* record) {
  constexpr std::size_t kFixed = 1 + 3 * 8 + 1;
  if (value.size() < kFixed ||
      (value[0] != kRejectionFormat && value[0] != kRejectionFormatWithTrace &&
       value[0] != kRejectionFormatWithCaller)) {
    return Status::Corruption("rejection record has an unknown format");
  }
  const char format = value[0];
  record->at_ms = static_cast<std::int64_t>(Fixed64At(value.substr(1)));
  record->presented = Fixed64At(value.substr(9));
  record->highest = Fixed64At(value.substr(17));
  record->has_presented = value[25] != 0;
  value.remove_prefix(kFixed);
  for (std::string* s : {&record->route, &record->fence_key, &record->method, &record->path,
                         &record->request_id, &record->reason}) {
    if (!GetLengthPrefixed(&value, s)) return Status::Corruption("rejection record is truncated");
  }
  record->trace_id.clear();
  record->client.clear();
  record->principal.clear();
  record->user_agent.clear();
  if (format != kRejectionFormat && !GetLengthPrefixed(&value, &record->trace_id)) {
    return Status::Corruption("rejection record is truncated");
  }
  if (format == kRejectionFormatWithCaller) {
    for (std::string* s : {&record->client, &record->principal, &record->user_agent}) {
      if (!GetLengthPrefixed(&value, s)) return Status::Corruption("rejection record is truncated");
    }
  }
  if (!value.empty()) return Status::Corruption("rejection record has trailing bytes");
  return Status::Ok();
}

}  // namespace fencegate::lockstore
