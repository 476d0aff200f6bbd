#include "lockstore/etcd/etcd_json.h"

#include <algorithm>
#include <exception>

#include <boost/json.hpp>

#include "base/encoding/base64.h"

namespace fencegate::lockstore::etcd {
namespace json = boost::json;
namespace {

std::string Str(const json::object& object, std::string_view name) {
  const json::value* value = object.if_contains(name);
  return value != nullptr && value->is_string() ? std::string(value->as_string()) : std::string();
}

bool DecodeKv(const json::value& value, EtcdKeyValue* out) {
  if (!value.is_object()) return false;
  const json::object& kv = value.as_object();
  auto key = encoding::Base64Decode(Str(kv, "key"));
  auto bytes = encoding::Base64Decode(Str(kv, "value"));
  if (!key || !bytes) return false;
  out->key = std::move(*key);
  out->value = std::move(*bytes);
  out->create_revision = EtcdJsonInt(kv, "create_revision");
  out->mod_revision = EtcdJsonInt(kv, "mod_revision");
  out->lease = EtcdJsonInt(kv, "lease");
  return true;
}

const char* TargetName(EtcdCompare::Target target) {
  switch (target) {
    case EtcdCompare::Target::kValue:
      return "VALUE";
    case EtcdCompare::Target::kCreateRevision:
      return "CREATE";
    case EtcdCompare::Target::kModRevision:
      return "MOD";
    case EtcdCompare::Target::kLease:
      return "LEASE";
  }
  return "VALUE";
}

const char* ResultName(EtcdCompare::Result result) {
  switch (result) {
    case EtcdCompare::Result::kEqual:
      return "EQUAL";
    case EtcdCompare::Result::kNotEqual:
      return "NOT_EQUAL";
    case EtcdCompare::Result::kLess:
      return "LESS";
    case EtcdCompare::Result::kGreater:
      return "GREATER";
  }
  return "EQUAL";
}

json::object CompareJson(const EtcdCompare& compare) {
  json::object out{{"key", encoding::Base64Encode(compare.key)},
                   {"target", TargetName(compare.target)},
                   {"result", ResultName(compare.result)}};
  const std::string number = std::to_string(compare.number);
  switch (compare.target) {
    case EtcdCompare::Target::kValue:
      out["value"] = encoding::Base64Encode(compare.value);
      break;
    case EtcdCompare::Target::kCreateRevision:
      out["create_revision"] = number;
      break;
    case EtcdCompare::Target::kModRevision:
      out["mod_revision"] = number;
      break;
    case EtcdCompare::Target::kLease:
      out["lease"] = number;
      break;
  }
  return out;
}

json::object OpJson(const EtcdOp& op) {
  switch (op.kind) {
    case EtcdOp::Kind::kPut: {
      json::object put{{"key", encoding::Base64Encode(op.key)},
                       {"value", encoding::Base64Encode(op.value)}};
      if (op.lease != 0) put["lease"] = std::to_string(op.lease);
      return {{"request_put", std::move(put)}};
    }
    case EtcdOp::Kind::kDelete:
      return {{"request_delete_range", json::object{{"key", encoding::Base64Encode(op.key)}}}};
    case EtcdOp::Kind::kRange:
      break;
  }
  return {{"request_range", json::object{{"key", encoding::Base64Encode(op.key)}}}};
}

}  // namespace

std::int64_t EtcdJsonInt(const json::object& object, std::string_view name) {
  const json::value* value = object.if_contains(name);
  if (value == nullptr) return 0;
  if (value->is_string()) {
    try {
      return std::stoll(std::string(value->as_string()));
    } catch (const std::exception&) {
      return 0;
    }
  }
  if (value->is_int64()) return value->as_int64();
  if (value->is_uint64()) return static_cast<std::int64_t>(value->as_uint64());
  return 0;
}

Status DecodeEtcdKvs(const json::object& range, std::vector<EtcdKeyValue>* out) {
  const json::value* kvs = range.if_contains("kvs");
  if (kvs == nullptr) return Status::Ok();
  if (!kvs->is_array()) return Status::Corruption("etcd range: kvs is not an array");
  for (const json::value& item : kvs->as_array()) {
    EtcdKeyValue kv;
    if (!DecodeKv(item, &kv)) return Status::Corruption("etcd range: undecodable key-value");
    out->push_back(std::move(kv));
  }
  return Status::Ok();
}

std::string EtcdPrefixEnd(std::string_view prefix) {
  std::string end(prefix);
  while (!end.empty()) {
    if (static_cast<unsigned char>(end.back()) < 0xff) {
      end.back() = static_cast<char>(static_cast<unsigned char>(end.back()) + 1);
      return end;
    }
    end.pop_back();
  }
  return std::string(1, '\0');  // every key
}

json::object EtcdRangeRequest(std::string_view key) {
  return {{"key", encoding::Base64Encode(key)}};
}

json::object EtcdTxnRequest(const std::vector<EtcdCompare>& compares,
                            const std::vector<EtcdOp>& success,
                            const std::vector<EtcdOp>& failure) {
  json::array compare_json, success_json, failure_json;
  for (const EtcdCompare& compare : compares) compare_json.push_back(CompareJson(compare));
  for (const EtcdOp& op : success) success_json.push_back(OpJson(op));
  for (const EtcdOp& op : failure) failure_json.push_back(OpJson(op));
  return {{"compare", std::move(compare_json)},
          {"success", std::move(success_json)},
          {"failure", std::move(failure_json)}};
}

Status DecodeEtcdTxn(const json::object& answer, EtcdTxnResult* out) {
  *out = EtcdTxnResult{};
  // A failed transaction omits "succeeded" (false is JSON's default value here).
  if (const json::value* succeeded = answer.if_contains("succeeded")) {
    out->succeeded = succeeded->is_bool() && succeeded->as_bool();
  }
  if (const json::value* header = answer.if_contains("header"); header && header->is_object()) {
    out->revision = EtcdJsonInt(header->as_object(), "revision");
  }
  if (const json::value* responses = answer.if_contains("responses");
      responses != nullptr && responses->is_array()) {
    for (const json::value& response : responses->as_array()) {
      if (!response.is_object()) continue;
      const json::value* range = response.as_object().if_contains("response_range");
      if (range == nullptr || !range->is_object()) continue;
      std::vector<EtcdKeyValue> kvs;
      if (Status status = DecodeEtcdKvs(range->as_object(), &kvs); !status.ok()) return status;
      out->ranges.emplace_back();
      if (!kvs.empty()) out->ranges.back() = std::move(kvs.front());
    }
  }
  return Status::Ok();
}

EtcdAnswer DecodeEtcdAnswer(const std::string& endpoint, unsigned http_status,
                            std::string_view body, json::object* out) {
  EtcdAnswer answer;
  boost::system::error_code parse_error;
  // Streaming endpoints (lease keepalive) answer {"result": {...}} per message, one per line.
  std::string_view text = body;
  if (const auto newline = text.find('\n'); newline != std::string_view::npos) {
    text = text.substr(0, newline);
  }
  json::value value = json::parse(text, parse_error);
  if (http_status != 200) {
    const std::string message =
        !parse_error && value.is_object() ? Str(value.as_object(), "error") : "";
    const std::string what = "etcd " + endpoint + ": HTTP " + std::to_string(http_status) + " " +
                             (message.empty() ? std::string(text.substr(0, 200)) : message);
    answer.status = http_status == 404   ? Status::NotFound(what)
                    : http_status >= 500 ? Status::Unavailable(what)
                                         : Status::InvalidArgument(what);
    answer.retryable = http_status >= 500;
    return answer;
  }
  if (parse_error || !value.is_object()) {
    answer.status = Status::Corruption("etcd " + endpoint + ": answer is not a JSON object");
    return answer;
  }
  json::object& object = value.as_object();
  if (json::value* result = object.if_contains("result"); result != nullptr) {
    if (!result->is_object()) {
      answer.status = Status::Corruption("etcd " + endpoint + ": bad stream message");
      return answer;
    }
    *out = std::move(result->as_object());
  } else if (json::value* error = object.if_contains("error"); error != nullptr) {
    answer.status = Status::Unavailable("etcd " + endpoint + ": " + json::serialize(*error));
    answer.retryable = true;
  } else {
    *out = std::move(object);
  }
  return answer;
}

std::string EtcdEndpointHost(const std::string& endpoint) {
  std::string host = endpoint.substr(0, endpoint.rfind(':'));
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  return host;
}

bool ParseEtcdEndpoint(const std::string& endpoint, boost::asio::ip::tcp::endpoint* out) {
  const auto colon = endpoint.rfind(':');
  if (colon == std::string::npos) return false;
  std::string host = EtcdEndpointHost(endpoint);
  if (host == "localhost") host = "127.0.0.1";
  boost::system::error_code ec;
  const auto address = boost::asio::ip::make_address(host, ec);
  if (ec) return false;
  const std::string digits = endpoint.substr(colon + 1);
  if (digits.empty() || digits.size() > 5 ||
      !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return false;
  }
  const unsigned long port = std::stoul(digits);
  if (port == 0 || port > 65535) return false;
  *out = boost::asio::ip::tcp::endpoint(address, static_cast<unsigned short>(port));
  return true;
}

}  // namespace fencegate::lockstore::etcd
