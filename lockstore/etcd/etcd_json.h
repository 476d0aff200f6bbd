#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <boost/asio/ip/tcp.hpp>
#include <boost/json/object.hpp>

#include "lockstore/etcd/etcd_client.h"
#include "lockstore/status.h"

// The wire format of etcd 3.4's HTTP/JSON gateway, shared by the synchronous client
// (etcd_client.cc) and the asynchronous one (etcd_async_client.cc): request bodies, answers,
// and the endpoint strings. Keys and values are base64; int64 are JSON strings.
namespace fencegate::lockstore::etcd {

// An int64 field of an answer (etcd renders them as strings and omits zero values): 0 when absent.
std::int64_t EtcdJsonInt(const boost::json::object& object, std::string_view name);

// The key-values of a range answer ("kvs"), appended to `out`.
Status DecodeEtcdKvs(const boost::json::object& range, std::vector<EtcdKeyValue>* out);

// The end of the range of keys that start with `prefix` (etcd's "range_end").
std::string EtcdPrefixEnd(std::string_view prefix);

// The body of POST /v3/kv/range for one key.
boost::json::object EtcdRangeRequest(std::string_view key);

// The body of POST /v3/kv/txn, and its answer decoded.
boost::json::object EtcdTxnRequest(const std::vector<EtcdCompare>& compares,
                                   const std::vector<EtcdOp>& success,
                                   const std::vector<EtcdOp>& failure);
Status DecodeEtcdTxn(const boost::json::object& answer, EtcdTxnResult* out);

// The retry rule both clients follow: when every member failed in a row, the next round waits
// this long, so that a cluster electing a leader is not hammered with requests.
inline constexpr auto kEtcdRoundPause = std::chrono::milliseconds(50);
// An answer larger than this is not etcd's (fence records and ownership keys are small).
inline constexpr std::uint64_t kEtcdMaxAnswerBytes = 16u << 20;

// The outcome of one attempt of an operation on one member.
struct EtcdAttempt {
  Status status;
  bool retryable = false;  // another member may answer differently
  bool sent = false;       // the request may have reached the member
};

// What one HTTP exchange with a member came to.
struct EtcdAnswer {
  Status status;
  bool retryable = false;  // another member may answer differently (5xx, etcd "unavailable")
};

// Decodes an answer of `endpoint` (HTTP status and body) into `out` (the "result" object of a
// streaming endpoint such as lease keepalive, otherwise the whole object).
EtcdAnswer DecodeEtcdAnswer(const std::string& endpoint, unsigned http_status,
                            std::string_view body, boost::json::object* out);

// "host" of "host:port", without an IPv6 address's brackets.
std::string EtcdEndpointHost(const std::string& endpoint);
// The address of "host:port" (a literal address or localhost; members are not looked up in DNS).
bool ParseEtcdEndpoint(const std::string& endpoint, boost::asio::ip::tcp::endpoint* out);

}  // namespace fencegate::lockstore::etcd
