#include "resource_adapters/webdav/webdav_adapter.h"

#include <string>
#include <utility>

#include "resource_adapters/transport/backend_servers.h"
#include "resource_adapters/transport/condition_book.h"
#include "resource_adapters/transport/server_connection_pools.h"
#include "resource_adapters/webdav/condition_gate.h"
#include "resource_adapters/webdav/condition_probe.h"
#include "resource_adapters/webdav/dav_connection.h"
#include "resource_adapters/webdav/dav_connection_pool.h"
#include "resource_adapters/webdav/fenced_write.h"

namespace fencegate::adapters {

namespace {

using webdav::ConditionGate;
using webdav::DavConnectionPool;
using webdav::FencedWrite;
using webdav::WebdavBackend;

bool ChangesResources(http::verb method) {
  return method == http::verb::put || method == http::verb::delete_ || method == http::verb::move ||
         method == http::verb::copy || method == http::verb::mkcol;
}

// Methods with which a client could take the gateway's locks or rewrite the token property.
bool ReservedForGateway(http::verb method) {
  return method == http::verb::lock || method == http::verb::unlock ||
         method == http::verb::proppatch;
}

// The adapter of one network thread: fenced writes run their LOCK sequence here, everything
// else (and the write itself) goes through the passthrough adapter of the same thread.
class WebdavAdapter : public ResourceAdapter {
 public:
  WebdavAdapter(boost::asio::io_context& ioc, std::shared_ptr<const WebdavBackend> backend,
                std::shared_ptr<ConditionGate> gate, std::unique_ptr<ResourceAdapter> passthrough)
      : ioc_(ioc),
        backend_(std::move(backend)),
        pool_(std::make_shared<DavConnectionPool>(
            ioc, backend_,
            std::make_shared<ServerConnectionPools>(backend_->servers,
                                                    backend_->options.max_idle_connections,
                                                    backend_->options.idle_timeout))),
        passthrough_(std::move(passthrough)),
        gate_(std::move(gate)),
        probes_here_(gate_->StartOnce(ioc)) {}

  ~WebdavAdapter() override { StopProbes(); }

  void Forward(ForwardRequest request, Downstream& downstream, DoneHandler done) override {
    const http::verb method = request.header->method();
    if (ReservedForGateway(method)) {
      ForwardOutcome outcome;
      outcome.problem =
          Problem{405, "webdav-method-reserved", "Method Not Allowed",
                  std::string(request.header->method_string()) +
                      " is not forwarded on a webdav route: the gateway owns the locks and "
                      "the fencing-token property"};
      done(std::move(outcome));
      return;
    }
    if (request.fencing_token && ChangesResources(method)) {
      return FencedWriteWithVerdict(request, downstream, std::move(done));
    }
    passthrough_->Forward(request, downstream, std::move(done));
  }

  void Shutdown() override {
    StopProbes();
    pool_->CloseAll();
    passthrough_->Shutdown();
  }

 private:
  // The backend's condition verdict decides first; only a verdict's change takes the gate's
  // lock (to copy it and decide again), so a write takes none while the verdict stays.
  void FencedWriteWithVerdict(ForwardRequest request, Downstream& downstream, DoneHandler done) {
    const std::uint64_t generation = gate_->generation();
    if (generation != decision_generation_) {
      decision_ =
          webdav::DecideFencedWrite(gate_->Current(), backend_->servers->backend_name(), false);
      decision_generation_ = generation;
    }
    Follow(decision_, request, downstream, std::move(done));
  }

  void Follow(const webdav::GateDecision& decision, ForwardRequest request, Downstream& downstream,
              DoneHandler done) {
    if (decision.refusal) {
      ForwardOutcome outcome;
      outcome.problem = decision.refusal;
      return done(std::move(outcome));
    }
    if (decision.wait) {
      // The write waits for the next probe (shared with the other writes waiting); the
      // adapter outlives the exchanges of its thread.
      return gate_->WhenProbed(
          ioc_.get_executor(), [this, request, &downstream,
                                done = std::move(done)](const ConditionReport& probed) mutable {
            Follow(webdav::DecideFencedWrite(probed, backend_->servers->backend_name(), true),
                   request, downstream, std::move(done));
          });
    }
    std::make_shared<FencedWrite>(ioc_, backend_, pool_, *passthrough_, request, downstream,
                                  std::move(done), decision.store_tokens)
        ->Start();
  }

  void StopProbes() {
    if (probes_here_) gate_->Stop();
    probes_here_ = false;
  }

  boost::asio::io_context& ioc_;
  std::shared_ptr<const WebdavBackend> backend_;
  // Shared with the fenced writes in flight, which give their connection back when done.
  std::shared_ptr<DavConnectionPool> pool_;
  std::unique_ptr<ResourceAdapter> passthrough_;
  std::shared_ptr<ConditionGate> gate_;
  bool probes_here_;  // this thread runs the backend's probes
  // What this thread does with the gate's verdict as of decision_generation_.
  webdav::GateDecision decision_;
  std::uint64_t decision_generation_ = 0;
};

class WebdavAdapterFactory : public AdapterFactory {
 public:
  WebdavAdapterFactory(std::shared_ptr<const WebdavBackend> backend,
                       std::unique_ptr<AdapterFactory> passthrough)
      : backend_(std::move(backend)),
        passthrough_(std::move(passthrough)),
        book_(std::make_shared<ConditionBook>(backend_->servers->backend_name(),
                                              backend_->options.conditions)),
        gate_(std::make_shared<ConditionGate>(
            book_, [backend = backend_](boost::asio::io_context& ioc,
                                        std::function<void(ConditionReport)> done) {
              webdav::ProbeWebdavConditions(ioc, backend, std::move(done));
            })) {}

  std::unique_ptr<ResourceAdapter> CreateForThread(boost::asio::io_context& ioc) override {
    return std::make_unique<WebdavAdapter>(ioc, backend_, gate_,
                                           passthrough_->CreateForThread(ioc));
  }

  std::shared_ptr<const ConditionBook> condition_book() const override { return book_; }
  void ProbeConditionsAgain() override { gate_->ProbeAgain(); }

  std::string_view kind() const override { return "webdav"; }

  // The passthrough's: the lock sequence and the passthrough share one per backend.
  std::shared_ptr<UpstreamServers> upstream_servers() const override { return backend_->servers; }

 private:
  std::shared_ptr<const WebdavBackend> backend_;
  std::unique_ptr<AdapterFactory> passthrough_;
  std::shared_ptr<ConditionBook> book_;
  std::shared_ptr<ConditionGate> gate_;
};

}  // namespace

std::unique_ptr<AdapterFactory> MakeWebdavAdapterFactory(
    WebdavAdapterOptions options, std::unique_ptr<AdapterFactory> passthrough, std::string* error) {
  auto backend = std::make_shared<WebdavBackend>();
  // One UpstreamServers per backend: the passthrough's, built from the same servers.
  backend->servers = passthrough->upstream_servers();
  if (!MakeConnectSettings(options, *backend->servers, &backend->connect, error)) return nullptr;
  backend->options = std::move(options);
  return std::make_unique<WebdavAdapterFactory>(std::move(backend), std::move(passthrough));
}

}  // namespace fencegate::adapters
