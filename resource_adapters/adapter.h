#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/buffer.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/system/error_code.hpp>

#include "base/net/http_header.h"
#include "base/net/inline_handler.h"

namespace fencegate::adapters {

class ConditionBook;
class ResourceFence;
class UpstreamServers;

namespace http = boost::beast::http;

// A request body read that finished inside Downstream::ReadBodyNowOrLater: what its handler
// would have been called with.
struct BodyRead {
  boost::system::error_code ec;
  std::size_t bytes = 0;
  bool done = false;
};

// The client side of one exchange, implemented by the gateway. An adapter reads the request
// body and writes the response only through this, so bodies stream in both directions and the
// gateway keeps its timeouts and limits on the client connection. All calls and handlers run on
// the network thread that owns the exchange; at most one read and one write are outstanding.
class Downstream {
 public:
  // Completion handlers are kept inline (no allocation per body read or response write).
  using ReadHandler = InlineHandler<void(boost::system::error_code, std::size_t bytes, bool done)>;
  using WriteHandler = InlineHandler<void(boost::system::error_code)>;
  using WaitHandler = InlineHandler<void(boost::system::error_code)>;

  virtual ~Downstream() = default;

  // True when the request has no body left to read (no body at all, or all of it read).
  virtual bool body_done() const = 0;

  // Reads up to buffer_size(buffer) bytes of the request body. `done` is true once the body is
  // complete (possibly together with bytes > 0). Sends "100 Continue" first if the client asked
  // for it. Errors: the client went away, timed out, or exceeded the body limit
  // (http::error::body_limit).
  virtual void AsyncReadBody(boost::asio::mutable_buffer buffer, ReadHandler handler) = 0;

  // Writes the response header and a first piece of the body. `last` ends the response. A header
  // without Content-Length gets chunked framing (or close-delimited for HTTP/1.0 clients).
  // `header` is moved from (taken by reference: a by-value parameter cost one more move of the
  // fields per response).
  virtual void AsyncWriteResponse(ResponseHeader&& header, boost::asio::const_buffer body,
                                  bool last, WriteHandler handler) = 0;

  // Writes the next piece of the response body; `last` ends the response.
  virtual void AsyncWriteBody(boost::asio::const_buffer body, bool last, WriteHandler handler) = 0;

  // The handlers of the calls above never run inside the call (Asio's rule for an asynchronous
  // operation). The variants below may also finish inside the call, sparing a pass through the
  // event loop: then `handler` is dropped uncalled and the caller goes on as its handler would
  // have. Otherwise they behave as the calls above. The defaults never finish at once.

  // Finishes at once when body bytes (or the body's end) are already at hand, as when a small
  // body came in with the header: returns what the handler would have been given.
  virtual std::optional<BodyRead> ReadBodyNowOrLater(boost::asio::mutable_buffer buffer,
                                                     ReadHandler handler) {
    AsyncReadBody(buffer, std::move(handler));
    return std::nullopt;
  }

  // Returns true when a body read would find something at once (body bytes at hand, the body's
  // end, a failure to report) or must not be waited for (a client that waits for "100
  // Continue"); otherwise waits until body bytes arrive, then calls `handler` (an error: the
  // client went away, paused longer than the body read timeout, or its write was cut). So an
  // adapter takes a relay buffer only once there is something to put in it: a body whose
  // client is slow to send holds no memory meanwhile. The default never waits.
  virtual bool WaitForBodyNowOrLater(WaitHandler handler) {
    (void)handler;
    return true;
  }

  // Finish at once, returning true, when the connection takes the whole piece at once.
  virtual bool WriteResponseNowOrLater(ResponseHeader&& header, boost::asio::const_buffer body,
                                       bool last, WriteHandler handler) {
    AsyncWriteResponse(std::move(header), body, last, std::move(handler));
    return false;
  }
  virtual bool WriteBodyNowOrLater(boost::asio::const_buffer body, bool last,
                                   WriteHandler handler) {
    AsyncWriteBody(body, last, std::move(handler));
    return false;
  }
};

// What the gateway tells an adapter about one request, beyond its header.
struct ForwardRequest {
  // The request header, already stripped of hop-by-hop fields and carrying Via,
  // X-Forwarded-For, Forwarded and X-Request-Id. The adapter may modify it or move its fields
  // out, but must leave the request line (method, target, version): the gateway reads it after.
  RequestHeader* header = nullptr;
  // The route's path prefix (e.g. "/files/"); adapters that map paths (filesystem) strip it.
  std::string_view route_prefix;
  // The fencing token the gateway admitted, for fenced writes.
  std::optional<std::uint64_t> fencing_token;
  // The fence key the write was admitted under (empty for unfenced requests); the key a
  // backend under the fence_key policy picks its server by.
  std::string_view fence_key;
  std::string_view request_id;
  // The backend server (index in its UpstreamServers) the request must go to: a step of a
  // sequence held to one server (a webdav fenced write's PUT after its LOCK). None: picked.
  std::optional<std::size_t> server;
  // Set for a fenced request whose resources its body names (ResourceAdapter::
  // NamesResourcesInBody): the adapter admits fencing_token on each of them here before it
  // writes any. The gateway admitted no fence key of its own for such a request.
  ResourceFence* resource_fence = nullptr;
};

// An error the adapter found before any response byte was written. The gateway renders it as
// an RFC 9457 problem (application/problem+json).
struct Problem {
  unsigned status = 500;
  std::string type;  // a short slug, e.g. "path-escapes-root"; the gateway makes the type URI
  std::string title;
  std::string detail;
  bool retry_after = false;               // answer with Retry-After (a transient refusal)
  std::uint32_t retry_after_seconds = 1;  // its value, when retry_after
};

// Admission of the resources one request writes when its path does not name them: an S3
// DeleteObjects names its objects in its body. Implemented by the gateway: it renders each
// resource's path through the route's fence_key template and admits the request's token on
// every key, one key after another in sorted order (so two such requests never wait on each
// other), all or none. Used on the exchange's network thread.
class ResourceFence {
 public:
  struct Verdict {
    // Every key is admitted and held until the adapter's done handler has run.
    bool admitted = false;
    // Not admitted: the problem to answer. A stale token has type kStaleAtGatewayProblemType
    // and a detail naming the first resource (in sorted order) whose fence is higher.
    std::optional<Problem> problem{};
    // Whether the route lets this client learn a fence's highest token; the adapter's own
    // refusals (a backend holding a higher token) name tokens only when it does.
    bool disclose_highest_token = true;
  };
  using Handler = std::function<void(Verdict)>;

