#include "resource_adapters/s3/s3_request.h"

#include <algorithm>
#include <charconv>
#include <vector>

#include <boost/beast/core/string.hpp>
#include <boost/url/encode.hpp>
#include <boost/url/rfc/unreserved_chars.hpp>

#include "base/encoding/percent.h"
#include "base/encoding/xml_escape.h"

namespace fencegate::adapters::s3 {

namespace {

namespace http = boost::beast::http;

// SigV4's URI encoding: every byte but the RFC 3986 unreserved ones (and '/' in the path),
// with upper-case hex digits.
void Encode(std::string_view text, bool keep_slash, std::string* out) {
  static constexpr auto kUnreservedOrSlash = boost::urls::unreserved_chars + '/';
  if (keep_slash) {
    boost::urls::encode(text, kUnreservedOrSlash, {}, boost::urls::string_token::append_to(*out));
  } else {
    boost::urls::encode(text, boost::urls::unreserved_chars, {},
                        boost::urls::string_token::append_to(*out));
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
  // '+' stays '+' in both: S3 keys may contain it.
  std::optional<std::string> decoded_path = encoding::PercentDecode(target.substr(0, question));
  if (!decoded_path) return "malformed percent-encoding in the path";
  const std::string& path = *decoded_path;

  std::vector<std::pair<std::string, std::string>> params;
  std::string_view query =
      question == std::string_view::npos ? std::string_view() : target.substr(question + 1);
  while (!query.empty()) {
    const std::size_t amp = query.find('&');
    const std::string_view param = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view() : query.substr(amp + 1);
    if (param.empty()) continue;
    const std::size_t equals = param.find('=');
    auto name = encoding::PercentDecode(param.substr(0, equals));
    auto value = equals == std::string_view::npos
                     ? std::optional<std::string>(std::string())
                     : encoding::PercentDecode(param.substr(equals + 1));
    if (!name || !value) return "malformed percent-encoding in the query";
    params.emplace_back(std::move(*name), std::move(*value));
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

std::string ObjectTarget(std::string_view bucket, std::string_view key) {
  std::string path = "/";
  path.append(bucket).append("/").append(key);
  std::string target;
  Encode(path, true, &target);
  return target;
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

std::string NoSuchKeyXml(const S3Request& request) {
  // The key and bucket come decoded from the request path: any byte may be in them.
  std::string xml =
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?><Error><Code>NoSuchKey</Code><Message>The "
      "specified key does not exist.</Message><Key>";
  encoding::AppendXmlEscaped(request.key, &xml);
  xml += "</Key><BucketName>";
  encoding::AppendXmlEscaped(request.bucket, &xml);
  xml += "</BucketName></Error>";
  return xml;
}

}  // namespace fencegate::adapters::s3
