#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/buffer_body.hpp>
#include <boost/beast/http/parser.hpp>

#include "base/net/http_header.h"
#include "base/net/message_parser.h"

#include "base/net/gathered_write.h"
#include "base/net/timeout_queue.h"
#include "resource_adapters/adapter.h"
#include "resource_adapters/http/http_adapter.h"
#include "resource_adapters/http/relay_buffer_pool.h"
#include "resource_adapters/transport/backend_servers.h"
#include "resource_adapters/transport/server_choice.h"
#include "resource_adapters/transport/server_connection_pools.h"

namespace fencegate::adapters {

// What every exchange of one backend shares; immutable after the factory built it.
struct HttpBackend {
  HttpAdapterOptions options;
  // The backend's servers (shared with the webdav lock sequence on a webdav backend).
  std::shared_ptr<BackendServers> servers;
};

// One request relayed to the backend and its response relayed back, streaming both bodies
// through a fixed buffer. Lives as long as its pending operations (shared_from_this).
class ForwardExchange : public std::enable_shared_from_this<ForwardExchange> {
 public:
  ForwardExchange(boost::asio::io_context& ioc, std::shared_ptr<const HttpBackend> backend,
                  std::shared_ptr<ServerConnectionPools> pools,
                  std::shared_ptr<RelayBufferPool> buffers,
                  std::shared_ptr<TimeoutQueue> response_timeouts, ForwardRequest request,
                  Downstream& downstream, ResourceAdapter::DoneHandler done);
  ~ForwardExchange();
  ForwardExchange(const ForwardExchange&) = delete;
  ForwardExchange& operator=(const ForwardExchange&) = delete;

  void Start();

 private:
  using Stream = UpstreamConnection;
  using UpstreamRequest = http::request<http::buffer_body, Fields>;

  void PrepareUpstreamRequest(const ForwardRequest& request);
  void StartUpstreamTimeout();
  // Ends the operation the timeout covered; turns its cancellation by the timeout into timeout.
  void EndUpstreamTimeout(boost::system::error_code& ec);
  void Connect();
  void OnConnected(OpenedConnection opened);
  void SendRequest();
  void OnRequestSent();
  // The request body is relayed through two buffers, so that the next piece is read from
  // the client while the previous one is written to the backend.
  struct BodyPiece {
    int buffer = 0;  // 0: relay_buffer_, 1: spare_relay_buffer_
    std::size_t bytes = 0;
    bool last = false;
  };
  void PumpRequestBody();
  void ReadRequestBodyChunk(int buffer);
  // Reads into buffer body_read_buffer_, taken from the pool if it is not held.
  void ReadIntoRelayBuffer();
  // The second buffer lets reading and writing overlap; it needs room in the relay budget.
  bool MayUseSpareBuffer();
  void OnRequestBodyChunk(boost::system::error_code ec, std::size_t bytes, bool done);
  void WriteRequestBodyChunk(const BodyPiece& piece);
  void OnRequestBodyWritten(boost::system::error_code ec, bool last);
  // A piece went out whole.
  void OnRequestBodyWritten(bool last);
  char* RelayBuffer(int buffer) const;
  RelayBufferPool::Buffer& HeldBuffer(int buffer);
  void ReadResponseHeader();
  void ParseResponseHeader();
  void OnResponseHeader();
  void ReadResponseBodyChunk();
  // Parses response body bytes already read; false when none came out (read from the socket).
  bool ParseBufferedBody();
  void WriteResponse(std::size_t bytes, bool last);
  void OnResponseWritten(boost::system::error_code ec, std::size_t bytes, bool last);
  void Complete();

  // A failure on the upstream connection; retried on a fresh connection when that is safe.
  void OnUpstreamError(boost::system::error_code ec);
  bool MayRetry(boost::system::error_code ec) const;
  // Without side effects and without a body: may go out a second time.
  bool Resendable() const { return idempotent_method_ && !request_has_body_; }
  void FailClient(boost::system::error_code ec);
  void Finish(ForwardOutcome::Failure failure, boost::system::error_code ec,
              std::optional<Problem> problem);
  void CloseUpstream();

  boost::asio::io_context& ioc_;
  std::shared_ptr<const HttpBackend> backend_;
  // Kept alive for choice_, which refers to it.
  std::shared_ptr<ServerConnectionPools> pools_;
  ServerChoice choice_;
  const std::string_view fence_key_;
  const std::optional<std::size_t> pinned_server_;
  // When the request started towards a server (ForwardOutcome::upstream_time).
  std::chrono::steady_clock::time_point upstream_start_;
  bool upstream_time_taken_ = false;
  Downstream& downstream_;
  ResourceAdapter::DoneHandler done_;

  UpstreamRequest upstream_request_;
  const bool request_has_body_;
  const bool idempotent_method_;
  MessageWriter message_writer_;  // writes upstream_request_ (its body is unused)
  WriteGather write_gather_;      // the buffers of the write in progress
  bool request_sent_ = false;
  // options.response_timeout as the idle timeout of every operation on the upstream connection
  // after it is connected (see StartUpstreamTimeout), in this thread's queue of them.
  TimeoutQueue::Entry upstream_timeout_;
  bool body_buffer_busy_[2] = {false, false};  // being read into, waiting, or being written
  std::optional<BodyPiece> body_piece_ready_;  // read, waiting for the write in progress
  int body_read_buffer_ = 0;
  int body_write_buffer_ = 0;
  // The piece being written did not fill its buffer: the client had sent no more yet, so the
  // buffer goes back to the pool once written rather than being held through the wait.
  bool body_write_short_ = false;
  bool body_read_outstanding_ = false;
  bool body_write_outstanding_ = false;
  bool body_read_done_ = false;
  // An upstream write failed while a client read was outstanding: the failure is reported once
  // that read completes, because the gateway reuses the client connection after done_.
  boost::system::error_code deferred_upstream_error_;
  bool finished_ = false;

  std::unique_ptr<Stream> stream_;
  bool reused_connection_ = false;
  bool retried_ = false;

  // Per exchange, so its first 512 bytes come from FieldBlockPool rather than malloc.
  boost::beast::basic_flat_buffer<FieldAllocator<char>> upstream_read_buffer_;
  std::optional<MessageParser<false, http::buffer_body>> parser_;
  int interim_responses_ = 0;
  ResponseHeader downstream_header_;

  std::shared_ptr<RelayBufferPool> buffers_;
  // Taken when body bytes are at hand (or the response's are), not when the exchange starts.
  RelayBufferPool::Buffer relay_buffer_;
  RelayBufferPool::Buffer spare_relay_buffer_;  // taken once a body needs a second piece
  const std::size_t relay_buffer_size_;
  // What this exchange's request body reserved in backend_->options.relay_budget.
  std::size_t reserved_bytes_ = 0;
  ForwardOutcome outcome_;
};

}  // namespace fencegate::adapters
