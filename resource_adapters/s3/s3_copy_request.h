#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "base/net/http_header.h"
#include "resource_adapters/s3/s3_request.h"

namespace fencegate::adapters::s3 {

// The client's CopyObject fields (PutObject with x-amz-copy-source) the adapter interprets.
inline constexpr std::string_view kCopySource = "x-amz-copy-source";
inline constexpr std::string_view kMetadataDirective = "x-amz-metadata-directive";

// True for a PUT /bucket/key that copies another object rather than carrying a body.
bool IsCopyObject(const Fields& fields);

// Parses x-amz-copy-source ("bucket/key" or "/bucket/key", percent-encoded, optionally
// "?versionId=V") into the GET of the source object. Returns an error message for a value
// that names no object or is malformed.
std::optional<std::string> ParseCopySource(std::string_view copy_source, S3Request* out);

// Sets `header`'s stored metadata (Content-Type, Content-Encoding, Content-Language,
// Content-Disposition, Cache-Control, Expires, x-amz-meta-*) the way S3 chooses it for a copy:
// under x-amz-metadata-directive REPLACE the client's own fields stay; otherwise (COPY, the
// default) they are replaced by the source's. The fencing metadata of the source never travels:
// the destination is the fenced resource and gets the presented token.
void CarryCopiedMetadata(const Fields& source, RequestHeader* header);

// Removes the fields that make a PUT a copy, for the copy sent as GET + PUT.
void EraseCopyFields(RequestHeader* header);

// Removes the x-amz-copy-source-if-* conditions (checked by the gateway on the source's read).
void EraseCopySourceConditions(RequestHeader* header);

// The copy-source conditions (x-amz-copy-source-if-match, -if-none-match) as If-Match and
// If-None-Match fields, for ClientPreconditionsHold against the source's version.
Fields CopySourceConditions(const Fields& client);

// S3's CopyObjectResult body for a copy written as GET + PUT.
std::string CopyObjectResultXml(std::string_view etag, std::int64_t last_modified_unix_ms);

}  // namespace fencegate::adapters::s3
