// Fuzzes the S3 adapter's SigV4 canonicalisation (resource_adapters/s3/sigv4.*). Input lines:
// method, target (path and query, already encoded as sent), then header fields "Name: value".
// Checks the rules that make a signature reproducible by the backend: the canonical request does
// not depend on the order of query parameters, on the order of distinct header fields, or on the
// case of field names; SignedHeaders is lower case, sorted, without repeats, and names only the
// fields SigV4 signs here; SignV4 always yields a well-formed Authorization value.

#include <algorithm>
#include <cctype>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "resource_adapters/s3/sigv4.h"
#include "tests/fuzz/fuzz_support.h"

namespace {

namespace http = boost::beast::http;
using fencegate::adapters::s3::CanonicalRequest;

using Field = std::pair<std::string, std::string>;

bool IsTokenChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 ||
         std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
}

bool IsFieldValueChar(char c) { return c == '\t' || (c >= ' ' && c != 127); }

// Parses "Name: value" lines, keeping only fields an HTTP parser could have produced.
std::vector<Field> ParseFields(std::string_view text) {
  std::vector<Field> fields;
  while (!text.empty() && fields.size() < 16) {
    const std::size_t newline = text.find('\n');
    const std::string_view line = text.substr(0, newline);
    text = newline == std::string_view::npos ? std::string_view() : text.substr(newline + 1);
    const std::size_t colon = line.find(':');
    if (colon == 0 || colon == std::string_view::npos) continue;
    const std::string_view name = line.substr(0, colon);
    const std::string_view value = line.substr(colon + 1);
    if (!std::all_of(name.begin(), name.end(), IsTokenChar)) continue;
    if (!std::all_of(value.begin(), value.end(), IsFieldValueChar)) continue;
    fields.emplace_back(std::string(name), std::string(value));
  }
  return fields;
}

std::string Lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string Upper(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

fencegate::adapters::RequestHeader Header(std::string_view method, std::string_view target,
                                          const std::vector<Field>& fields) {
  fencegate::adapters::RequestHeader header;
  header.method_string(method);
  header.target(target);
  for (const auto& [name, value] : fields) header.insert(name, value);
  return header;
}

std::string Canonical(const fencegate::adapters::RequestHeader& header,
                      std::string* signed_headers) {
  return CanonicalRequest(header, fencegate::adapters::s3::kUnsignedPayload, signed_headers);
}

// The target with its '&'-separated query parameters in reverse order.
std::string ReverseQuery(std::string_view target) {
  const std::size_t question = target.find('?');
  if (question == std::string_view::npos) return std::string(target);
  std::vector<std::string_view> params;
  std::string_view query = target.substr(question + 1);
  while (true) {
    const std::size_t amp = query.find('&');
    params.push_back(query.substr(0, amp));
    if (amp == std::string_view::npos) break;
    query.remove_prefix(amp + 1);
  }
  std::string out(target.substr(0, question + 1));
  for (auto it = params.rbegin(); it != params.rend(); ++it) {
    if (it != params.rbegin()) out += '&';
    out += *it;
  }
  return out;
}

bool IsSignedName(std::string_view lower) {
  return lower == "host" || lower == "content-md5" || lower == "content-type" || lower == "range" ||
         lower.starts_with("x-amz-");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto parts = fencegate::fuzz::SplitFields(fencegate::fuzz::AsText(data, size), 3);
  const std::string_view method = parts[0];
  const std::string_view target = parts[1];
  if (method.empty() || !std::all_of(method.begin(), method.end(), IsTokenChar)) return 0;
  if (!std::all_of(target.begin(), target.end(), [](char c) { return c > ' ' && c != 127; })) {
    return 0;
  }
  const std::vector<Field> fields = ParseFields(parts[2]);

  std::string signed_headers;
  const std::string canonical = Canonical(Header(method, target, fields), &signed_headers);

  // SignedHeaders: lower case, strictly increasing, only the fields SigV4 signs here, and
  // exactly the signed names present in the request.
  std::set<std::string> expected_names;
  for (const auto& field : fields) {
    const std::string lower = Lower(field.first);
    if (IsSignedName(lower)) expected_names.insert(lower);
  }
  std::vector<std::string> names;
  for (std::size_t start = 0; !signed_headers.empty() && start <= signed_headers.size();) {
    const std::size_t semicolon = signed_headers.find(';', start);
    names.push_back(signed_headers.substr(start, semicolon - start));
    if (semicolon == std::string::npos) break;
    start = semicolon + 1;
  }
  FUZZ_CHECK(std::is_sorted(names.begin(), names.end()));
  FUZZ_CHECK(std::adjacent_find(names.begin(), names.end()) == names.end());
  FUZZ_CHECK(std::set<std::string>(names.begin(), names.end()) == expected_names);
  FUZZ_CHECK(canonical.ends_with("\n" + signed_headers + "\n" +
                                 std::string(fencegate::adapters::s3::kUnsignedPayload)));

  // The order of query parameters does not matter.
  std::string reordered_signed;
  FUZZ_CHECK(Canonical(Header(method, ReverseQuery(target), fields), &reordered_signed) ==
             canonical);

  // Field-name case does not matter.
  std::vector<Field> upper = fields;
  for (auto& field : upper) field.first = Upper(field.first);
  FUZZ_CHECK(Canonical(Header(method, target, upper), &reordered_signed) == canonical);

  // The order of fields with distinct names does not matter (same-name values are joined in
  // their order, so that order must stay).
  std::set<std::string> lower_names;
  for (const auto& field : fields) lower_names.insert(Lower(field.first));
  if (lower_names.size() == fields.size()) {
    const std::vector<Field> reversed(fields.rbegin(), fields.rend());
    FUZZ_CHECK(Canonical(Header(method, target, reversed), &reordered_signed) == canonical);
  }

  // Signing always produces a well-formed Authorization value with a 64-hex-digit signature.
  fencegate::adapters::RequestHeader header = Header(method, target, fields);
  fencegate::adapters::s3::SignV4(header, {"AKIDEXAMPLE", "secret"}, "us-east-1",
                                  "20130524T000000Z", fencegate::adapters::s3::kUnsignedPayload);
  const std::string authorization(header[http::field::authorization]);
  const std::string prefix =
      "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20130524/us-east-1/s3/aws4_request,SignedHeaders=";
  FUZZ_CHECK(authorization.starts_with(prefix));
  const std::size_t signature = authorization.rfind(",Signature=");
  FUZZ_CHECK(signature != std::string::npos);
  const std::string_view hex = std::string_view(authorization).substr(signature + 11);
  FUZZ_CHECK(hex.size() == 64 && std::all_of(hex.begin(), hex.end(), [](char c) {
               return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
             }));
  return 0;
}
