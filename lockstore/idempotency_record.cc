#include "lockstore/idempotency_record.h"

namespace fencegate::lockstore {
namespace {

constexpr char kFormat = 1;

void PutFixed(std::uint64_t value, int bytes, std::string* out) {
  for (int shift = (bytes - 1) * 8; shift >= 0; shift -= 8) {
    out->push_back(static_cast<char>((value >> shift) & 0xff));
  }
}

void PutString(std::string_view text, std::string* out) {
  auto length = static_cast<std::uint32_t>(text.size());
  while (length >= 0x80) {
    out->push_back(static_cast<char>((length & 0x7f) | 0x80));
    length >>= 7;
  }
  out->push_back(static_cast<char>(length));
  out->append(text);
}

class Cursor {
 public:
  explicit Cursor(std::string_view data) : data_(data) {}

  bool Fixed(int bytes, std::uint64_t* out) {
    if (data_.size() < static_cast<std::size_t>(bytes)) return false;
    std::uint64_t value = 0;
    for (int i = 0; i < bytes; ++i) value = (value << 8) | static_cast<unsigned char>(data_[i]);
    data_.remove_prefix(bytes);
    *out = value;
    return true;
  }

  bool String(std::string* out) {
    std::uint32_t length = 0;
    for (int shift = 0;; shift += 7) {
      if (data_.empty() || shift > 28) return false;
      const auto byte = static_cast<unsigned char>(data_.front());
      data_.remove_prefix(1);
      // One encoding per length: no overlong forms (a trailing zero byte), nothing past 32 bits.
      if ((shift > 0 && byte == 0) || (shift == 28 && byte > 0x0f)) return false;
      length |= static_cast<std::uint32_t>(byte & 0x7f) << shift;
      if ((byte & 0x80) == 0) break;
    }
    if (data_.size() < length) return false;
    out->assign(data_.substr(0, length));
    data_.remove_prefix(length);
    return true;
  }

  bool empty() const { return data_.empty(); }

 private:
  std::string_view data_;
};

}  // namespace

std::string EncodeIdempotencyRecord(const IdempotencyRecord& record) {
  std::string out;
  out.reserve(40 + record.request_digest.size() + record.body_digest.size() +
              record.response.size());
  out.push_back(kFormat);
  out.push_back(static_cast<char>(record.state));
  PutFixed(record.epoch, 8, &out);
  PutFixed(static_cast<std::uint64_t>(record.created_ms), 8, &out);
  PutFixed(static_cast<std::uint64_t>(record.expires_ms), 8, &out);
  PutFixed(record.upstream_status, 4, &out);
  PutString(record.request_digest, &out);
  PutString(record.body_digest, &out);
  PutString(record.response, &out);
  return out;
}

Status DecodeIdempotencyRecord(std::string_view value, IdempotencyRecord* record) {
  if (value.size() < 2 || value[0] != kFormat) {
    return Status::Corruption("idempotency record: unknown format");
  }
  const auto state = static_cast<unsigned char>(value[1]);
  if (state < 1 || state > 3) return Status::Corruption("idempotency record: unknown state");
  record->state = static_cast<IdempotencyRecord::State>(state);
  Cursor cursor(value.substr(2));
  std::uint64_t created = 0;
  std::uint64_t expires = 0;
  std::uint64_t upstream = 0;
  if (!cursor.Fixed(8, &record->epoch) || !cursor.Fixed(8, &created) ||
      !cursor.Fixed(8, &expires) || !cursor.Fixed(4, &upstream) ||
      !cursor.String(&record->request_digest) || !cursor.String(&record->body_digest) ||
      !cursor.String(&record->response) || !cursor.empty()) {
    return Status::Corruption("idempotency record: truncated or trailing bytes");
  }
  record->created_ms = static_cast<std::int64_t>(created);
  record->expires_ms = static_cast<std::int64_t>(expires);
  record->upstream_status = static_cast<std::uint32_t>(upstream);
  return Status::Ok();
}

}  // namespace fencegate::lockstore
