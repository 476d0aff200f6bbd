#include "resource_adapters/webdav/condition_probe.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <exception>
#include <random>
#include <utility>
#include <vector>

#include <boost/asio/async_result.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "resource_adapters/webdav/dav_xml.h"

namespace fencegate::adapters::webdav {

namespace {

namespace asio = boost::asio;
using boost::system::error_code;
using Request = DavConnection::Request;
using Response = DavConnection::Response;

// A token value no gateway writes, so a read-back proves this probe's PROPPATCH took.
constexpr std::uint64_t kProbeTokenValue = 4242;
constexpr std::string_view kProbeTokenProperty = "probe-token";
// A syntactically valid lock token no server issued.
constexpr std::string_view kForeignLockToken =
    "<opaquelocktoken:00000000-0000-4000-8000-0000fe9ce9a7>";

struct DavAnswer {
  error_code ec;
  Response response;
};

asio::awaitable<DavAnswer> AskDav(DavConnection& connection, Request request) {
  return asio::async_initiate<const asio::use_awaitable_t<>&, void(DavAnswer)>(
      [&connection](auto handler, Request request) {
        // DavConnection keeps a copyable std::function; the coroutine's handler is move-only.
        auto shared = std::make_shared<decltype(handler)>(std::move(handler));
        connection.Send(std::move(request), [shared](error_code ec, Response response) {
          std::move (*shared)(DavAnswer{ec, std::move(response)});
        });
      },
      asio::use_awaitable, std::move(request));
}

std::string RandomRunName() {
  std::random_device random;
  std::uniform_int_distribution<std::uint64_t> bits;
  static constexpr char kHex[] = "0123456789abcdef";
  std::uint64_t value = bits(random);
  std::string name = "run-";
  for (int i = 0; i < 16; ++i, value >>= 4) name += kHex[value & 0xf];
  return name;
}

bool ProbeSucceeded(unsigned status) { return status >= 200 && status < 300; }

bool RefusedAsLocked(const Response& response) {
  return response.result_int() == 423 ||
         (response.result_int() == 207 && MultistatusReportsLocked(response.body()));
}

std::string Answered(std::string_view what, const Response& response) {
  return std::string(what) + " answered " + std::to_string(response.result_int());
}

// The probes that need the resource locked.
constexpr std::array<std::string_view, 4> kLockedProbes = {
    probe_names::kLockExclusive, probe_names::kWriteWithoutLockToken,
    probe_names::kWriteWithLockToken, probe_names::kDeadProperty};

// Why a server could not be probed to the end; set on the first failure.
struct ServerFailure {
  std::string error;
};

// One server's probe run: the steps in order, each recorded in `results`.
class ServerProbe {
 public:
  ServerProbe(std::shared_ptr<DavConnection> connection, std::string collection)
      : connection_(std::move(connection)),
        collection_(std::move(collection)),
        run_(collection_ + RandomRunName() + "/"),
        resource_(run_ + "a"),
        fresh_member_(run_ + "b") {}

  // The results, or the reason the server could not be probed.
  asio::awaitable<std::optional<ServerFailure>> Run(std::vector<ConditionProbeResult>* results) {
    results_ = results;
    if (auto failure = co_await SetUp()) co_return failure;
    auto failure = co_await Probes();
    co_await CleanUp();
    co_return failure;
  }

 private:
  // Sends one request with up to two extra header fields; a connection error ends the run
  // (failure_ set) and yields nullopt. (No initializer lists in these coroutines: gcc 12
  // rejects them there.)
  asio::awaitable<std::optional<Response>> Ask(http::verb method, const std::string& target,
                                               std::string body, std::string_view field = {},
                                               std::string value = {}, std::string_view field2 = {},
                                               std::string value2 = {}) {
    Request request = connection_->MakeRequest(method, target, std::move(body));
    if (!field.empty()) request.set(field, value);
    if (!field2.empty()) request.set(field2, value2);
    DavAnswer answer = co_await AskDav(*connection_, std::move(request));
    if (answer.ec) {
      // The connector's problem says more (a refused certificate, say) than the error code.
      const auto& unreachable = connection_->unreachable();
      failure_ = ServerFailure{std::string(http::to_string(method)) + " " + target + ": " +
                               (unreachable ? unreachable->detail : answer.ec.message())};
      co_return std::nullopt;
    }
    co_return std::move(answer.response);
  }

