#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <boost/beast/http/fields.hpp>
#include <boost/beast/http/verb.hpp>

#include "base/net/http_header.h"

namespace fencegate::adapters::s3 {

// What a path-style S3 request does, as far as fencing cares.
enum class Operation {
  kRead,               // GET/HEAD of an object, a bucket listing, anything without side effects
  kPutObject,          // PUT /bucket/key (also CopyObject: it writes the key)
  kDeleteObject,       // DELETE /bucket/key
  kCreateMultipart,    // POST /bucket/key?uploads
  kUploadPart,         // PUT /bucket/key?partNumber=N&uploadId=U
  kCompleteMultipart,  // POST /bucket/key?uploadId=U
  kAbortMultipart,     // DELETE /bucket/key?uploadId=U
  kMultiDelete,        // POST /bucket?delete: many keys at once, no per-key condition possible
  kOther,              // bucket-level operations: passed through, signed
};

struct S3Request {
  Operation operation = Operation::kOther;
  std::string bucket;
  std::string key;     // decoded; empty for bucket-level requests
  std::string target;  // re-encoded the way SigV4 canonicalises it, sent to the backend
};

// Parses a path-style target ("/bucket/key?query"). The path and the query are decoded and
// encoded again in SigV4's canonical form (RFC 3986 unreserved characters bare, everything
// else %XX), so the target sent is the one signed. Returns an error message for a malformed
// percent-encoding or a target that is not an absolute path.
std::optional<std::string> ParseS3Request(boost::beast::http::verb method, std::string_view target,
                                          S3Request* out);

// The target of an object ("/bucket/key"), encoded as ParseS3Request encodes a path.
std::string ObjectTarget(std::string_view bucket, std::string_view key);

// The body of the 404 the adapter answers for a tombstoned key, as S3 words NoSuchKey.
std::string NoSuchKeyXml(const S3Request& request);

// The metadata fields the adapter keeps with every fenced object; clients cannot set them.
inline constexpr std::string_view kTokenMeta = "x-amz-meta-fencing-token";
inline constexpr std::string_view kTombstoneMeta = "x-amz-meta-fencing-tombstone";

// What a HEAD told about the object a write is about to replace.
struct ObjectVersion {
  bool exists = false;      // something is stored under the key (a tombstone too)
  bool tombstone = false;   // a fenced DELETE left it: the object is deleted for clients
  std::string etag;         // without quotes
  std::uint64_t token = 0;  // x-amz-meta-fencing-token; 0 for objects written without one
};

// Reads an ObjectVersion from a 200 HEAD/PUT response's fields.
ObjectVersion VersionFromFields(const Fields& fields);

// An ETag without its surrounding quotes (and without a weak prefix).
std::string_view BareEtag(std::string_view etag);

// Evaluates a client's If-Match / If-None-Match against the version the write would replace
// (RFC 9110 13.1.1/13.1.2; a tombstone counts as no object). True when the write may proceed.
bool ClientPreconditionsHold(const Fields& fields, const ObjectVersion& seen);

}  // namespace fencegate::adapters::s3
