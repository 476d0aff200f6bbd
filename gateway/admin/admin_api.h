#pragma once

#include <boost/beast/http/message.hpp>
#include <boost/beast/http/string_body.hpp>

#include <functional>

#include <boost/asio/any_io_executor.hpp>

#include "gateway/admin/admin_backends.h"
#include "gateway/admin/admin_console.h"
#include "gateway/admin/admin_reload.h"
#include "gateway/server/gateway_context.h"
#include "gateway/tls/peer_identity.h"

namespace fencegate::gateway {

struct ConfigGeneration;

// The operator API behind the admin listener:
//   GET /metrics                  Prometheus text format
//   GET /healthz                  the process is up
//   GET /readyz                   200 while the store is ready and listeners accept (and each
//                                 route marked `required` has a usable server), else 503
//   GET /admin/backends[?backend=NAME] every backend and server, their health and counters
//                                 (gateway/admin/admin_backends.h)
//   GET /admin/fences?prefix&after&limit  stored fences in key order, by page
//                                 (gateway/admin/admin_fences.h)
//   GET /admin/fences/{key}       one fence key (percent-encoded in the path) and its history
//   GET /admin/rejections?route&reason&fence_key&principal&client&since&after&limit
//                                 refused writes, newest first (gateway/admin/admin_rejections.h)
//   GET /admin/summary            the console's overview (gateway/admin/admin_summary.h)
// A list endpoint refuses an unknown or repeated query parameter with 400 (AdminQuery).
//   POST /admin/fences/{key}/repair, GET /admin/fence-repairs: audited fence repair
//                                 (gateway/admin/admin_fence_repair.h)
//   /admin/locks, /admin/locks/{name}[/force-release], /admin/lock-audit: the built-in locks
//                                 (gateway/admin/admin_lock_api.h)
//   POST /admin/reload            re-reads the configuration file (gateway/admin/admin_reload.h)
//   GET /admin/events             server-sent events of rejections and lock grants
//                                 (gateway/admin/admin_events.h)
//   /, /ui/...                    the browser console (gateway/admin/admin_console.h)
// Runs on the admin thread: it may block on the store, which network threads never do.
// The prefix of GET /admin/fences/{key} and POST /admin/fences/{key}/repair.
inline constexpr std::string_view kAdminFencesPrefix = "/admin/fences/";

class AdminApi {
 public:
  using Request = boost::beast::http::request<boost::beast::http::string_body>;
  using Response = boost::beast::http::response<boost::beast::http::string_body>;

  explicit AdminApi(const GatewayContext& context) : context_(context) {}

  // Where POST /admin/reload goes, and the admin thread's executor its answer comes back on.
  void SetReloader(AdminReloader reloader, boost::asio::any_io_executor admin_executor) {
    reloader_ = std::move(reloader);
    admin_executor_ = std::move(admin_executor);
  }

  // The admin listener speaks TLS: the console's cookie gets the Secure attribute.
  void SetSecureCookies(bool secure) { console_.SetSecureCookies(secure); }

  // Fills `response` (status, Content-Type, body) for `request` and returns true; `peer` is the
  // client certificate of a TLS connection (empty on plain ones), an admin credential like a
  // key. Returns false when the answer comes later (POST /admin/reload): `answered` is then
  // called on the admin thread once `response` is filled.
  bool Handle(const Request& request, const PeerIdentity& peer, Response* response,
              std::function<void()> answered);

 private:
  // What /readyz looks at, as it stands now.
  struct Readiness {
    bool store_ready = false;
    bool accepting = false;
    bool draining = false;
    bool lease_valid = false;
    bool routes_required = false;
    std::vector<std::string> routes_without_server;  // of the `required` routes
    std::vector<UnenforcedConditions> conditions_not_enforced;
    bool ready() const {
      return store_ready && accepting && !draining && lease_valid &&
             routes_without_server.empty() && conditions_not_enforced.empty();
    }
  };
  Readiness CurrentReadiness(const ConfigGeneration& generation) const;

  void Metrics(const ConfigGeneration& generation, Response* response);
  void Ready(const ConfigGeneration& generation, Response* response);
  void Backends(const ConfigGeneration& generation, std::string_view query, std::string_view path,
                Response* response);
  void Fence(std::string_view encoded_key, std::string_view path, Response* response);

  void Events(const Request& request, std::string_view path, Response* response);

  const GatewayContext& context_;
  AdminConsole console_;
  AdminReloader reloader_;
  boost::asio::any_io_executor admin_executor_;
};

}  // namespace fencegate::gateway