  void Record(std::string_view name, bool holds, std::string detail, bool required = true) {
    results_->push_back({std::string(name), holds, required, std::move(detail)});
  }

  asio::awaitable<std::optional<ServerFailure>> SetUp() {
    // Its answer does not matter (405: it exists, from an earlier run or another gateway; a
    // racing MKCOL may fail): the run's own MKCOL below needs it to exist.
    if (!co_await Ask(http::verb::mkcol, collection_, {})) co_return failure_;
    auto run = co_await Ask(http::verb::mkcol, run_, {});
    if (!run) co_return failure_;
    if (run->result_int() != 201) co_return ServerFailure{Answered("MKCOL " + run_, *run)};
    run_created_ = true;
    auto put = co_await Ask(http::verb::put, resource_, "fencegate condition probe\n");
    if (!put) co_return failure_;
    if (!ProbeSucceeded(put->result_int())) {
      co_return ServerFailure{Answered("PUT " + resource_, *put)};
    }
    co_return std::nullopt;
  }

  asio::awaitable<std::optional<ServerFailure>> Probes() {
    if (!co_await UnlockedConditions()) co_return failure_;
    auto lock =
        co_await Ask(http::verb::lock, resource_, LockRequestBody(), "Timeout", "Second-60");
    if (!lock) co_return failure_;
    lock_token_ = LockTokenOf(*lock);
    if (!lock_token_) {
      const std::string detail = Answered("LOCK", *lock) + " without a lock token";
      for (std::string_view name : kLockedProbes) Record(name, false, detail);
    } else if (!co_await LockedConditions()) {
      co_return failure_;
    }
    if (!co_await CollectionLock()) co_return failure_;
    co_return std::nullopt;
  }

  // The conditions a PUT carries on a resource nobody locked.
  asio::awaitable<bool> UnlockedConditions() {
    auto if_match = co_await Ask(http::verb::put, resource_, "if-match\n", "If-Match",
                                 "\"fencegate-probe-wrong-etag\"");
    if (!if_match) co_return false;
    Record(probe_names::kIfMatch, if_match->result_int() == 412, Answered("PUT", *if_match), false);
    auto if_none_match =
        co_await Ask(http::verb::put, resource_, "if-none-match\n", "If-None-Match", "*");
    if (!if_none_match) co_return false;
    Record(probe_names::kIfNoneMatch, if_none_match->result_int() == 412,
           Answered("PUT", *if_none_match), false);
    auto state_token = co_await Ask(http::verb::put, resource_, "if-state-token\n", "If",
                                    "(" + std::string(kForeignLockToken) + ")");
    if (!state_token) co_return false;
    Record(probe_names::kIfStateToken, state_token->result_int() == 412,
           Answered("PUT with an If header naming a lock token the resource does not have",
                    *state_token));
    co_return true;
  }

  asio::awaitable<bool> LockedConditions() {
    auto second =
        co_await Ask(http::verb::lock, resource_, LockRequestBody(), "Timeout", "Second-60");
    if (!second) co_return false;
    if (auto granted = LockTokenOf(*second)) extra_lock_tokens_.push_back(*granted);
    Record(probe_names::kLockExclusive, RefusedAsLocked(*second),
           Answered("a second exclusive LOCK", *second));
    auto unlocked = co_await Ask(http::verb::put, resource_, "no-lock-token\n");
    if (!unlocked) co_return false;
    Record(probe_names::kWriteWithoutLockToken, RefusedAsLocked(*unlocked),
           Answered("PUT without the lock token", *unlocked));
    const std::string if_locked = "(" + *lock_token_ + ")";
    auto proppatch =
        co_await Ask(http::verb::proppatch, resource_,
                     ProppatchTokenBody(kProbeTokenValue, kProbeTokenProperty), "If", if_locked);
    if (!proppatch) co_return false;
    if (proppatch->result_int() != 207 ||
        !ProppatchSucceeded(proppatch->body(), kProbeTokenProperty)) {
      Record(probe_names::kDeadProperty, false, Answered("PROPPATCH", *proppatch));
    } else {
      auto propfind = co_await Ask(http::verb::propfind, resource_,
                                   PropfindTokenBody(kProbeTokenProperty), "Depth", "0");
      if (!propfind) co_return false;
      const StoredToken stored = propfind->result_int() == 207
                                     ? ParseStoredToken(propfind->body(), kProbeTokenProperty)
                                     : StoredToken{StoredToken::Kind::kUnreadable};
      const bool read_back =
          stored.kind == StoredToken::Kind::kValue && stored.value == kProbeTokenValue;
      Record(probe_names::kDeadProperty, read_back,
             read_back ? Answered("PROPFIND", *propfind)
                       : Answered("PROPFIND", *propfind) + " without the value PROPPATCH set");
    }
    auto with_token =
        co_await Ask(http::verb::put, resource_, "with-lock-token\n", "If", if_locked);
    if (!with_token) co_return false;
    Record(probe_names::kWriteWithLockToken, ProbeSucceeded(with_token->result_int()),
           Answered("PUT with the lock token", *with_token));
    co_return true;
  }

