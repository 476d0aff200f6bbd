#include "resource_adapters/s3/s3_copy_request.h"

#include <array>

#include <boost/beast/core/string.hpp>

#include "base/encoding/rfc3339.h"
#include "base/encoding/xml_escape.h"

namespace fencegate::adapters::s3 {

namespace {

namespace http = boost::beast::http;
using boost::beast::iequals;

constexpr std::string_view kUserMetaPrefix = "x-amz-meta-";
constexpr std::string_view kCopySourceConditionPrefix = "x-amz-copy-source-if-";

bool HasPrefix(std::string_view name, std::string_view prefix) {
  return name.size() >= prefix.size() && iequals(name.substr(0, prefix.size()), prefix);
}

// The fields S3 stores with an object besides its user metadata.
constexpr std::array<http::field, 6> kStoredContentFields = {
    http::field::content_type,        http::field::content_encoding, http::field::content_language,
    http::field::content_disposition, http::field::cache_control,    http::field::expires,
};

bool IsUserMetadata(std::string_view name) {
  return name.size() > kUserMetaPrefix.size() && HasPrefix(name, kUserMetaPrefix);
}

bool IsFencingMetadata(std::string_view name) {
  return iequals(name, kTokenMeta) || iequals(name, kTombstoneMeta);
}

bool IsStoredMetadata(const Fields::value_type& field) {
  for (const http::field content : kStoredContentFields) {
    if (field.name() == content) return true;
  }
  return IsUserMetadata(field.name_string());
}

}  // namespace

bool IsCopyObject(const Fields& fields) { return fields.count(kCopySource) != 0; }

std::optional<std::string> ParseCopySource(std::string_view copy_source, S3Request* out) {
  while (copy_source.starts_with('/')) copy_source.remove_prefix(1);
  if (copy_source.empty()) return "x-amz-copy-source names no object";
  if (auto error = ParseS3Request(http::verb::get, "/" + std::string(copy_source), out)) {
    return "x-amz-copy-source: " + *error;
  }
  if (out->bucket.empty() || out->key.empty()) {
    return "x-amz-copy-source must name an object as bucket/key";
  }
  return std::nullopt;
}

void CarryCopiedMetadata(const Fields& source, RequestHeader* header) {
  const std::string_view directive = (*header)[kMetadataDirective];
  if (iequals(directive, "REPLACE")) return;
  header->erase_if(IsStoredMetadata);
  for (const Fields::value_type& field : source) {
    if (IsStoredMetadata(field) && !IsFencingMetadata(field.name_string())) {
      header->insert(field.name(), field.name_string(), field.value());
    }
  }
}

void EraseCopyFields(RequestHeader* header) {
  header->erase_if(
      [](const Fields::value_type& field) { return HasPrefix(field.name_string(), kCopySource); });
  header->erase(kMetadataDirective);
  header->erase("x-amz-tagging-directive");
}

void EraseCopySourceConditions(RequestHeader* header) {
  header->erase_if([](const Fields::value_type& field) {
    return HasPrefix(field.name_string(), kCopySourceConditionPrefix);
  });
}

Fields CopySourceConditions(const Fields& client) {
  Fields conditions;
  const auto if_match = client.find("x-amz-copy-source-if-match");
  if (if_match != client.end()) conditions.set(http::field::if_match, if_match->value());
  const auto if_none_match = client.find("x-amz-copy-source-if-none-match");
  if (if_none_match != client.end()) {
    conditions.set(http::field::if_none_match, if_none_match->value());
  }
  return conditions;
}

std::string CopyObjectResultXml(std::string_view etag, std::int64_t last_modified_unix_ms) {
  std::string xml =
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?><CopyObjectResult "
      "xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\"><LastModified>";
  encoding::AppendRfc3339Ms(last_modified_unix_ms, &xml);
  xml += "</LastModified><ETag>&quot;";
  encoding::AppendXmlEscaped(BareEtag(etag), &xml);
  xml += "&quot;</ETag></CopyObjectResult>";
  return xml;
}

}  // namespace fencegate::adapters::s3
