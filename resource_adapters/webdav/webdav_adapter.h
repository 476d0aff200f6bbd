#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "resource_adapters/adapter.h"
#include "base/tls_client/client_tls.h"

namespace fencegate::adapters {

struct WebdavAdapterOptions {
  // The WebDAV server (HTTP/1.1, over TLS when `tls`), the same one the passthrough factory
  // forwards to.
  std::string host = "127.0.0.1";
  std::uint16_t port = 80;
  bool tls = false;
  tls_client::ClientTlsOptions tls_options;  // when `tls`; server_name empty: `host`
  // Host header for the adapter's own LOCK/PROPFIND/PROPPATCH/UNLOCK requests; empty:
  // "host:port".
  std::string host_header;
  std::chrono::milliseconds connect_timeout{5000};
  // Time allowed for each of the adapter's own requests to be answered.
  std::chrono::milliseconds response_timeout{60000};
  // The lock lifetime asked for (Timeout: Second-N, rounded up to whole seconds). Short, so a
  // gateway that dies while holding a lock blocks that resource only this long.
  std::chrono::milliseconds lock_timeout{10000};
  // LOCK attempts while another holder (another gateway) has the resource locked (423), and
  // the pause between them; then the write fails with 503.
  unsigned lock_attempts = 100;
  std::chrono::milliseconds lock_retry_delay{10};
  // The adapter's own connections (LOCK, PROPFIND, PROPPATCH, UNLOCK) kept open between fenced
  // writes, per network thread (the http backend keys of the same names), and how long one may
  // stay idle before it is closed instead of reused.
  std::size_t max_idle_connections = 64;
  std::chrono::milliseconds idle_timeout{30000};
};

// Fenced writes (PUT, DELETE, MOVE, COPY, MKCOL that carry an admitted token) take an exclusive
// WebDAV LOCK on every resource they change, read the token stored with each (a dead property,
// kTokenProperty in kTokenNamespace), refuse the write when a stored token is higher (409
// stale-token-at-backend), do the same with the member token kept on the parent collection
// (under a depth-0 LOCK of it) when they create, remove or replace a member, so that a token
// outlives DELETE and MOVE, store the new token (PROPPATCH), send the write itself with the
// lock tokens in the If header, and UNLOCK, on every path. The write itself, and every other
// request, goes through `passthrough` (an HTTP adapter factory for the same server), which
// streams bodies both ways. LOCK, UNLOCK and PROPPATCH from clients are refused (405): the
// gateway owns the locks and the token property.
// Null with `error` set when the TLS files of an https server do not load.
std::unique_ptr<AdapterFactory> MakeWebdavAdapterFactory(
    WebdavAdapterOptions options, std::unique_ptr<AdapterFactory> passthrough,
    std::string* error = nullptr);

}  // namespace fencegate::adapters
