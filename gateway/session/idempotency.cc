#include "gateway/session/idempotency.h"

#include <ctime>

#include <boost/beast/core/string.hpp>

#include "base/encoding/sha256.h"

namespace fencegate::gateway {
namespace beast = boost::beast;

bool ParseIdempotencyKey(std::string_view value, std::string* key) {
  key->clear();
  if (!value.empty() && value.front() == '"') {
    // RFC 8941 sf-string: printable ASCII, only \" and \\ escaped, and nothing after the quote.
    std::size_t i = 1;
    for (; i < value.size(); ++i) {
      const char c = value[i];
      if (c == '"') break;
      if (c == '\\') {
        if (++i == value.size() || (value[i] != '"' && value[i] != '\\')) return false;
        key->push_back(value[i]);
        continue;
      }
      if (c < 0x20 || c > 0x7e) return false;
      key->push_back(c);
    }
    if (i + 1 != value.size()) return false;  // unterminated, or parameters/trailing bytes
  } else {
    for (const char c : value) {
      if (c <= 0x20 || c > 0x7e) return false;
    }
    key->assign(value);
  }
  return !key->empty() && key->size() <= kMaxIdempotencyKeyLength;
}

namespace {

void AppendPart(std::string_view part, std::string* out) {
  const auto size = static_cast<std::uint32_t>(part.size());
  for (int shift = 24; shift >= 0; shift -= 8) out->push_back(static_cast<char>(size >> shift));
  out->append(part);
}

}  // namespace

std::string RequestDigest(std::string_view method, std::string_view target) {
  std::string input;
  AppendPart(method, &input);
  AppendPart(target, &input);
  return encoding::Sha256Of(input);
}

std::string IdempotencyScopeKey(std::string_view route, std::string_view fence_key,
                                std::string_view identity, std::string_view key) {
  std::string out;
  AppendPart(route, &out);
  AppendPart(fence_key, &out);
  AppendPart(identity, &out);
  AppendPart(key, &out);
  return out;
}

std::string DeriveForwardKey(std::string_view route, std::string_view fence_key,
                             std::string_view key) {
  std::string input = "fencegate-idempotency-v1";
  AppendPart(route, &input);
  AppendPart(fence_key, &input);
  AppendPart(key, &input);
  return encoding::Sha256Hex(input);
}

std::string HttpDate(std::int64_t unix_ms) {
  const std::time_t seconds = static_cast<std::time_t>(unix_ms / 1000);
  std::tm tm{};
  gmtime_r(&seconds, &tm);
  char buffer[40];
  const std::size_t length = std::strftime(buffer, sizeof buffer, "%a, %d %b %Y %H:%M:%S GMT", &tm);
  return std::string(buffer, length);
}

bool IsStoredResponseField(std::string_view name) {
  for (std::string_view skipped :
       {"Content-Length", "Transfer-Encoding", "Connection", "Keep-Alive", "X-Request-Id",
        "Idempotency-Expires", "Idempotency-Replayed"}) {
    if (beast::iequals(name, skipped)) return false;
  }
  return true;
}

// Layout: status (u16), field count (u32), each name and value length-prefixed (u32), body.
std::string EncodeStoredResponse(const StoredResponse& response) {
  std::string out;
  out.push_back(static_cast<char>(response.status >> 8));
  out.push_back(static_cast<char>(response.status & 0xff));
  std::string fields;
  std::uint32_t count = 0;
  for (const auto& field : response.fields) {
    AppendPart(field.name_string(), &fields);
    AppendPart(field.value(), &fields);
    ++count;
  }
  for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<char>(count >> shift));
  out += fields;
  AppendPart(response.body, &out);
  return out;
}

namespace {

bool ReadPart(std::string_view* data, std::string_view* part) {
  if (data->size() < 4) return false;
  std::uint32_t size = 0;
  for (int i = 0; i < 4; ++i) size = (size << 8) | static_cast<unsigned char>((*data)[i]);
  data->remove_prefix(4);
  if (data->size() < size) return false;
  *part = data->substr(0, size);
  data->remove_prefix(size);
  return true;
}

}  // namespace

bool DecodeStoredResponse(std::string_view bytes, StoredResponse* response) {
  if (bytes.size() < 6) return false;
  response->status =
      (static_cast<unsigned char>(bytes[0]) << 8) | static_cast<unsigned char>(bytes[1]);
  std::uint32_t count = 0;
  for (int i = 2; i < 6; ++i) count = (count << 8) | static_cast<unsigned char>(bytes[i]);
  bytes.remove_prefix(6);
  response->fields.clear();
  for (std::uint32_t i = 0; i < count; ++i) {
    std::string_view name;
    std::string_view value;
    if (!ReadPart(&bytes, &name) || !ReadPart(&bytes, &value) || name.empty()) return false;
    response->fields.insert(name, value);
  }
  std::string_view body;
  if (!ReadPart(&bytes, &body) || !bytes.empty()) return false;
  response->body.assign(body);
  return response->status >= 100 && response->status <= 999;
}

}  // namespace fencegate::gateway
