#include "resource_adapters/s3/sigv4.h"

#include <algorithm>
#include <ctime>
#include <utility>
#include <vector>

#include "base/encoding/hex.h"
#include "base/encoding/sha256.h"

namespace fencegate::adapters::s3 {

namespace {

namespace http = boost::beast::http;

std::string Lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

// Trims the value and collapses inner runs of spaces, as SigV4's canonical headers require.
std::string TrimAll(std::string_view value) {
  std::string out;
  bool space = false;
  for (char c : value) {
    if (c == ' ' || c == '\t') {
      space = !out.empty();
      continue;
    }
    if (space) out.push_back(' ');
    space = false;
    out.push_back(c);
  }
  return out;
}

bool IsSigned(std::string_view lower_name) {
  return lower_name == "host" || lower_name == "content-md5" || lower_name == "content-type" ||
         lower_name == "range" || lower_name.starts_with("x-amz-");
}

}  // namespace

std::string AmzDateNow() {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char text[32];
  std::strftime(text, sizeof text, "%Y%m%dT%H%M%SZ", &utc);
  return text;
}

std::string CanonicalRequest(const RequestHeader& header, std::string_view payload_hash,
                             std::string* signed_headers) {
  const std::string_view target = header.target();
  const std::size_t question = target.find('?');
  const std::string_view path = target.substr(0, question);
  std::string_view query =
      question == std::string_view::npos ? std::string_view() : target.substr(question + 1);

  // The query's parameters sorted by name, each "name=value" (the target is already encoded).
  std::vector<std::pair<std::string_view, std::string_view>> params;
  while (!query.empty()) {
    const std::size_t amp = query.find('&');
    const std::string_view param = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view() : query.substr(amp + 1);
    if (param.empty()) continue;
    const std::size_t equals = param.find('=');
    params.emplace_back(param.substr(0, equals), equals == std::string_view::npos
                                                     ? std::string_view()
                                                     : param.substr(equals + 1));
  }
  std::sort(params.begin(), params.end());

  std::vector<std::pair<std::string, std::string>> fields;
  for (const auto& field : header) {
    std::string name = Lower(field.name_string());
    if (!IsSigned(name)) continue;
    auto same = std::find_if(fields.begin(), fields.end(),
                             [&](const auto& entry) { return entry.first == name; });
    if (same != fields.end()) {
      same->second += "," + TrimAll(field.value());
    } else {
      fields.emplace_back(std::move(name), TrimAll(field.value()));
    }
  }
  std::sort(fields.begin(), fields.end());

  std::string out(header.method_string());
  out += '\n';
  out += path.empty() ? std::string_view("/") : path;
  out += '\n';
  for (std::size_t i = 0; i < params.size(); ++i) {
    if (i != 0) out += '&';
    out += params[i].first;
    out += '=';
    out += params[i].second;
  }
  out += '\n';
  signed_headers->clear();
  for (const auto& [name, value] : fields) {
    out += name;
    out += ':';
    out += value;
    out += '\n';
    if (!signed_headers->empty()) *signed_headers += ';';
    *signed_headers += name;
  }
  out += '\n';
  out += *signed_headers;
  out += '\n';
  out += payload_hash;
  return out;
}

std::string StringToSign(std::string_view amz_date, std::string_view scope,
                         std::string_view canonical_request) {
  std::string out = "AWS4-HMAC-SHA256\n";
  out += amz_date;
  out += '\n';
  out += scope;
  out += '\n';
  out += encoding::Sha256Hex(canonical_request);
  return out;
}

std::string Signature(std::string_view secret_key, std::string_view date, std::string_view region,
                      std::string_view string_to_sign) {
  using encoding::HmacSha256;
  const std::string date_key = HmacSha256("AWS4" + std::string(secret_key), date);
  const std::string region_key = HmacSha256(date_key, region);
  const std::string service_key = HmacSha256(region_key, "s3");
  const std::string signing_key = HmacSha256(service_key, "aws4_request");
  return encoding::HexEncode(HmacSha256(signing_key, string_to_sign));
}

void SignV4(RequestHeader& header, const Credentials& credentials, std::string_view region,
            std::string_view amz_date, std::string_view payload_hash) {
  header.set("X-Amz-Date", amz_date);
  header.set("X-Amz-Content-Sha256", payload_hash);
  header.erase(http::field::authorization);
  std::string signed_headers;
  const std::string canonical = CanonicalRequest(header, payload_hash, &signed_headers);
  const std::string_view date = amz_date.substr(0, 8);
  const std::string scope = std::string(date) + "/" + std::string(region) + "/s3/aws4_request";
  const std::string signature =
      Signature(credentials.secret_key, date, region, StringToSign(amz_date, scope, canonical));
  header.set(http::field::authorization, "AWS4-HMAC-SHA256 Credential=" + credentials.access_key +
                                             "/" + scope + ",SignedHeaders=" + signed_headers +
                                             ",Signature=" + signature);
}

}  // namespace fencegate::adapters::s3
