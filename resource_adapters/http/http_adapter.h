#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>

#include "resource_adapters/adapter.h"
#include "base/tls_client/client_tls.h"

namespace fencegate::adapters {

class RelayBudget;

struct HttpAdapterOptions {
  // Backend address; `tls` for an https:// url.
  std::string host = "127.0.0.1";
  std::uint16_t port = 80;
  bool tls = false;
  tls_client::ClientTlsOptions tls_options;  // when `tls`; server_name empty: `host`
  // Value for the Host header sent upstream; empty = pass the client's Host on unchanged.
  std::string host_header;
  // Idle keep-alive connections kept per network thread; more are closed after use.
  std::size_t max_idle_connections = 64;
  std::chrono::milliseconds connect_timeout{5000};
  // Time allowed for the backend to send the response header once the request is sent, and
  // for each read/write on the upstream connection (an idle timeout, not a total).
  std::chrono::milliseconds response_timeout{60000};
  // An idle pooled connection older than this is closed instead of reused.
  std::chrono::milliseconds idle_timeout{30000};
  // For backends that check tokens themselves: the admitted token is sent in this header
  // (e.g. "Fencing-Token"). Empty: the client's Fencing-Token field is removed upstream.
  std::string forward_token_header;
  // Size of each relay buffer for streamed bodies (a request body uses two, so that reading
  // from the client and writing to the backend overlap). Each piece costs a read, a write and
  // a wake-up; 64 KiB pieces held a 1 GiB upload to half the direct rate here, 256 KiB ones
  // reach it.
  std::size_t buffer_bytes = 256 * 1024;
  // The relay buffer memory all request bodies share (limits.relay_buffer_memory): each body
  // reserves its buffers there first and is refused with 503 when the limit is reached. Null:
  // no limit.
  std::shared_ptr<RelayBudget> relay_budget;
};

// Null with `error` set when the TLS files of an https backend do not load.
std::unique_ptr<AdapterFactory> MakeHttpAdapterFactory(HttpAdapterOptions options,
                                                       std::string* error = nullptr);

}  // namespace fencegate::adapters
