#include "resource_adapters/filesystem/filesystem_adapter.h"

#include <stop_token>
#include <string>
#include <thread>
#include <utility>

#include <boost/asio/post.hpp>
#include <boost/asio/thread_pool.hpp>

#include "base/log/event_log.h"
#include "resource_adapters/filesystem/file_store.h"
#include "resource_adapters/filesystem/filesystem_exchanges.h"
#include "resource_adapters/filesystem/live_writes.h"
#include "resource_adapters/filesystem/path_length.h"
#include "resource_adapters/filesystem/resource_path.h"
#include "resource_adapters/filesystem/temp_sweep.h"

namespace fencegate::adapters {

namespace {

constexpr std::string_view kAllowedMethods = "GET, HEAD, PUT, DELETE";
// Same document shape and type URI as the gateway's problems; written here because a Problem
// cannot carry the Allow field a 405 needs.
constexpr std::string_view kMethodNotAllowedBody =
    R"({"type":"https://fencegate.dev/problems/method-not-allowed","title":"Method Not Allowed",)"
    R"("status":405,"detail":"the file store serves GET, HEAD, PUT and DELETE"})";

class FilesystemAdapter : public ResourceAdapter {
 public:
  FilesystemAdapter(boost::asio::io_context& ioc, std::shared_ptr<const FilesystemBackend> backend)
      : ioc_(ioc), backend_(std::move(backend)) {}

  void Forward(ForwardRequest request, Downstream& downstream, DoneHandler done) override {
    auto mapped = MapTargetToPath(request.header->target(), request.route_prefix);
    if (auto* problem = std::get_if<Problem>(&mapped)) {
      AnswerLater(std::move(*problem), std::move(done));
      return;
    }
    ResourcePath path = std::move(std::get<ResourcePath>(mapped));
    if (auto problem = CheckPathLength(path, backend_->store->token_storage())) {
      AnswerLater(std::move(*problem), std::move(done));
      return;
    }
    std::shared_ptr<FileExchange> exchange;
    switch (request.header->method()) {
      case http::verb::get:
      case http::verb::head:
        exchange = std::make_shared<ReadFileExchange>(ioc_, backend_, std::move(path), request,
                                                      downstream, std::move(done));
        break;
      case http::verb::put:
      case http::verb::delete_:
        if (path.name.empty()) {
          AnswerLater(Problem{400, "bad-path", "Bad Request",
                              "PUT and DELETE need a file name, not a directory"},
                      std::move(done));
          return;
        }
        if (request.header->method() == http::verb::put) {
          std::make_shared<WriteFileExchange>(ioc_, backend_, std::move(path), request, downstream,
                                              std::move(done))
              ->Start(live_writes_);
          return;
        }
        exchange = std::make_shared<DeleteFileExchange>(ioc_, backend_, std::move(path), request,
                                                        downstream, std::move(done));
        break;
      default:
        AnswerMethodNotAllowed(downstream, std::move(done));
        return;
    }
    exchange->Start();
  }

  // Nothing is pooled: files are opened per request.
  void Shutdown() override {}

 private:
  // `done` is never called from inside Forward, so the gateway sees one order of events.
  void AnswerLater(Problem problem, DoneHandler done) {
    boost::asio::post(ioc_, [problem = std::move(problem), done = std::move(done)]() mutable {
      ForwardOutcome outcome;
      outcome.problem = std::move(problem);
      done(std::move(outcome));
    });
  }

  void AnswerMethodNotAllowed(Downstream& downstream, DoneHandler done) {
    ResponseHeader header;
    header.result(http::status::method_not_allowed);
    header.set(http::field::allow, kAllowedMethods);
    header.set(http::field::content_type, "application/problem+json");
    header.set(http::field::content_length, std::to_string(kMethodNotAllowedBody.size()));
    downstream.AsyncWriteResponse(std::move(header), boost::asio::buffer(kMethodNotAllowedBody),
                                  true, [done = std::move(done)](boost::system::error_code ec) {
                                    ForwardOutcome outcome;
                                    outcome.status = 405;
                                    outcome.response_started = true;
                                    outcome.response_complete = !ec;
                                    outcome.response_body_bytes =
                                        ec ? 0 : kMethodNotAllowedBody.size();
                                    if (ec) {
                                      outcome.failure = ForwardOutcome::Failure::kClient;
                                      outcome.error = ec;
                                    }
                                    done(std::move(outcome));
                                  });
  }

