#pragma once

#include <string>
#include <string_view>

#include <boost/beast/http/message.hpp>

#include "base/net/http_header.h"

namespace fencegate::adapters::s3 {

// The backend credentials the gateway signs with; clients never see them.
struct Credentials {
  std::string access_key;
  std::string secret_key;
};

// The payload hash sent when the body is not hashed, so that bodies stream (AWS SigV4 for S3).
inline constexpr std::string_view kUnsignedPayload = "UNSIGNED-PAYLOAD";

// Signs `header` in place with AWS Signature Version 4 (service "s3"): sets X-Amz-Date and
// X-Amz-Content-Sha256 (to `payload_hash`) and Authorization. Signs Host, Content-MD5,
// Content-Type, Range and every x-amz-* field. `amz_date` is "YYYYMMDDTHHMMSSZ" (UTC). The
// target must be in the form it is sent in (already percent-encoded).
void SignV4(RequestHeader& header, const Credentials& credentials, std::string_view region,
            std::string_view amz_date, std::string_view payload_hash);

// The pieces of SignV4, exposed so the unit test can check each against AWS's published
// example.
std::string CanonicalRequest(const RequestHeader& header, std::string_view payload_hash,
                             std::string* signed_headers);
std::string StringToSign(std::string_view amz_date, std::string_view scope,
                         std::string_view canonical_request);
std::string Signature(std::string_view secret_key, std::string_view date, std::string_view region,
                      std::string_view string_to_sign);

// The current UTC time as "YYYYMMDDTHHMMSSZ".
std::string AmzDateNow();

}  // namespace fencegate::adapters::s3