  asio::awaitable<bool> CollectionLock() {
    auto lock = co_await Ask(http::verb::lock, run_, LockRequestBody(), "Timeout", "Second-60",
                             "Depth", "0");
    if (!lock) co_return false;
    collection_lock_token_ = LockTokenOf(*lock);
    if (!collection_lock_token_) {
      Record(probe_names::kCollectionLock, false,
             Answered("a depth-0 LOCK of the collection (a member locked)", *lock) +
                 " without a lock token");
      co_return true;
    }
    auto member = co_await Ask(http::verb::put, fresh_member_, "new member\n");
    if (!member) co_return false;
    Record(probe_names::kCollectionLock, RefusedAsLocked(*member),
           Answered("PUT of a new member without the collection's lock token", *member));
    co_return true;
  }

  static std::optional<std::string> LockTokenOf(const Response& response) {
    if (response.result_int() != 200 && response.result_int() != 201) return std::nullopt;
    const auto header = response.find("Lock-Token");
    return header == response.end() ? ParseLockDiscoveryToken(response.body())
                                    : ParseLockTokenHeader(header->value());
  }

  // Best effort, on a connection that still works: the locks lapse with their Timeout anyway.
  asio::awaitable<void> CleanUp() {
    if (failure_) co_return;
    std::vector<std::pair<std::string, std::string>> locks;
    if (lock_token_) locks.emplace_back(resource_, *lock_token_);
    for (const std::string& token : extra_lock_tokens_) locks.emplace_back(resource_, token);
    if (collection_lock_token_) locks.emplace_back(run_, *collection_lock_token_);
    for (auto& [path, token] : locks) {
      if (!co_await Ask(http::verb::unlock, path, {}, "Lock-Token", token)) co_return;
    }
    if (run_created_) co_await Ask(http::verb::delete_, run_, {});
  }

