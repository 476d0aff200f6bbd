#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <ostream>
#include <string>
#include <thread>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/http/fields.hpp>

namespace fencegate::integration {

inline constexpr std::uint64_t kBodyDigestSeed = 0xcbf29ce484222325ull;

// Folds `bytes` into a RecordedRequest::body_digest.
inline std::uint64_t BodyDigest(std::uint64_t digest, const char* bytes, std::size_t size) {
  for (std::size_t i = 0; i < size; ++i) {
    digest = (digest ^ static_cast<unsigned char>(bytes[i])) * 0x100000001b3ull;
  }
  return digest;
}

// One request as the backend saw it. Arrival and completion are stamps from one counter shared
// by all connections, so "B arrived after A completed" is arrived(B) > completed(A).
struct RecordedRequest {
  std::string method;
  std::string target;
  boost::beast::http::fields headers;
  std::uint64_t body_bytes = 0;
  std::string body_prefix;  // the first kBodyPrefixBytes of the body
  // FNV-1a (64 bit) of the whole, de-chunked body: compares bodies longer than the prefix.
  std::uint64_t body_digest = kBodyDigestSeed;
  std::uint64_t arrival = 0;
  std::uint64_t completion = 0;  // 0 while the request is still being served
};

// For failure messages: which request reached the backend, and from where it says it came.
inline std::ostream& operator<<(std::ostream& out, const RecordedRequest& request) {
  out << request.method << ' ' << request.target << " (" << request.body_bytes << " body bytes";
  for (const auto& field : request.headers) {
    out << "; " << field.name_string() << ": " << field.value();
  }
  return out << ')';
}

// An HTTP/1.1 backend on 127.0.0.1:<ephemeral> that records every request and answers
// "200 OK" with body "ok". A request header `X-Test-Delay-Ms: N` delays the response by N ms
// (after the body was read); `X-Test-Status: S` answers with status S;
// `X-Test-Response-Bytes: N` answers with N bytes instead of "ok";
// `X-Test-Response-Request-Id: V` answers with `X-Request-Id: V`. Every answer carries
// `X-Backend-Sequence: <1-based index of the request>`. Bodies of any size are
// counted and discarded, keeping only a prefix. One thread per connection: simple, and delays
// on one connection do not hold up the others.
class RecordingBackend {
 public:
  static constexpr std::size_t kBodyPrefixBytes = 64 * 1024;

  RecordingBackend();
  ~RecordingBackend();  // stops and joins every thread
  RecordingBackend(const RecordingBackend&) = delete;
  RecordingBackend& operator=(const RecordingBackend&) = delete;

  std::uint16_t port() const { return port_; }

  // A snapshot of every request whose header arrived, in arrival order.
  std::vector<RecordedRequest> Requests() const;
  // Waits until `count` requests have completed; false on timeout.
  bool WaitForCompleted(std::size_t count, std::chrono::milliseconds timeout) const;
  // Waits until `count` request headers have arrived; false on timeout.
  bool WaitForArrived(std::size_t count, std::chrono::milliseconds timeout) const;
  // Waits until every connection accepted so far was closed by its peer (or failed). A
  // connection's bytes are all parsed before its close is seen, so afterwards every request a
  // dead client had sent is in Requests(). False on timeout.
  bool WaitForConnectionsClosed(std::chrono::milliseconds timeout) const;

 private:
  struct Connection {
    boost::asio::ip::tcp::socket socket;
    std::thread thread;
  };
  void AcceptLoop();
  void Serve(boost::asio::ip::tcp::socket& socket);

  boost::asio::io_context io_context_;
  boost::asio::ip::tcp::acceptor acceptor_;
  std::uint16_t port_ = 0;
  std::thread accept_thread_;

  mutable std::mutex mutex_;
  mutable std::condition_variable changed_;
  bool stopping_ = false;
  std::uint64_t clock_ = 0;
  std::vector<RecordedRequest> requests_;
  std::list<Connection> connections_;
  std::size_t connections_closed_ = 0;
};

}  // namespace fencegate::integration
