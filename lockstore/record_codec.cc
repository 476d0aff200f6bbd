#include "lockstore/record_codec.h"

namespace fencegate::lockstore {
namespace {

constexpr char kRejectionFormat = 1;

void PutU64(std::string* out, std::uint64_t v) {
  for (int shift = 56; shift >= 0; shift -= 8) out->push_back(static_cast<char>(v >> shift));
}

std::uint64_t GetU64(std::string_view in) {
  std::uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v = (v << 8) | static_cast<unsigned char>(in[i]);
  return v;
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

// Consumes a varint32-prefixed string from the front of `in`.
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

std::string EncodeFenceValue(const FenceRecord& record) {
  std::string out;
  out.reserve(kFenceValueSize);
  PutU64(&out, record.highest);
  PutU64(&out, static_cast<std::uint64_t>(record.advanced_at_ms));
  return out;
}

Status DecodeFenceValue(std::string_view value, FenceRecord* record) {
  if (value.size() != kFenceValueSize) {
    return Status::Corruption("fence value of " + std::to_string(value.size()) + " bytes");
  }
  record->highest = GetU64(value);
  record->advanced_at_ms = static_cast<std::int64_t>(GetU64(value.substr(8)));
  return Status::Ok();
}

std::string EncodeSequenceKey(std::uint64_t sequence) {
  std::string out;
  out.reserve(8);
  PutU64(&out, sequence);
  return out;
}

Status DecodeSequenceKey(std::string_view key, std::uint64_t* sequence) {
  if (key.size() != 8) return Status::Corruption("rejection key is not 8 bytes");
  *sequence = GetU64(key);
  return Status::Ok();
}

std::string EncodeRejectionValue(const RejectionRecord& record) {
  std::string out;
  out.reserve(1 + 3 * 8 + 1 + 6 + record.route.size() + record.fence_key.size() +
              record.method.size() + record.path.size() + record.request_id.size() +
              record.reason.size());
  out.push_back(kRejectionFormat);
  PutU64(&out, static_cast<std::uint64_t>(record.at_ms));
  PutU64(&out, record.presented);
  PutU64(&out, record.highest);
  out.push_back(record.has_presented ? 1 : 0);
  for (const std::string* s : {&record.route, &record.fence_key, &record.method, &record.path,
                               &record.request_id, &record.reason}) {
    PutString(&out, *s);
  }
  return out;
}

Status DecodeRejectionValue(std::string_view value, RejectionRecord* record) {
  constexpr std::size_t kFixed = 1 + 3 * 8 + 1;
  if (value.size() < kFixed || value[0] != kRejectionFormat) {
    return Status::Corruption("rejection record has an unknown format");
  }
  record->at_ms = static_cast<std::int64_t>(GetU64(value.substr(1)));
  record->presented = GetU64(value.substr(9));
  record->highest = GetU64(value.substr(17));
  record->has_presented = value[25] != 0;
  value.remove_prefix(kFixed);
  for (std::string* s : {&record->route, &record->fence_key, &record->method, &record->path,
                         &record->request_id, &record->reason}) {
    if (!GetString(&value, s)) return Status::Corruption("rejection record is truncated");
  }
  if (!value.empty()) return Status::Corruption("rejection record has trailing bytes");
  return Status::Ok();
}

}  // namespace fencegate::lockstore
