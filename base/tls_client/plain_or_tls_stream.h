#pragma once

#include <memory>
#include <optional>
#include <type_traits>
#include <utility>

#include <boost/asio/async_result.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>

#include "base/tls_client/drain_tracking_receive.h"

namespace fencegate::tls_client {

// A connection lives on one network thread's io_context for its whole life. Naming that
// executor type, instead of Beast's default type-erased any_io_executor, spares the executor
// copies and outstanding-work wrappers that every asynchronous operation and timer otherwise
// pays (about a fifth of the instructions of a proxied request).
using TcpStream =
    boost::beast::basic_stream<boost::asio::ip::tcp, boost::asio::io_context::executor_type,
                               boost::beast::unlimited_rate_policy>;

// One TCP connection, plain or TLS over it, chosen when it is made: a client connection on a
// plain or TLS listener, or a connection to an http/https backend. Used by the gateway's
// sessions and by the adapters' upstream connections, so both read and write through one
// implementation whichever the scheme.
//
// It models Asio's AsyncReadStream and AsyncWriteStream, each operation picking the layer with
// one predictable branch. Its own operations are timed: they go through the TCP layer, so the
// deadline set with expires_after bounds them. untimed() is the same connection for callers
// that run their own timeout and cancel the socket: plain reads and writes go to the socket
// directly (two timer syscalls fewer per piece; reads through AsyncReceiveTrackingDrain, which
// spares the EAGAIN recv before each wait, see drain_tracking_receive.h), TLS ones through the TCP
// layer with its expiry cleared so an earlier deadline cannot fire. TLS writes go through Beast's
// ssl_stream, whose flat_stream layer coalesces gathered header buffers into one TLS record.
//
// Not movable: untimed() refers to the object. Pool it whole (a reused TLS connection keeps
// its session).
class PlainOrTlsStream {
 public:
  using executor_type = TcpStream::executor_type;
  using TlsStream = boost::beast::ssl_stream<TcpStream>;

  // Plain when `tls_context` is null.
  PlainOrTlsStream(TcpStream layer, std::shared_ptr<boost::asio::ssl::context> tls_context)
      : tls_context_(std::move(tls_context)) {
    if (tls_context_) {
      tls_.emplace(std::move(layer), *tls_context_);
    } else {
      plain_.emplace(std::move(layer));
    }
  }
  PlainOrTlsStream(boost::asio::io_context& ioc,
                   std::shared_ptr<boost::asio::ssl::context> tls_context)
      : PlainOrTlsStream(TcpStream(ioc.get_executor()), std::move(tls_context)) {}
  PlainOrTlsStream(const PlainOrTlsStream&) = delete;
  PlainOrTlsStream& operator=(const PlainOrTlsStream&) = delete;

  bool is_tls() const { return tls_.has_value(); }
  TlsStream& tls() { return *tls_; }
  // The TCP layer: timeouts, the socket, and bytes that bypass TLS (the plain-HTTP check).
  TcpStream& lowest() { return tls_ ? tls_->next_layer() : *plain_; }
  const TcpStream& lowest() const { return tls_ ? tls_->next_layer() : *plain_; }
  bool is_open() const { return lowest().socket().is_open(); }
  TcpStream::socket_type& socket() { return lowest().socket(); }
  executor_type get_executor() { return lowest().get_executor(); }
  template <class Time>
  void expires_after(Time time) {
    lowest().expires_after(time);
  }
  void close() { lowest().close(); }

  template <class MutableBuffers, class Handler>
  auto async_read_some(const MutableBuffers& buffers, Handler&& handler) {
    return boost::asio::async_initiate<Handler, void(boost::system::error_code, std::size_t)>(
        [this](auto h, const MutableBuffers& b) {
          if (tls_) {
            tls_->async_read_some(b, std::move(h));
          } else {
            plain_->async_read_some(b, std::move(h));
          }
        },
        handler, buffers);
  }

  template <class ConstBuffers, class Handler>
  auto async_write_some(const ConstBuffers& buffers, Handler&& handler) {
    return boost::asio::async_initiate<Handler, void(boost::system::error_code, std::size_t)>(
        [this](auto h, const ConstBuffers& b) {
          if (tls_) {
            tls_->async_write_some(b, std::move(h));
          } else {
            plain_->async_write_some(b, std::move(h));
          }
        },
        handler, buffers);
  }

  // The connection as an AsyncReadStream/AsyncWriteStream whose operations are untimed.
  class Untimed {
   public:
    using executor_type = PlainOrTlsStream::executor_type;
    explicit Untimed(PlainOrTlsStream& stream) : stream_(stream) {}
    executor_type get_executor() { return stream_.get_executor(); }

    template <class MutableBuffers, class Handler>
    auto async_read_some(const MutableBuffers& buffers, Handler&& handler) {
      return boost::asio::async_initiate<Handler, void(boost::system::error_code, std::size_t)>(
          [this](auto h, const MutableBuffers& b) {
            if (stream_.tls_) {
              stream_.tls_->next_layer().expires_never();
              stream_.tls_->async_read_some(b, std::move(h));
            } else if constexpr (std::is_convertible_v<const MutableBuffers&,
                                                       boost::asio::mutable_buffer>) {
              AsyncReceiveTrackingDrain(stream_.plain_->socket(), b, std::move(h));
            } else {
              stream_.plain_->socket().async_read_some(b, std::move(h));
            }
          },
          handler, buffers);
    }

    template <class ConstBuffers, class Handler>
    auto async_write_some(const ConstBuffers& buffers, Handler&& handler) {
      return boost::asio::async_initiate<Handler, void(boost::system::error_code, std::size_t)>(
          [this](auto h, const ConstBuffers& b) {
            if (stream_.tls_) {
              stream_.tls_->next_layer().expires_never();
              stream_.tls_->async_write_some(b, std::move(h));
            } else {
              stream_.plain_->socket().async_write_some(b, std::move(h));
            }
          },
          handler, buffers);
    }

   private:
    PlainOrTlsStream& stream_;
  };

  Untimed& untimed() { return untimed_; }

 private:
  // Kept alive as long as the connection: a listener's reload swaps its context, not ours.
  std::shared_ptr<boost::asio::ssl::context> tls_context_;
  std::optional<TcpStream> plain_;
  std::optional<TlsStream> tls_;
  Untimed untimed_{*this};
};

}  // namespace fencegate::tls_client
