#include "resource_adapters/s3/s3_adapter.h"

#include <utility>

#include "base/tls_client/client_tls.h"
#include "resource_adapters/s3/s3_exchange.h"
#include "resource_adapters/transport/resolve_once.h"

namespace fencegate::adapters {

namespace {

// The adapter of one network thread; its version cache and connection pool are touched only
// from that thread.
class S3Adapter : public ResourceAdapter {
 public:
  S3Adapter(boost::asio::io_context& ioc, std::shared_ptr<s3::Backend> backend)
      : ioc_(ioc),
        backend_(std::move(backend)),
        cache_(std::make_shared<s3::VersionCache>(backend_->options.version_cache_entries)),
        pool_(std::make_shared<UpstreamConnectionPool>(backend_->options.max_idle_connections,
                                                       backend_->options.idle_timeout)) {}

  void Forward(ForwardRequest request, Downstream& downstream, DoneHandler done) override {
    std::make_shared<s3::S3Exchange>(ioc_, backend_, cache_, pool_, request, downstream,
                                     std::move(done))
        ->Start();
  }

  void Shutdown() override { pool_->CloseAll(); }

 private:
  boost::asio::io_context& ioc_;
  std::shared_ptr<s3::Backend> backend_;
  std::shared_ptr<s3::VersionCache> cache_;
  std::shared_ptr<UpstreamConnectionPool> pool_;
};

class S3AdapterFactory : public AdapterFactory {
 public:
  explicit S3AdapterFactory(std::shared_ptr<s3::Backend> backend) : backend_(std::move(backend)) {}

  std::unique_ptr<ResourceAdapter> CreateForThread(boost::asio::io_context& ioc) override {
    return std::make_unique<S3Adapter>(ioc, backend_);
  }

  std::string_view kind() const override { return "s3"; }

 private:
  std::shared_ptr<s3::Backend> backend_;
};

}  // namespace

std::unique_ptr<AdapterFactory> MakeS3AdapterFactory(S3AdapterOptions options, std::string* error) {
  auto backend = std::make_shared<s3::Backend>();
  if (options.tls) {
    backend->endpoint.tls_context = tls_client::BuildClientContext(options.tls_options, error);
    if (!backend->endpoint.tls_context) return nullptr;
    backend->endpoint.tls_options = options.tls_options;
  }
  backend->endpoint.addresses = ResolveOnce(options.host, options.port);
  backend->endpoint.host = options.host;
  backend->endpoint.host_header = s3::HostHeader(options.host, options.port, options.tls);
  backend->endpoint.region = options.region;
  backend->endpoint.credentials = {options.access_key, options.secret_key};
  backend->endpoint.connect_timeout = options.connect_timeout;
  backend->endpoint.response_timeout = options.response_timeout;
  backend->unquoted_etags = options.etag_quoting == EtagQuoting::kUnquoted;
  backend->options = std::move(options);
  return std::make_unique<S3AdapterFactory>(std::move(backend));
}

}  // namespace fencegate::adapters