  boost::asio::io_context& ioc_;
  std::shared_ptr<const FilesystemBackend> backend_;
  // Destroyed after this thread stopped: removes the temp files of uploads a drain cut.
  LiveWrites live_writes_;
};

// Removes the temp files that writes cut by a crash or kill -9 left under `root`, on its own
// thread while the gateway serves (the sweep leaves the locked files of running writes alone),
// and says what it did in the event log once done.
void SweepTempFiles(const FileStore& store, const std::string& root, const std::stop_token& stop) {
  const TempSweepResult swept = RemoveAbandonedTempFiles(store.root_fd(), stop);
  if (stop.stop_requested()) return;
  log::Info("filesystem root " + root + ": removed " + std::to_string(swept.removed) +
                " temp files of cut writes (" + std::to_string(swept.removed_bytes) + " bytes), " +
                std::to_string(swept.in_use) + " in use by running writes",
            {{"root", root},
             {"removed", swept.removed},
             {"removed_bytes", swept.removed_bytes},
             {"in_use", swept.in_use}});
  if (swept.errors > 0) {
    log::Warn("filesystem root " + root + ": the temp file sweep skipped " +
                  std::to_string(swept.errors) + " entries",
              {{"root", root}, {"skipped", swept.errors}, {"first_error", swept.first_error}});
  }
}

class FilesystemAdapterFactory : public AdapterFactory {
 public:
  FilesystemAdapterFactory(std::shared_ptr<FileStore> store,
                           const FilesystemAdapterOptions& options)
      : io_pool_(options.io_threads > 0 ? options.io_threads : 1),
        backend_(std::make_shared<FilesystemBackend>(std::move(store), io_pool_.get_executor(),
                                                     options.chunk_bytes, options.relay_budget)),
        sweeper_([store = backend_->store, root = options.root](std::stop_token stop) {
          SweepTempFiles(*store, root, stop);
        }) {}

  // Runs the queued file work to its end (temp files get removed) before the threads go.
  ~FilesystemAdapterFactory() override { io_pool_.join(); }

  std::unique_ptr<ResourceAdapter> CreateForThread(boost::asio::io_context& ioc) override {
    return std::make_unique<FilesystemAdapter>(ioc, backend_);
  }

  std::string_view kind() const override { return "filesystem"; }

  // A drain can stop a network thread while its upload's chunk is being written to disk; the
  // write's result then goes to the thread's inbox, which must still be there.
  void WaitForWorkBoundForNetworkThreads() override {
    const std::atomic<int>& jobs = backend_->jobs_bound_for_network_threads;
    for (int left = jobs.load(std::memory_order_acquire); left != 0;
         left = jobs.load(std::memory_order_acquire)) {
      jobs.wait(left, std::memory_order_acquire);
    }
  }

 private:
  boost::asio::thread_pool io_pool_;
  std::shared_ptr<const FilesystemBackend> backend_;
  std::jthread sweeper_;  // declared last: stopped and joined first
};

}  // namespace

std::unique_ptr<AdapterFactory> MakeFilesystemAdapterFactory(FilesystemAdapterOptions options,
                                                             std::string* error) {
  std::unique_ptr<FileStore> store;
  if (auto ec = FileStore::Open(options.root, options.sync_writes, store)) {
    *error = "cannot open filesystem backend root " + options.root + ": " + ec.message();
    return nullptr;
  }
  return std::make_unique<FilesystemAdapterFactory>(std::move(store), options);
}

}  // namespace fencegate::adapters