  virtual ~ResourceFence() = default;
  // `paths`: each resource as a client would address it alone, decoded ("/bucket/a key").
  // `done` runs on the exchange's network thread, never inside the call.
  virtual void AdmitAll(std::vector<std::string> paths, Handler done) = 0;
};

// The problem type of a write the gateway's fence refused (through a ResourceFence); the
// gateway counts it as a stale rejection with reason "stale_token".
inline constexpr std::string_view kStaleAtGatewayProblemType = "stale-token";

// The problem type of a write the backend itself refused because it holds a higher fencing token;
// the gateway counts it as a stale rejection with reason "backend_fence".
inline constexpr std::string_view kStaleAtBackendProblemType = "stale-token-at-backend";

// How one forward ended. Exactly one of: a response was written (response_started), or a
// problem is set for the gateway to answer, or the client connection failed (error).
struct ForwardOutcome {
  enum class Failure {
    kNone,
    kUpstreamConnect,   // could not connect to the backend -> 502
    kUpstreamTimeout,   // the backend did not answer in time -> 504
    kUpstreamProtocol,  // the backend sent something that is not HTTP/1.1 -> 502
    kClient,            // the client went away, timed out or broke framing
    kBackendIO,         // a local backend (filesystem) failed an I/O operation
  };
  Failure failure = Failure::kNone;
  boost::system::error_code error;
  bool response_started = false;
  bool response_complete = false;
  std::optional<Problem> problem;
  unsigned status = 0;           // the status sent to the client (0 if none)
  unsigned upstream_status = 0;  // the backend's status (HTTP backends), 0 if none
  std::string etag;              // the object's version as the backend reported it
  std::uint64_t request_body_bytes = 0;
  std::uint64_t response_body_bytes = 0;
  // True when the adapter sent (some of) the request to the backend; a fenced write that
  // reached the backend may have been applied even if it failed afterwards.
  bool backend_reached = false;
  // Set when the backend itself holds a higher token than the one presented (a write that got
  // past the gateway's own check, e.g. through another gateway): the gateway counts the
  // refusal as a stale rejection with reason "backend_fence".
  std::optional<std::uint64_t> backend_stale_token;
  // The server the request went to last (its configured url, in storage that lives as long as
  // the configuration); empty when none was picked.
  std::string_view upstream_server;
  // Time spent on the backend: from the start of connecting (or of sending, on a reused
  // connection) until the final response header arrived, or until the exchange ended when no
  // header came. The gateway's own time (admission, fencing, relaying the body to the client)
  // is not in it. Zero when nothing went to a server.
  std::chrono::nanoseconds upstream_time{0};
};

// Writes to one kind of backend. One instance per network thread, used only from that thread,
// so connection pools and buffers need no locks.
class ResourceAdapter {
 public:
  using DoneHandler = std::function<void(ForwardOutcome)>;

  virtual ~ResourceAdapter() = default;

  // Forwards one request and streams the response to `downstream`. Calls `done` exactly once,
  // after the response is complete or the exchange failed. `downstream` outlives the call.
  virtual void Forward(ForwardRequest request, Downstream& downstream, DoneHandler done) = 0;

  // Closes idle upstream connections (graceful shutdown).
  virtual void Shutdown() = 0;

  // True when a fenced request with this header writes resources its body names, not the one
  // its path names (an S3 DeleteObjects): the gateway then admits no fence key for the path and
  // forwards with a ResourceFence (ForwardRequest::resource_fence).
  virtual bool NamesResourcesInBody(const RequestHeader& header) const {
    (void)header;
    return false;
  }
};

// Creates the per-thread adapters of one configured backend.
class AdapterFactory {
 public:
  virtual ~AdapterFactory() = default;
  virtual std::unique_ptr<ResourceAdapter> CreateForThread(boost::asio::io_context& ioc) = 0;
  virtual std::string_view kind() const = 0;
  // Called once every network thread has stopped, before any of them is destroyed: returns when
  // no work on this factory's own threads can still hand a result back to a network thread
  // (through its ThreadInbox, which goes with the thread).
  virtual void WaitForWorkBoundForNetworkThreads() {}
  // The backend's servers and what is known of their health (admin API, metrics, /readyz); null
  // for a kind without network servers (filesystem).
  virtual std::shared_ptr<UpstreamServers> upstream_servers() const { return nullptr; }
  // The verdicts of the backend's condition probes (/readyz, /admin/backends, metrics); null for
  // a kind whose fenced writes do not rely on the server's conditions (http, filesystem).
  virtual std::shared_ptr<const ConditionBook> condition_book() const { return nullptr; }
  // Called on a reload that keeps this factory (its backend's entry did not change): probes the
  // server's conditions again, as a new factory would at start. Any thread.
  virtual void ProbeConditionsAgain() {}
};

}  // namespace fencegate::adapters
