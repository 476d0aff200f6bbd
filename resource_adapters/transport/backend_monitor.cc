#include "resource_adapters/transport/backend_monitor.h"

#include <atomic>
#include <chrono>
#include <string>
#include <utility>
#include <vector>

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl/stream_base.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/beast/core/error.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/empty_body.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/write.hpp>

#include "base/tls_client/client_tls.h"
#include "base/tls_client/plain_or_tls_stream.h"
#include "resource_adapters/transport/resolve_once.h"

namespace fencegate::adapters {

namespace {

namespace http = boost::beast::http;
using boost::system::error_code;
using tcp = boost::asio::ip::tcp;

// The Host header: the port only when it is not the scheme's default (RFC 9110 7.2).
std::string HostHeader(const ServerAddress& address) {
  const std::uint16_t default_port = address.tls ? 443 : 80;
  const bool ipv6 = address.host.find(':') != std::string::npos;
  std::string host = ipv6 ? "[" + address.host + "]" : address.host;
  if (address.port != default_port) host += ":" + std::to_string(address.port);
  return host;
}

// One GET of the health check path to one server: connect, handshake (https), send, read the
// response header, all within the check's timeout; the verdict goes to UpstreamServers. The
// connection is closed after the header (Connection: close): the body does not matter.
class HealthCheck : public std::enable_shared_from_this<HealthCheck> {
 public:
  using Done = std::function<void(bool passed, std::string result)>;

  HealthCheck(boost::asio::io_context& ioc, const ServerAddress& address,
              const HealthCheckOptions& options,
              std::shared_ptr<boost::asio::ssl::context> tls_context,
              const tls_client::ClientTlsOptions& tls_options, Done done)
      : address_(address),
        options_(options),
        tls_options_(tls_options),
        stream_(ioc, address.tls ? std::move(tls_context) : nullptr),
        done_(std::move(done)) {}

  void Start(std::shared_ptr<const UpstreamServers::Endpoints> endpoints) {
    stream_.expires_after(options_.timeout);
    if (address_.tls && !stream_.is_tls()) {
      Finish(false, "failed: no TLS client context for an https server");
      return;
    }
    // Names are looked up by the monitor's lookup thread only (a network thread's io_context
    // cannot run Asio's resolver); a server whose name has not resolved yet fails its check.
    if (endpoints->empty()) {
      Finish(false, "failed: no address for " + address_.host + " yet");
      return;
    }
    Connect(*endpoints);
  }

  // Closes the connection; the outstanding operation completes with an error, not reported.
  void Cancel() {
    cancelled_ = true;
    error_code ignored;
    stream_.socket().close(ignored);
  }

 private:
  void Connect(const UpstreamServers::Endpoints& endpoints) {
    // The sequence is copied into the handler: it must outlive the operation.
    auto owned = std::make_shared<const UpstreamServers::Endpoints>(endpoints);
    stream_.lowest().async_connect(
        *owned, [self = shared_from_this(), owned](error_code ec, const tcp::endpoint&) {
          if (ec) {
            self->Fail("connect", ec);
            return;
          }
          self->Handshake();
        });
  }

  void Handshake() {
    if (!stream_.is_tls()) {
      Send();
      return;
    }
    tls_client::PrepareClientHandshake(tls_options_, address_.host, stream_.tls().native_handle());
    stream_.tls().async_handshake(boost::asio::ssl::stream_base::client,
                                  [self = shared_from_this()](error_code ec) {
                                    if (ec) {
                                      self->Fail("TLS handshake", ec);
                                      return;
                                    }
                                    self->Send();
                                  });
  }

  void Send() {
    request_.method(http::verb::get);
    request_.target(options_.path);
    request_.version(11);
    request_.set(http::field::host, HostHeader(address_));
    request_.set(http::field::user_agent, "fencegate-health-check");
    request_.set(http::field::connection, "close");
    http::async_write(stream_, request_, [self = shared_from_this()](error_code ec, std::size_t) {
      if (ec) {
        self->Fail("send", ec);
        return;
      }
      self->Receive();
    });
  }

  void Receive() {
    http::async_read_header(stream_, buffer_, parser_,
                            [self = shared_from_this()](error_code ec, std::size_t) {
                              if (ec) {
                                self->Fail("response", ec);
                                return;
                              }
                              self->Judge(self->parser_.get().result_int());
                            });
  }

  void Judge(unsigned status) {
    const bool passed =
        status >= options_.expected_status_min && status <= options_.expected_status_max;
    Finish(passed, (passed ? "passed: status " : "failed: status ") + std::to_string(status));
  }

  void Fail(const char* step, error_code ec) {
    Finish(false, std::string("failed: ") + step + ": " +
                      (ec == boost::beast::error::timeout ? "timed out" : ec.message()));
  }

  void Finish(bool passed, std::string result) {
    error_code ignored;
    stream_.socket().close(ignored);
    if (cancelled_ || !done_) return;
    Done done = std::move(done_);
    done_ = nullptr;
    done(passed, std::move(result));
  }

  const ServerAddress address_;
  const HealthCheckOptions options_;
  const tls_client::ClientTlsOptions tls_options_;
  tls_client::PlainOrTlsStream stream_;
  http::request<http::empty_body> request_;
  boost::beast::flat_buffer buffer_;
  http::response_parser<http::empty_body> parser_;
  Done done_;
  bool cancelled_ = false;
};

class Monitor final : public BackendMonitor, public std::enable_shared_from_this<Monitor> {
 public:
  Monitor(boost::asio::io_context& ioc, std::shared_ptr<UpstreamServers> servers,
          std::shared_ptr<boost::asio::ssl::context> tls_context,
          tls_client::ClientTlsOptions tls_options)
      : ioc_(ioc),
        servers_(std::move(servers)),
        tls_context_(std::move(tls_context)),
        tls_options_(std::move(tls_options)),
        check_timer_(ioc),
        resolve_timer_(ioc),
        checks_(servers_->size()) {}

