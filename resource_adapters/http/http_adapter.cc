#include "resource_adapters/http/http_adapter.h"

#include <string>
#include <utility>

#include "base/net/timeout_queue.h"
#include "resource_adapters/http/exchange_block_pool.h"
#include "resource_adapters/http/forward_exchange.h"
#include "resource_adapters/http/relay_buffer_pool.h"
#include "resource_adapters/transport/backend_servers.h"
#include "resource_adapters/transport/server_connection_pools.h"

namespace fencegate::adapters {

namespace {

// Relay buffers kept per network thread between exchanges (256 KiB each by default, resident
// only as far as bodies have filled them). The pool keeps as many as were in use at once lately
// (a group commit's round); this cap bounds what a burst of concurrent large relays can leave
// pinned: 32 MiB at the default size.
constexpr std::size_t kMaxIdleRelayBuffers = 128;
// Exchange blocks (a few KiB each) for as many exchanges as a group commit may release at once.
constexpr std::size_t kMaxIdleExchangeBlocks = 64;

// The adapter of one network thread: its connection pool is touched only from that thread.
class HttpAdapter : public ResourceAdapter {
 public:
  HttpAdapter(boost::asio::io_context& ioc, std::shared_ptr<const HttpBackend> backend)
      : ioc_(ioc),
        backend_(std::move(backend)),
        pools_(std::make_shared<ServerConnectionPools>(backend_->servers->servers,
                                                       backend_->options.max_idle_connections,
                                                       backend_->options.idle_timeout)),
        buffers_(std::make_shared<RelayBufferPool>(backend_->options.buffer_bytes,
                                                   kMaxIdleRelayBuffers)),
        blocks_(std::make_shared<ExchangeBlockPool>(kMaxIdleExchangeBlocks)),
        response_timeouts_(
            std::make_shared<TimeoutQueue>(ioc.get_executor(), backend_->options.response_timeout)),
        monitor_(backend_->servers->StartMonitorOnce(ioc)) {}

  ~HttpAdapter() override {
    pools_->CloseAll();
    StopMonitor(monitor_);
  }

  void Forward(ForwardRequest request, Downstream& downstream, DoneHandler done) override {
    std::allocate_shared<ForwardExchange>(ExchangeBlockAllocator<ForwardExchange>(blocks_), ioc_,
                                          backend_, pools_, buffers_, response_timeouts_, request,
                                          downstream, std::move(done))
        ->Start();
  }

  void Shutdown() override {
    pools_->CloseAll();
    StopMonitor(monitor_);
  }

 private:
  boost::asio::io_context& ioc_;
  std::shared_ptr<const HttpBackend> backend_;
  // Shared with in-flight exchanges, which return their connection when they finish.
  std::shared_ptr<ServerConnectionPools> pools_;
  // Shared with in-flight exchanges, which return their buffer when they end.
  std::shared_ptr<RelayBufferPool> buffers_;
  // Kept alive by the allocator copy in each exchange's control block.
  std::shared_ptr<ExchangeBlockPool> blocks_;
  // The response timeouts of this thread's exchanges (shared: each exchange's entry holds it).
  std::shared_ptr<TimeoutQueue> response_timeouts_;
  // The backend's health checks and resolves, when this thread's adapter was the first.
  std::shared_ptr<BackendMonitor> monitor_;
};

class HttpAdapterFactory : public AdapterFactory {
 public:
  explicit HttpAdapterFactory(std::shared_ptr<const HttpBackend> backend)
      : backend_(std::move(backend)) {}

  std::unique_ptr<ResourceAdapter> CreateForThread(boost::asio::io_context& ioc) override {
    return std::make_unique<HttpAdapter>(ioc, backend_);
  }

  std::string_view kind() const override { return "http"; }

  std::shared_ptr<UpstreamServers> upstream_servers() const override {
    return backend_->servers->servers;
  }

 private:
  std::shared_ptr<const HttpBackend> backend_;
};

}  // namespace

std::unique_ptr<AdapterFactory> MakeHttpAdapterFactory(HttpAdapterOptions options,
                                                       std::string* error) {
  auto backend = std::make_shared<HttpBackend>();
  backend->servers = MakeBackendServers(options, error);
  if (!backend->servers) return nullptr;
  backend->options = std::move(options);
  return std::make_unique<HttpAdapterFactory>(std::move(backend));
}

}  // namespace fencegate::adapters
