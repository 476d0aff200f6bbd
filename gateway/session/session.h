#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/buffer_body.hpp>
#include <boost/beast/http/parser.hpp>

#include "base/net/gathered_write.h"
#include "base/net/message_parser.h"
#include "gateway/auth/authorizer.h"
#include "gateway/http/problem.h"
#include "gateway/http/refusal.h"
#include "gateway/http/request_fields.h"
#include "gateway/http/request_framing.h"
#include "gateway/http/trace_context.h"
#include "gateway/locks/lock_api.h"
#include "gateway/server/config_generation.h"
#include "gateway/server/gateway_context.h"
#include "gateway/server/thread_generation.h"
#include "gateway/session/client_deadline.h"
#include "gateway/session/client_stream.h"
#include "gateway/session/fenced_write.h"
#include "gateway/session/idempotency_hook.h"
#include "gateway/session/lock_exchange.h"
#include "gateway/session/refusal_reply.h"
#include "gateway/session/relay_body.h"
#include "gateway/session/resource_fence_admission.h"
#include "gateway/tls/client_transport.h"
#include "gateway/tls/peer_identity.h"
#include "lockstore/fence/admission.h"
#include "lockstore/idempotency/idempotency_store.h"
#include "resource_adapters/adapter.h"

namespace fencegate::gateway {

class NetworkThread;

// One client connection: reads requests one after another (pipelined bytes wait in the
// buffer), routes, admits fenced writes, forwards through the route's adapter and answers.
// Implements Downstream so adapters stream bodies through the connection's own timeouts and
// limits, and LockExchange::Client for the built-in lock API. Lives on one network thread; kept
// alive by its pending operations (Beast style).
class Session : public std::enable_shared_from_this<Session>,
                public adapters::Downstream,
                private LockExchange::Client {
 public:
  // TLS when `tls_context` is set (the listener's current context; see gateway/tls/).
  Session(ClientSocket socket, NetworkThread& thread,
          std::shared_ptr<boost::asio::ssl::context> tls_context = nullptr);
  ~Session() override;
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  void Start();
  // Shutdown drain: closes the connection if no request is in progress on it.
  void CloseIfIdle();
  // Server shutdown, once this session's thread is joined and nothing that held a callback into
  // it (admission, adapters, stores, lock service) is left: lets go of the hold a request cut at
  // the drain deadline still keeps on its session, which may end it here.
  void ReleaseAtShutdown() { const auto self = std::move(self_hold_); }

  // Who the client proved to be with its certificate; empty on plain connections.
  const PeerIdentity& peer_identity() const { return peer_identity_; }

  // Downstream (session_downstream.cc).
  bool body_done() const override;
  void AsyncReadBody(boost::asio::mutable_buffer buffer, ReadHandler handler) override;
  std::optional<adapters::BodyRead> ReadBodyNowOrLater(boost::asio::mutable_buffer buffer,
                                                       ReadHandler handler) override;
  bool WaitForBodyNowOrLater(WaitHandler handler) override;
  void AsyncWriteResponse(adapters::ResponseHeader&& header, boost::asio::const_buffer body,
                          bool last, WriteHandler handler) override;
  void AsyncWriteBody(boost::asio::const_buffer body, bool last, WriteHandler handler) override;
  bool WriteResponseNowOrLater(adapters::ResponseHeader&& header, boost::asio::const_buffer body,
                               bool last, WriteHandler handler) override;
  bool WriteBodyNowOrLater(boost::asio::const_buffer body, bool last,
                           WriteHandler handler) override;

 private:
  friend class DecisionMailbox;  // hands late admission decisions to OnLateAdmissionDecision

  enum class Phase { kReadingHeader, kAdmitting, kForwarding, kResponding, kClosed };

  // One socket read of header bytes; body reads through buffer_ take at least this much.
  static constexpr std::size_t kHeaderReadChunk = 4096;

  // The state of the request in progress (its side of the fence is fenced_); reset for each
  // request, strings keep capacity.
  struct Exchange {
    bool begun = false;  // counted in flight (BeginExchange)
    std::chrono::steady_clock::time_point started;
    std::int64_t started_unix_ms = 0;
    std::string request_id;
    const RouteRuntime* route = nullptr;
    bool fenced = false;
    bool token_signed = false;  // a valid Fencing-Token-Signature came with it
    // The lock service confirmed the token's holder live (README "Tokens", verify_tokens).
    bool token_verified = false;
    std::string_view outcome = "bad_request";
    unsigned status = 0;
    unsigned upstream_status = 0;
    std::uint64_t bytes_in = 0;
    std::uint64_t bytes_out = 0;
    bool keep_alive = false;   // what the client asked for
    bool close_after = false;  // the connection cannot be reused after this response
    bool expect_continue = false;
    bool continue_sent = false;
    bool head = false;
    bool response_has_body = true;
    auth::Decision auth;             // who is asking, on a route with a policy
    bool advance_forbidden = false;  // the policy grants no advance of this fence key
    // Sent by another replica (Fencegate-Forwarded-By): the connection's certificate is that
    // replica's, not the client's, and authenticates nobody (ClientIdentity).
    bool from_replica = false;
    // Several replicas (session_cluster.cc): the owned shard this write is admitted under
    // (self-fencing checks it), or the peer adapter it is forwarded through instead.
    std::optional<std::size_t> cluster_shard;
    std::optional<std::size_t> peer_adapter;
    bool self_fenced = false;  // the shard stopped being ours while the write was under way
    RequestTrace trace;        // W3C trace context (trace id for the logs, traceparent sent)
    // The slug of the problem the gateway answered with (its refusal); empty when it did not.
    std::string_view refusal;
    // A stale-token refusal: why (lockstore::StaleReasonName, a literal); for the access log.
    std::string_view stale_reason;
  };

  // TLS connections (session_tls.cc): tell a ClientHello from plain HTTP, handshake, and
  // send close_notify at the end.
  void StartTls();
  void OnTlsFirstBytes(boost::system::error_code ec, std::size_t bytes);
  void RefusePlainHttp();
  void OnTlsHandshake(boost::system::error_code ec);
  void ShutdownTls();

  void StartRequest();
  void ContinueHeaderRead();
  void OnHeaderBytes(boost::system::error_code ec, std::size_t bytes);
  void BeginExchange();
  void OnHeaderBlock(std::size_t length);
  // False when the request was refused for a field name with '_' (session_underscores.cc).
  bool CheckUnderscoreFields();
  void HandleRequest();
  // README "Tokens" (session_tokens.cc): false after refusing an unsigned, forged, expired or
  // out-of-scope token.
  bool CheckTokenSignature();
  // The refusals of README "Tokens" (texts in session_tokens.cc, in this order).
  enum class TokenRefusal {
    kUnsigned,
    kSignatureTwice,
    kMalformed,
    kForged,
    kExpired,
    kWrongScope,
    kTooFarAhead,
    kNotHeld,
  };
  void RefuseToken(TokenRefusal which);
  // A token beyond max_token_advance on a route with verify_tokens: ask the lock service whether
  // it is held right now, off this thread; admit it without the bound if so.
  void VerifyTokenLive();
  void OnTokenCheck(const lockstore::TokenCheck& check);
  // docs/ARCHITECTURE.md "Several replicas" (session_cluster.cc): where a fenced write goes
  // next. It decides only; HandleRequest() takes the step, so the flow runs one way.
  enum class ShardStep {
    kAdmitHere,       // this replica owns the shard (or there is no cluster)
    kForwardToOwner,  // prepared for the owner's peer adapter: Forward() without admission
    kRefused,         // answered 503 shard-unavailable
  };
  ShardStep RouteByShard(const RequestFields& fields);
  // True (and remembered) once the shard of a write admitted here is no longer this replica's.
  bool SelfFenced();
  void RefuseSelfFenced();
  // Authentication and the route's policy (session_auth.cc); false: it refused.
  bool Authorize(const RequestFields& fields);
  // The same for the lock API under locks.policy, before its body is read.
  bool AuthorizeLock(std::string_view path, const RequestFields& fields);
  // 401 (with a challenge) or 403 problem+json; `audited` keeps it in the rejection trail.
  void RefuseUnauthorized(auth::Refusal refusal, std::string_view forbidden_detail, bool audited);
  // The max_advance bound for Admit(): 0 when the policy grants no advance of the fence key,
  // else the route's max_token_advance unless the token is signed or verified live (README
  // "Tokens").
  std::optional<lockstore::Token> AdmitBound();
  void RefuseAdvance();

  // The fenced-write pipeline (session_admission.cc): admit at the fence, Proceed() (the
  // idempotency step) and Forward() through the route's adapter, and CompleteAdmission() once
  // the backend exchange is over. fenced_ decides each step; these take it.
  void Admit();
  // A fenced request whose body names the resources it writes (an S3 DeleteObjects,
  // ResourceAdapter::NamesResourcesInBody): no fence key of its own is admitted; the adapter
  // admits each resource through resource_fence_, with the rules of ResourceKeyPolicy.
  bool ResourcesNamedInBody();
  void ForwardWithResourceFence();
  ResourceFenceAdmission::KeyPolicy ResourceKeyPolicy(std::string_view key);
  void OnAdmissionDecision(const lockstore::AdmissionDecision& decision);
  void OnLateAdmissionDecision(const lockstore::AdmissionDecision& decision);
  // barrier_deadline_'s expiry: the barrier wait before admission, the write deadline after.
  void OnFenceDeadline();
  void OnBarrierTimeout();
  void CutAdmittedWrite();
  void Forward();
  void OnForwardDone(adapters::ForwardOutcome outcome);
  void RelayProblem(const adapters::Problem& problem, bool backend_fence,
                    bool backend_reported_highest);
  void CompleteAdmission();

  // Idempotency keys (session_idempotency.cc). CheckIdempotencyKey() runs once the route is
  // known (false: it refused); Proceed() replaces Forward() once the request may go ahead.
  bool CheckIdempotencyKey();
  void Proceed();
  void OnIdempotencyBegin(lockstore::IdempotencyStore::BeginResult result);
  void ReadBodyForFingerprint();
  void MatchStoredRecord();
  void ReplayStoredResponse(const lockstore::IdempotencyRecord& record);
  void RefuseAfterAdmission(const RefusalReply& refusal);
  void WriteLastPieceDurably(boost::asio::const_buffer body);
  void SettleIdempotency(adapters::ForwardOutcome outcome);

  // The built-in lock API (session_lock_api.cc): lock_exchange_ reads the body and asks the
  // LockApi; the session watches a long-poll waiter's client and writes the answer.
  void HandleLockRequest();
  void OnLockQueued() override;
  void OnLockAnswer(LockHttpResponse response) override;
  void OnLockBodyRefused(Refusal refusal, std::string_view detail) override;
  void OnLockBodyLost() override;
  void RespondLock(LockHttpResponse response);

  // Refusals and the gateway's own responses (session.cc).
  void Refuse(const RefusalReply& refusal);
  // The route's disclose_highest_token for this request's client (README "Refusals").
  bool DisclosesHighestToken() const;
  // The client's verified certificate for authentication: none on a write another replica
  // forwarded (its certificate names that replica).
  const PeerIdentity* ClientIdentity() const {
    return exchange_.from_replica ? nullptr : &peer_identity_;
  }
  // Adds why the presented token is stale (the lock API's lease endings) to a stale-token
  // refusal, and keeps it for the access log.
  void ExplainStaleToken(ProblemDetails* problem);
  // A request refused before it could be served, its framing or size unreliable and its body
  // unread: answered (outcome bad_request), then the connection closes.
  void RefuseUnreadable(Refusal refusal, std::string_view detail = {});
  void RecordRejection(const RefusalReply& refusal);
  // The gateway's own answer with `refusal`'s problem (its table detail when `detail` is empty),
  // after the request was admitted or forwarded: nothing recorded, the outcome left as is.
  void RespondWithRefusal(Refusal refusal, std::string_view detail, bool close);
  // Retry-After: `retry_after_seconds` when not 0.
  void RespondWithProblem(const ProblemDetails& problem, bool close,
                          std::uint32_t retry_after_seconds,
                          std::string_view www_authenticate = {});
  void DrainBodyThenWrite();
  void WriteOwnResponse();

  // The client I/O behind Downstream (session_downstream.cc).
  void ReadBodySome(boost::asio::mutable_buffer buffer);
  // Points the parser's body at the adapter's buffer.
  void TargetBodyRead(boost::asio::mutable_buffer buffer);
  void ContinueBodyRead(bool initiating);
  // Parses body bytes already in buffer_; true when that ends the read (bytes came out, the
  // body ended, or an error, left in `ec`).
  bool ParseBufferedBody(boost::system::error_code& ec);
  void ReadBodyFromSocket();
  // The finished read's result, counted (bytes_in, the idempotency hash).
  adapters::BodyRead TakeBodyRead(boost::system::error_code ec);
  void OnBodyBytes(boost::system::error_code ec, std::size_t bytes, bool in_place);
  void CompleteBodyRead(boost::system::error_code ec);
  void BeginResponse(adapters::ResponseHeader&& header);
  // Writes a piece of the response, then calls write_handler_ (never inside the call).
  void WriteBodyPiece(boost::asio::const_buffer body, bool last);
  // Frames the piece into write_gather_; returns its body bytes.
  std::size_t PrepareBodyPiece(boost::asio::const_buffer body, bool last);
  // Writes write_gather_ under the response_write timeout, then calls write_handler_.
  void WritePieceLater(std::size_t body_bytes);
  void PrepareResponseHeader();
  void FinishRequest();
  void Close();
  void LingeringClose();
  void CloseSocket();

  std::string_view RequestPath() const;
  // client_deadline_'s and body_read_deadline_'s expiry: the socket operations in progress end
  // with an error.
  void CancelClientIo();

  NetworkThread& thread_;
  const GatewayContext& context_;
  // The configuration this connection was accepted under (README "Reloading"), kept for its
  // life: every request on it runs on one generation. After a reload the connection closes
  // once nothing more from the client waits to be answered (PrepareResponseHeader).
  ThreadGeneration& generation_view_;
  const ConfigGeneration& generation_;
  tls::ClientTransport stream_;
  // timeouts.idle / header_read / response_write of the header reads and response writes that
  // go to the socket directly (not through stream_'s per-operation timer).
  ClientDeadline<Session> client_deadline_;
  PeerIdentity peer_identity_;
  bool tls_established_ = false;  // handshake done: close with close_notify
  boost::beast::flat_buffer buffer_;
  std::optional<adapters::MessageParser<true, RelayBody>> parser_;
  boost::beast::http::response<boost::beast::http::buffer_body, adapters::Fields>
      response_;                            // body unused
  adapters::MessageWriter message_writer_;  // writes response_ and the body pieces
  adapters::WriteGather write_gather_;      // the buffers of the response write in progress
  // timeouts.barrier_wait of an admission that was not decided at once, then
  // timeouts.write_deadline of the admitted request. Lazy like client_deadline_: most advances
  // are decided within a group commit, and on a keep-alive connection the timer is armed about
  // once per write_deadline, however many writes pass.
  ClientDeadline<Session> barrier_deadline_;
  // timeouts.body_read of each read of the request body while the adapter reads it (see
  // ContinueBodyRead): its own instance, as a body read may overlap a response write.
  ClientDeadline<Session> body_read_deadline_;
  boost::asio::mutable_buffer body_read_target_;  // the adapter's buffer of the read in progress
  std::chrono::steady_clock::time_point header_deadline_;
  HeaderBlockScan header_scan_;
  Phase phase_ = Phase::kReadingHeader;
  bool socket_closed_ = false;
  std::string client_ip_;
  std::string host_lower_;        // the request's Host, canonical (see CanonicaliseHost)
  std::string canonical_target_;  // the target respelled, when it came in another spelling
  std::string scratch_;
  std::string problem_body_;
  // For the access log, kept past the header (an adapter may move its fields out): the
  // request's User-Agent, and the slug of a backend's problem the gateway relayed.
  std::string user_agent_;
  std::string relayed_slug_;
  Exchange exchange_;
  FencedWrite fenced_;           // the fence key, token and admission of the request in progress
  IdempotencyHook idempotency_;  // the Idempotency-Key side of the request in progress
  ResourceFenceAdmission resource_fence_;  // the resources a request's body names
  // The lock API request in progress.
  LockExchange lock_exchange_{*this, *this};
  ReadHandler read_handler_;
  WaitHandler body_wait_handler_;
  WriteHandler write_handler_;
  // Keeps the session alive while the admission controller or the adapter holds a callback
  // that captured only `this` (a pointer fits std::function's small buffer: no allocation).
  std::shared_ptr<Session> self_hold_;
};

}  // namespace fencegate::gateway