  // On the io_context's thread, whichever thread called BackendMonitor::Start.
  void Begin() {
    if (stopped_) return;
    ResolveAll();
    if (servers_->options().health_check) CheckAll();
  }

  void Stop() override {
    stopped_ = true;
    check_timer_.cancel();
    resolve_timer_.cancel();
    lookups_->stopped = true;
    for (auto& check : checks_) {
      if (check) check->Cancel();
      check.reset();
    }
  }

 private:
  // ---- names

  // A network thread's io_context is single-threaded without locking, where Asio's resolver
  // does not run (it answers operation_not_supported): getaddrinfo blocks, so the lookups run on
  // the monitor's own thread, and their results go straight to UpstreamServers, which any thread
  // may update. One round at a time: a slow resolver delays the next round, never queues them.
  void ResolveAll() {
    const bool periodic = servers_->options().resolve_interval.count() > 0;
    bool any_unresolved = false;
    for (std::size_t i = 0; i < servers_->size(); ++i) {
      any_unresolved = any_unresolved || servers_->endpoints(i)->empty();
    }
    if (!lookups_->round_running.exchange(true)) {
      boost::asio::post(lookup_thread_, [lookups = lookups_, servers = servers_, periodic] {
        for (std::size_t i = 0; i < servers->size() && !lookups->stopped; ++i) {
          // Resolved once (resolve_interval 0): only a server without addresses is looked up.
          if (!periodic && !servers->endpoints(i)->empty()) continue;
          const ServerAddress& address = servers->address(i);
          // A failed lookup keeps the last addresses: a resolver hiccup must not empty the pool.
          UpstreamServers::Endpoints found = ResolveOnce(address.host, address.port);
          if (!found.empty() && !lookups->stopped) servers->SetEndpoints(i, std::move(found));
        }
        lookups->first_round_done = true;
        lookups->round_running = false;
      });
    }
    // A server without addresses is looked up every second until it has some, whatever
    // resolve_interval says.
    const std::chrono::milliseconds next =
        periodic
            ? servers_->options().resolve_interval
            : (any_unresolved ? std::chrono::milliseconds(1000) : std::chrono::milliseconds(0));
    if (next.count() == 0) return;
    resolve_timer_.expires_after(next);
    resolve_timer_.async_wait([self = shared_from_this()](error_code ec) {
      if (!ec && !self->stopped_) self->ResolveAll();
    });
  }

  // ---- health checks

  void CheckAll() {
    const HealthCheckOptions& options = *servers_->options().health_check;
    for (std::size_t i = 0; i < servers_->size(); ++i) {
      // A check slower than the interval is not doubled: its server waits for the next round.
      if (checks_[i]) continue;
      // Until the first lookups are done, a name not resolved yet says nothing of its server.
      if (!lookups_->first_round_done && servers_->endpoints(i)->empty()) continue;
      auto check = std::make_shared<HealthCheck>(
          ioc_, servers_->address(i), options, tls_context_, tls_options_,
          // Weak: the monitor owns its checks, not the other way round.
          [weak = weak_from_this(), i](bool passed, std::string result) {
            const auto self = weak.lock();
            if (!self) return;
            self->checks_[i].reset();
            self->servers_->OnHealthCheck(i, passed, std::move(result));
          });
      checks_[i] = check;
      check->Start(servers_->endpoints(i));
    }
    check_timer_.expires_after(options.interval);
    check_timer_.async_wait([self = shared_from_this()](error_code ec) {
      if (!ec && !self->stopped_) self->CheckAll();
    });
  }

  boost::asio::io_context& ioc_;
  const std::shared_ptr<UpstreamServers> servers_;
  const std::shared_ptr<boost::asio::ssl::context> tls_context_;
  const tls_client::ClientTlsOptions tls_options_;
  boost::asio::steady_timer check_timer_;
  boost::asio::steady_timer resolve_timer_;
  // What the lookup thread shares with the monitor: whether it may still write, whether a round
  // is running, and whether the first one is over.
  struct Lookups {
    std::atomic<bool> stopped{false};
    std::atomic<bool> round_running{false};
    std::atomic<bool> first_round_done{false};
  };
  const std::shared_ptr<Lookups> lookups_ = std::make_shared<Lookups>();
  std::vector<std::shared_ptr<HealthCheck>> checks_;  // the one running per server, if any
  bool stopped_ = false;
  // Declared last, so joined first when the monitor goes; the join waits for at most the one
  // lookup in progress (its jobs hold only `lookups_` and the servers).
  boost::asio::thread_pool lookup_thread_{1};
};

}  // namespace

std::shared_ptr<BackendMonitor> BackendMonitor::Start(
    boost::asio::io_context& ioc, std::shared_ptr<UpstreamServers> servers,
    std::shared_ptr<boost::asio::ssl::context> tls_context,
    tls_client::ClientTlsOptions tls_options) {
  auto monitor = std::make_shared<Monitor>(ioc, std::move(servers), std::move(tls_context),
                                           std::move(tls_options));
  boost::asio::post(ioc, [monitor] { monitor->Begin(); });
  return monitor;
}

}  // namespace fencegate::adapters
