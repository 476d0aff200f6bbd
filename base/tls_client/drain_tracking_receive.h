#pragma once

#include <sys/socket.h>

#include <cerrno>
#include <cstddef>
#include <new>
#include <type_traits>
#include <utility>

#include <boost/asio/associated_cancellation_slot.hpp>
#include <boost/asio/associated_executor.hpp>
#include <boost/asio/buffer.hpp>
#include <boost/asio/detail/reactive_socket_service_base.hpp>
#include <boost/asio/detail/reactor.hpp>
#include <boost/asio/detail/reactor_op.hpp>
#include <boost/asio/detail/recycling_allocator.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/error.hpp>

namespace fencegate::tls_client {

// A receive on a plain TCP socket that tells Asio's reactor when it emptied the socket, so the
// next receive waits for epoll's next edge instead of first trying a recv that would fail with
// EAGAIN.
//
// Why: Asio's epoll reactor registers each socket edge-triggered and keeps a per-socket "try
// the read first" flag, set on every readiness edge and cleared only when a read returns end of
// stream. So every read starts with a recv, and on a keep-alive connection that is one EAGAIN
// recv per request on the client side (the next request is not there yet) and one on the
// upstream side (the backend has not answered yet): half of a proxied GET's recv calls, each
// a full system call (1.2 us of CPU on the VMs this was measured on). A stream recv that returns
// fewer bytes than asked for has emptied the socket, and any byte arriving later raises a new edge;
// returning Asio's done_and_exhausted status for it clears the flag under the reactor's own rules
// (the edge handler sets it again), which is what nginx's readiness tracking does.
//
// It uses Asio's detail API (the reactor operation type and the socket service's start_op),
// pinned to the epoll reactor by the static_assert below. Falls back to the socket's own
// async_read_some for an empty buffer and for a handler with a cancellation slot, which this
// operation does not serve. The handler runs as with async_read_some: never inside this call,
// through its associated executor.
namespace drain_tracking_detail {

namespace asio_detail = boost::asio::detail;

static_assert(std::is_same_v<asio_detail::reactor, asio_detail::epoll_reactor>,
              "the drain-tracking receive relies on Asio's epoll reactor");

// The socket's implementation and service are protected members of Asio's basic_socket, and
// the service's start_op a protected member of its base; a pointer to member named through a
// derived class reaches them. No object of these classes is made.
template <class Socket>
struct SocketAccess : Socket {
  static auto& Object(Socket& socket) { return socket.*(&SocketAccess::impl_); }
};
struct ServiceAccess : asio_detail::reactive_socket_service_base {
  static void StartRead(reactive_socket_service_base& service,
                        base_implementation_type& implementation, asio_detail::reactor_op* op) {
    (service.*(&ServiceAccess::start_op))(implementation, asio_detail::reactor::read_op, op,
                                          /*is_continuation=*/false, /*is_non_blocking=*/true,
                                          /*noop=*/false);
  }
};

template <class Handler, class IoExecutor>
class ReceiveOp : public asio_detail::reactor_op {
 public:
  // Asio's per-thread recycling cache, the one its own operations are allocated from.
  using Allocator =
      asio_detail::recycling_allocator<ReceiveOp, asio_detail::thread_info_base::default_tag>;

  ReceiveOp(int descriptor, boost::asio::mutable_buffer buffer, Handler handler,
            const IoExecutor& io_executor)
      : reactor_op(boost::system::error_code(), &Perform, &Complete),
        descriptor_(descriptor),
        buffer_(buffer),
        handler_(std::move(handler)),
        io_executor_(io_executor) {}

 private:
  static status Perform(reactor_op* base) {
    auto* op = static_cast<ReceiveOp*>(base);
    for (;;) {
      const ssize_t received = ::recv(op->descriptor_, op->buffer_.data(), op->buffer_.size(), 0);
      if (received > 0) {
        op->bytes_transferred_ = static_cast<std::size_t>(received);
        return op->bytes_transferred_ < op->buffer_.size() ? done_and_exhausted : done;
      }
      if (received == 0) {
        op->ec_ = boost::asio::error::eof;
        return done_and_exhausted;
      }
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) return not_done;
      op->ec_ = boost::system::error_code(errno, boost::asio::error::get_system_category());
      return done;
    }
  }

  // owner is null when the io_context is destroyed with the operation pending: the handler is
  // then destroyed without being called, as Asio does.
  static void Complete(void* owner, asio_detail::operation* base,
                       const boost::system::error_code& /*unused*/, std::size_t /*unused*/) {
    auto* op = static_cast<ReceiveOp*>(base);
    Handler handler(std::move(op->handler_));
    const IoExecutor io_executor = op->io_executor_;
    const boost::system::error_code ec = op->ec_;
    const std::size_t bytes = op->bytes_transferred_;
    op->~ReceiveOp();
    Allocator().deallocate(op, 1);
    if (owner == nullptr) return;
    auto executor = boost::asio::get_associated_executor(handler, io_executor);
    if constexpr (std::is_same_v<decltype(executor), IoExecutor>) {
      // The reactor completes operations inside its io_context's run loop, so a handler bound
      // to the socket's own executor runs here, without dispatch's memory fence.
      if (executor == io_executor) {
        handler(ec, bytes);
        return;
      }
    }
    boost::asio::dispatch(
        executor, [handler = std::move(handler), ec, bytes]() mutable { handler(ec, bytes); });
  }

  int descriptor_;
  boost::asio::mutable_buffer buffer_;
  Handler handler_;
  IoExecutor io_executor_;
};

}  // namespace drain_tracking_detail

// async_read_some of one buffer on `socket` (an Asio TCP socket on the epoll reactor).
template <class Socket, class Handler>
void AsyncReceiveTrackingDrain(Socket& socket, boost::asio::mutable_buffer buffer,
                               Handler&& handler) {
  using HandlerType = std::decay_t<Handler>;
  using Op = drain_tracking_detail::ReceiveOp<HandlerType, typename Socket::executor_type>;
  if (buffer.size() == 0 || boost::asio::get_associated_cancellation_slot(handler).is_connected()) {
    socket.async_read_some(buffer, std::forward<Handler>(handler));
    return;
  }
  auto& object = drain_tracking_detail::SocketAccess<Socket>::Object(socket);
  auto& implementation = object.get_implementation();
  typename Op::Allocator allocator;
  void* memory = allocator.allocate(1);
  Op* op;
  try {
    op = new (memory) Op(implementation.socket_, buffer,
                         HandlerType(std::forward<Handler>(handler)), socket.get_executor());
  } catch (...) {
    allocator.deallocate(static_cast<Op*>(memory), 1);
    throw;
  }
  drain_tracking_detail::ServiceAccess::StartRead(object.get_service(), implementation, op);
}

}  // namespace fencegate::tls_client
