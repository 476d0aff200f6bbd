#include "lockstore/idempotency/idempotency_record.h"

#include "lockstore/codec/byte_codec.h"

namespace fencegate::lockstore {
namespace {

constexpr char kFormat = 1;

void PutFixed(std::uint64_t value, int bytes, std::string* out) {
  for (int shift = (bytes - 1) * 8; shift >= 0; shift -= 8) {
    out->push_back(static_cast<char>((value >> shift) & 0xff));
  }
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

  bool String(std::string* out) { return GetLengthPrefixed(&data_, out); }

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
  PutLengthPrefixed(&out, record.request_digest);
  PutLengthPrefixed(&out, record.body_digest);
  PutLengthPrefixed(&out, record.response);
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
