#pragma once

#include <memory>
#include <optional>
#include <utility>

#include <boost/asio/async_result.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>

namespace fencegate::adapters {

// One connection to an http or s3 backend: plain TCP, or TLS over it (an `https` url). It
// models Asio's AsyncReadStream/AsyncWriteStream; plain reads and writes go to the socket
// directly (the caller runs its own idle timeout and cancels the socket), TLS ones through
// Beast's ssl_stream (whose flat_stream layer coalesces gathered header buffers into one TLS
// record). Callers that time each operation with expires_after use timed() instead. Pooled
// whole, so a reused TLS connection keeps its session. Shared by the adapters, which never
// include each other.
class UpstreamTransport {
 public:
  // Bound to the network thread's io_context by its concrete executor type (see
  // gateway/client_stream.h for why).
  using executor_type = boost::asio::io_context::executor_type;
  using TcpStream = boost::beast::basic_stream<boost::asio::ip::tcp, executor_type,
                                               boost::beast::unlimited_rate_policy>;
  using TlsStream = boost::beast::ssl_stream<TcpStream>;

  // Plain when `tls_context` is null.
  UpstreamTransport(boost::asio::io_context& ioc,
                    std::shared_ptr<boost::asio::ssl::context> tls_context)
      : tls_context_(std::move(tls_context)) {
    if (tls_context_) {
      tls_.emplace(TcpStream(ioc.get_executor()), *tls_context_);
    } else {
      plain_.emplace(ioc.get_executor());
    }
  }
  // timed() refers to this object.
  UpstreamTransport(const UpstreamTransport&) = delete;
  UpstreamTransport& operator=(const UpstreamTransport&) = delete;

  bool is_tls() const { return tls_.has_value(); }
  TlsStream& tls() { return *tls_; }
  TcpStream& lowest() { return tls_ ? tls_->next_layer() : *plain_; }
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
            plain_->socket().async_read_some(b, std::move(h));
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
            plain_->socket().async_write_some(b, std::move(h));
          }
        },
        handler, buffers);
  }

  // The same connection with every plain operation through the TCP layer, so the deadline set
  // with expires_after bounds it (TLS operations always go through that layer).
  class Timed {
   public:
    using executor_type = UpstreamTransport::executor_type;
    explicit Timed(UpstreamTransport& transport) : transport_(transport) {}
    executor_type get_executor() { return transport_.get_executor(); }

    template <class MutableBuffers, class Handler>
    auto async_read_some(const MutableBuffers& buffers, Handler&& handler) {
      return boost::asio::async_initiate<Handler, void(boost::system::error_code, std::size_t)>(
          [this](auto h, const MutableBuffers& b) {
            if (transport_.tls_) {
              transport_.tls_->async_read_some(b, std::move(h));
            } else {
              transport_.plain_->async_read_some(b, std::move(h));
            }
          },
          handler, buffers);
    }

    template <class ConstBuffers, class Handler>
    auto async_write_some(const ConstBuffers& buffers, Handler&& handler) {
      return boost::asio::async_initiate<Handler, void(boost::system::error_code, std::size_t)>(
          [this](auto h, const ConstBuffers& b) {
            if (transport_.tls_) {
              transport_.tls_->async_write_some(b, std::move(h));
            } else {
              transport_.plain_->async_write_some(b, std::move(h));
            }
          },
          handler, buffers);
    }

   private:
    UpstreamTransport& transport_;
  };

  Timed& timed() { return timed_; }

 private:
  std::shared_ptr<boost::asio::ssl::context> tls_context_;
  std::optional<TcpStream> plain_;
  std::optional<TlsStream> tls_;
  Timed timed_{*this};
};

}  // namespace fencegate::adapters
