#include "tests/support/recording_backend.h"

#include <sys/socket.h>

#include <boost/asio/ip/address.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/buffer_body.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>

namespace fencegate::integration {

namespace net = boost::asio;
namespace http = boost::beast::http;
using net::ip::tcp;

RecordingBackend::RecordingBackend()
    : acceptor_(io_context_, tcp::endpoint(net::ip::make_address("127.0.0.1"), 0)) {
  port_ = acceptor_.local_endpoint().port();
  accept_thread_ = std::thread([this] { AcceptLoop(); });
}

RecordingBackend::~RecordingBackend() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
    // shutdown(2) wakes the threads blocked in accept/read on these sockets.
    ::shutdown(acceptor_.native_handle(), SHUT_RDWR);
    for (Connection& connection : connections_) {
      ::shutdown(connection.socket.native_handle(), SHUT_RDWR);
    }
  }
  accept_thread_.join();
  for (Connection& connection : connections_) connection.thread.join();
}

void RecordingBackend::AcceptLoop() {
  for (;;) {
    boost::system::error_code ec;
    tcp::socket socket(io_context_);
    acceptor_.accept(socket, ec);
    std::lock_guard lock(mutex_);
    if (stopping_) return;
    if (ec) continue;
    Connection& connection = connections_.emplace_back(Connection{std::move(socket), {}});
    connection.thread = std::thread([this, &connection] {
      Serve(connection.socket);
      std::lock_guard closed_lock(mutex_);
      ++connections_closed_;
      changed_.notify_all();
    });
  }
}

void RecordingBackend::Serve(tcp::socket& socket) {
  boost::beast::flat_buffer buffer;
  std::vector<char> chunk(256 * 1024);
  for (;;) {
    boost::system::error_code ec;
    http::request_parser<http::buffer_body> parser;
    parser.body_limit(boost::none);
    http::read_header(socket, buffer, parser, ec);
    if (ec) return;

    std::size_t index;
    {
      std::lock_guard lock(mutex_);
      RecordedRequest& recorded = requests_.emplace_back();
      const auto& header = parser.get();
      recorded.method = std::string(header.method_string());
      recorded.target = std::string(header.target());
      recorded.headers = header.base();
      recorded.arrival = ++clock_;
      index = requests_.size() - 1;
      changed_.notify_all();
    }

    std::uint64_t body_bytes = 0;
    std::string prefix;
    std::uint64_t digest = kBodyDigestSeed;
    while (!parser.is_done()) {
      parser.get().body().data = chunk.data();
      parser.get().body().size = chunk.size();
      http::read(socket, buffer, parser, ec);
      if (ec == http::error::need_buffer) ec = {};
      if (ec) return;
      std::size_t got = chunk.size() - parser.get().body().size;
      body_bytes += got;
      digest = BodyDigest(digest, chunk.data(), got);
      if (prefix.size() < kBodyPrefixBytes) {
        prefix.append(chunk.data(), std::min(got, kBodyPrefixBytes - prefix.size()));
      }
    }

    const auto& header = parser.get();
    unsigned status = 200;
    if (auto delay = header.find("X-Test-Delay-Ms"); delay != header.end()) {
      std::this_thread::sleep_for(
          std::chrono::milliseconds(std::stoul(std::string(delay->value()))));
    }
    if (auto wanted = header.find("X-Test-Status"); wanted != header.end()) {
      status = static_cast<unsigned>(std::stoul(std::string(wanted->value())));
    }
    http::response<http::string_body> response(static_cast<http::status>(status), 11);
    response.set(http::field::content_type, "text/plain");
    response.keep_alive(header.keep_alive());
    response.body() = "ok";
    // Which application this answer belongs to: a replayed answer carries its original's.
    response.set("X-Backend-Sequence", std::to_string(index + 1));
    if (auto id = header.find("X-Test-Response-Request-Id"); id != header.end()) {
      response.set("X-Request-Id", id->value());
    }
    if (auto size = header.find("X-Test-Response-Bytes"); size != header.end()) {
      response.body().assign(std::stoul(std::string(size->value())), 'r');
    }
    response.prepare_payload();
    {
      std::lock_guard lock(mutex_);
      requests_[index].body_bytes = body_bytes;
      requests_[index].body_prefix = std::move(prefix);
      requests_[index].body_digest = digest;
      requests_[index].completion = ++clock_;
      changed_.notify_all();
    }
    http::write(socket, response, ec);
    if (ec || !response.keep_alive()) return;
  }
}

std::vector<RecordedRequest> RecordingBackend::Requests() const {
  std::lock_guard lock(mutex_);
  return requests_;
}

bool RecordingBackend::WaitForCompleted(std::size_t count,
                                        std::chrono::milliseconds timeout) const {
  std::unique_lock lock(mutex_);
  return changed_.wait_for(lock, timeout, [&] {
    std::size_t completed = 0;
    for (const RecordedRequest& request : requests_) completed += request.completion != 0;
    return completed >= count;
  });
}

bool RecordingBackend::WaitForArrived(std::size_t count, std::chrono::milliseconds timeout) const {
  std::unique_lock lock(mutex_);
  return changed_.wait_for(lock, timeout, [&] { return requests_.size() >= count; });
}

bool RecordingBackend::WaitForConnectionsClosed(std::chrono::milliseconds timeout) const {
  std::unique_lock lock(mutex_);
  return changed_.wait_for(lock, timeout,
                           [&] { return connections_closed_ == connections_.size(); });
}

}  // namespace fencegate::integration