  std::shared_ptr<DavConnection> connection_;
  const std::string collection_;
  const std::string run_;
  const std::string resource_;
  const std::string fresh_member_;
  std::vector<ConditionProbeResult>* results_ = nullptr;
  std::optional<ServerFailure> failure_;
  bool run_created_ = false;
  std::optional<std::string> lock_token_;
  std::optional<std::string> collection_lock_token_;
  std::vector<std::string> extra_lock_tokens_;
};

// A probe holds when it held on every server that was probed; the detail names the server
// where it did not.
void MergeServerResults(std::vector<ConditionProbeResult>& merged,
                        std::vector<ConditionProbeResult> server, const std::string& url,
                        bool several_servers) {
  for (ConditionProbeResult& result : server) {
    if (several_servers) {
      result.detail = url + ": " + result.detail;
      if (!result.earlier_failure.empty()) result.earlier_failure.insert(0, url + ": ");
    }
    auto same = std::find_if(merged.begin(), merged.end(),
                             [&](const ConditionProbeResult& r) { return r.name == result.name; });
    if (same == merged.end()) {
      merged.push_back(std::move(result));
    } else if (same->holds && !result.holds) {
      *same = std::move(result);
    } else if (same->holds && same->earlier_failure.empty()) {
      same->earlier_failure = std::move(result.earlier_failure);
    }
  }
}

// A backend that ignores a condition does so on every run; one that enforces it can still fail
// a run when it loses state under concurrent requests (Apache mod_dav_fs drops lock entries of
// other resources now and then, docs/BACKEND_TRUST.md). A run with a failed required probe is
// therefore repeated, up to kRunsPerServer runs in all, and the verdict comes from the first
// run where every required probe held, or from the last run.
constexpr int kRunsPerServer = 3;

// Keeps, on the results of the run the verdict comes from, what failed on the runs before.
void NoteEarlierFailures(std::vector<ConditionProbeResult>& results,
                         const std::vector<ConditionProbeResult>& earlier) {
  for (const ConditionProbeResult& failed : earlier) {
    if (failed.holds) continue;
    auto same = std::find_if(results.begin(), results.end(),
                             [&](const ConditionProbeResult& r) { return r.name == failed.name; });
    if (same != results.end() && same->holds && same->earlier_failure.empty()) {
      same->earlier_failure = failed.detail;
    }
  }
}

// One server's results: its runs until every required probe held (see kRunsPerServer).
asio::awaitable<std::optional<ServerFailure>> ProbeServer(
    std::shared_ptr<DavConnection> connection, const std::string& collection,
    std::vector<ConditionProbeResult>* results) {
  std::vector<ConditionProbeResult> earlier;
  for (int run = 1;; ++run) {
    results->clear();
    ServerProbe probe(connection, collection);
    if (auto failure = co_await probe.Run(results)) co_return failure;
    NoteEarlierFailures(*results, earlier);
    if (run == kRunsPerServer ||
        ConditionReport::FromProbes(*results) != ConditionVerdict::kIgnored) {
      co_return std::nullopt;
    }
    earlier.insert(earlier.end(), results->begin(), results->end());
  }
}

asio::awaitable<ConditionReport> ProbeAllServers(asio::io_context& ioc,
                                                 std::shared_ptr<const WebdavBackend> backend) {
  ConditionReport report;
  const std::string collection = ProbeCollection(backend->options.conditions.prefix);
  auto pools =
      std::make_shared<ServerConnectionPools>(backend->servers, 1, backend->options.idle_timeout);
  const std::size_t servers = backend->servers->size();
  std::vector<std::string> failures;
  bool any_probed = false;
  for (std::size_t server = 0; server < servers; ++server) {
    auto connection = std::make_shared<DavConnection>(ioc, backend, pools, server);
    std::vector<ConditionProbeResult> results;
    const std::string url = backend->servers->address(server).url;
    if (auto failure = co_await ProbeServer(connection, collection, &results)) {
      failures.push_back(url + ": " + failure->error);
    } else {
      any_probed = true;
      MergeServerResults(report.probes, std::move(results), url, servers > 1);
    }
    connection->Close();
  }
  if (!any_probed) {
    report.verdict = ConditionVerdict::kUnreachable;
    report.probes.clear();
  } else {
    report.verdict = ConditionReport::FromProbes(report.probes);
  }
  for (const std::string& failure : failures) {
    if (!report.error.empty()) report.error += "; ";
    report.error += failure;
  }
  co_return report;
}

}  // namespace

std::string ProbeCollection(std::string_view prefix) {
  std::string path(prefix);
  if (path.empty() || path.front() != '/') path.insert(path.begin(), '/');
  if (path.back() != '/') path += '/';
  return path;
}

void ProbeWebdavConditions(asio::io_context& ioc, std::shared_ptr<const WebdavBackend> backend,
                           std::function<void(ConditionReport)> done) {
  asio::co_spawn(ioc, ProbeAllServers(ioc, std::move(backend)),
                 [done = std::move(done)](std::exception_ptr failure, ConditionReport report) {
                   if (failure) {
                     report = ConditionReport{};
                     report.verdict = ConditionVerdict::kUnreachable;
                     // Only an allocation failure or the like: the steps report errors as values.
                     report.error = "the probe stopped on an exception";
                   }
                   report.checked_unix_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                                                std::chrono::system_clock::now().time_since_epoch())
                                                .count();
                   done(std::move(report));
                 });
}

}  // namespace fencegate::adapters::webdav
