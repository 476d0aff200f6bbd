#include "resource_adapters/s3/s3_request.h"

#include <algorithm>
#include <charconv>
#include <vector>

#include <boost/beast/core/string.hpp>

namespace fencegate::adapters::s3 {

namespace {

namespace http = boost::beast::http;

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Decodes %XX escapes; false for a malformed one. '+' stays '+': S3 keys may contain it.
bool Decode(std::string_view text, std::string* out) {
  out->clear();
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '%') {
      out->push_back(text[i]);
      continue;
    }
    if (i + 2 >= text.size()) return false;
    const int high = HexValue(text[i + 1]);
    const int low = HexValue(text[i + 2]);
    if (high < 0 || low < 0) return false;
    out->push_back(static_cast<char>(high * 16 + low));
    i += 2;
  }
  return true;
}

void Encode(std::string_view text, bool keep_slash, std::string* out) {
  static constexpr char kDigits[] = "0123456789ABCDEF";
  for (char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    const bool unreserved = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
                            (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.' ||
                            c == '~' || (keep_slash && c == '/');
    if (unreserved) {
      out->push_back(c);
    } else {
      out->push_back('%');
      out->push_back(kDigits[byte >> 4]);
      out->push_back(kDigits[byte & 0xf]);
    }
  }
}

bool HasParam(const std::vector<std::pair<std::string, std::string>>& params,
              std::string_view name) {
  return std::any_of(params.begin(), params.end(),
                     [&](const auto& param) { return param.first == name; });
}

}  // namespace

std::optional<std::string> ParseS3Request(http::verb method, std::string_view target,
                                          S3Request* out) {
  if (target.empty() || target.front() != '/') return "the target must be an absolute path";
  const std::size_t question = target.find('?');
  std::string path;
  if (!Decode(target.substr(0, question), &path)) return "malformed percent-encoding in the path";

  std::vector<std::pair<std::string, std::string>> params;
  std::string_view query =
      question == std::string_view::npos ? std::string_view() : target.substr(question + 1);
  while (!query.empty()) {
    const std::size_t amp = query.find('&');
    const std::string_view param = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view() : query.substr(amp + 1);
    if (param.empty()) continue;
    const std::size_t equals = param.find('=');
    std::pair<std::string, std::string> decoded;
    if (!Decode(param.substr(0, equals), &decoded.first) ||
        (equals != std::string_view::npos && !Decode(param.substr(equals + 1), &decoded.second))) {
      return "malformed percent-encoding in the query";
    }
    params.push_back(std::move(decoded));
  }

  const std::size_t bucket_end = path.find('/', 1);
  out->bucket =
      path.substr(1, bucket_end == std::string::npos ? std::string::npos : bucket_end - 1);
  out->key = bucket_end == std::string::npos ? std::string() : path.substr(bucket_end + 1);

  out->target.clear();
  Encode(path, true, &out->target);
  std::sort(params.begin(), params.end());
  for (std::size_t i = 0; i < params.size(); ++i) {
    out->target.push_back(i == 0 ? '?' : '&');
    Encode(params[i].first, false, &out->target);
    out->target.push_back('=');
    Encode(params[i].second, false, &out->target);
  }

  const bool object = !out->bucket.empty() && !out->key.empty();
  const bool upload = HasParam(params, "uploadId");
  switch (method) {
    case http::verb::get:
    case http::verb::head:
      out->operation = Operation::kRead;
      break;
    case http::verb::put:
      out->operation = !object  ? Operation::kOther
                       : upload ? Operation::kUploadPart
                                : Operation::kPutObject;
      break;
    case http::verb::post:
      if (object && HasParam(params, "uploads")) {
        out->operation = Operation::kCreateMultipart;
      } else if (object && upload) {
        out->operation = Operation::kCompleteMultipart;
      } else if (HasParam(params, "delete")) {
        out->operation = Operation::kMultiDelete;
      } else {
        out->operation = Operation::kOther;
      }
      break;
    case http::verb::delete_:
      out->operation = !object  ? Operation::kOther
                       : upload ? Operation::kAbortMultipart
                                : Operation::kDeleteObject;
      break;
    default:
      out->operation = Operation::kOther;
      break;
  }
  return std::nullopt;
}

std::string_view BareEtag(std::string_view etag) {
  if (etag.starts_with("W/")) etag.remove_prefix(2);
  if (etag.size() >= 2 && etag.front() == '"' && etag.back() == '"') {
    etag = etag.substr(1, etag.size() - 2);
  }
  return etag;
}

ObjectVersion VersionFromFields(const Fields& fields) {
  ObjectVersion version;
  version.exists = true;
  version.etag = std::string(BareEtag(fields[http::field::etag]));
  const auto token = fields.find(kTokenMeta);
  if (token != fields.end()) {
    const std::string_view text = token->value();
    std::uint64_t value = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec == std::errc() && end == text.data() + text.size()) version.token = value;
  }
  version.tombstone = fields.find(kTombstoneMeta) != fields.end();
  return version;
}

namespace {

// True when the comma-separated entity-tag list `list` names `etag` (or is "*").
bool ListMatches(std::string_view list, std::string_view etag) {
  while (!list.empty()) {
    const std::size_t comma = list.find(',');
    std::string_view item = list.substr(0, comma);
    list = comma == std::string_view::npos ? std::string_view() : list.substr(comma + 1);
    while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
    while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
    if (item == "*" || (!item.starts_with("W/") && BareEtag(item) == etag)) return true;
  }
  return false;
}

}  // namespace

bool ClientPreconditionsHold(const Fields& fields, const ObjectVersion& seen) {
  const bool live = seen.exists && !seen.tombstone;
  const auto if_match = fields.find(http::field::if_match);
  if (if_match != fields.end() && (!live || !ListMatches(if_match->value(), seen.etag))) {
    return false;
  }
  const auto if_none_match = fields.find(http::field::if_none_match);
  if (if_none_match != fields.end() && live && ListMatches(if_none_match->value(), seen.etag)) {
    return false;
  }
  return true;
}

}  // namespace fencegate::adapters::s3
