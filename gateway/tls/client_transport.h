#pragma once

#include <memory>
#include <optional>
#include <utility>

#include <boost/asio/async_result.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>

#include "gateway/client_stream.h"

namespace fencegate::gateway::tls {

// A client connection's byte stream: the plain ClientStream, or TLS over it (Beast's
// ssl_stream, whose flat_stream layer coalesces the gathered header buffers into one TLS
// record instead of one record per buffer). It models Asio's AsyncReadStream and
// AsyncWriteStream, so one Session implementation serves both listeners; each operation picks
// the layer with one predictable branch. Timeouts stay those of the ClientStream underneath
// (TLS reads and writes go through it).
class ClientTransport {
 public:
  using executor_type = boost::asio::io_context::executor_type;
  using TlsStream = boost::beast::ssl_stream<ClientStream>;

  // Plain when `tls_context` is null.
  ClientTransport(ClientSocket socket, std::shared_ptr<boost::asio::ssl::context> tls_context)
      : tls_context_(std::move(tls_context)) {
    if (tls_context_) {
      tls_.emplace(ClientStream(std::move(socket)), *tls_context_);
    } else {
      plain_.emplace(std::move(socket));
    }
  }

  bool is_tls() const { return tls_.has_value(); }
  TlsStream& tls() { return *tls_; }
  // The TCP layer: timeouts, the socket, and bytes that bypass TLS (the plain-HTTP check).
  ClientStream& lowest() { return tls_ ? tls_->next_layer() : *plain_; }

  executor_type get_executor() { return lowest().get_executor(); }
  ClientSocket& socket() { return lowest().socket(); }
  template <class Time>
  void expires_after(Time time) {
    lowest().expires_after(time);
  }
  template <class Time>
  void expires_at(Time time) {
    lowest().expires_at(time);
  }

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

  // A read without the ClientStream's timer (the caller runs its own idle timeout and cancels
  // the socket): the plain socket directly, which saves two timer syscalls per piece; over
  // TLS the same, with the stream's expiry cleared so an earlier deadline cannot fire.
  template <class MutableBuffers, class Handler>
  void async_read_some_untimed(const MutableBuffers& buffers, Handler&& handler) {
    if (tls_) {
      tls_->next_layer().expires_never();
      tls_->async_read_some(buffers, std::forward<Handler>(handler));
    } else {
      plain_->socket().async_read_some(buffers, std::forward<Handler>(handler));
    }
  }

  // The same for a write (the session's response writes run under its ClientDeadline).
  template <class ConstBuffers, class Handler>
  void async_write_some_untimed(const ConstBuffers& buffers, Handler&& handler) {
    if (tls_) {
      tls_->next_layer().expires_never();
      tls_->async_write_some(buffers, std::forward<Handler>(handler));
    } else {
      plain_->socket().async_write_some(buffers, std::forward<Handler>(handler));
    }
  }

  // The transport as an AsyncWriteStream whose writes are untimed (for composed writes).
  class UntimedWrites {
   public:
    using executor_type = ClientTransport::executor_type;
    explicit UntimedWrites(ClientTransport& transport) : transport_(transport) {}
    executor_type get_executor() { return transport_.get_executor(); }
    template <class ConstBuffers, class Handler>
    void async_write_some(const ConstBuffers& buffers, Handler&& handler) {
      transport_.async_write_some_untimed(buffers, std::forward<Handler>(handler));
    }

   private:
    ClientTransport& transport_;
  };

 private:
  // Kept alive as long as the connection: a reload swaps the listener's context, not ours.
  std::shared_ptr<boost::asio::ssl::context> tls_context_;
  std::optional<ClientStream> plain_;
  std::optional<TlsStream> tls_;
};

}  // namespace fencegate::gateway::tls
