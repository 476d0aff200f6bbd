#pragma once

#include <array>
#include <memory>
#include <mutex>
#include <string>

#include <prometheus/counter.h>
#include <prometheus/gauge.h>
#include <prometheus/registry.h>
#include <boost/asio/ssl/context.hpp>

#include "gateway/tls/handshake.h"
#include "gateway/tls/tls_settings.h"
#include "lockstore/status.h"

namespace fencegate::gateway::tls {

// The TLS state of one listener ("traffic" or "admin"): its current OpenSSL context, swapped
// whole on reload, and its counters. A plain listener has one too (disabled), which counts
// TLS handshakes that arrive on it.
//
// Reload builds a new context from the files; accepted connections keep a shared_ptr to the
// context they started with, so in-flight connections finish on the old one and only new
// connections use the new one. A reload that fails keeps the current context (and the expiry
// gauge keeps saying when that one's certificate ends).
class ListenerTls {
 public:
  ListenerTls(std::string listener, ServerTlsSettings settings, prometheus::Registry& registry);

  bool enabled() const { return settings_.enabled; }
  const ServerTlsSettings& settings() const { return settings_; }

  // The first load, at start-up. On failure a status naming the file and reason.
  lockstore::Status Load();
  // Re-reads the files (SIGHUP). Logs the outcome (event log) and counts it; false on failure.
  bool Reload();

  // The context for a connection accepted now; null when the listener is plain. Thread-safe.
  std::shared_ptr<boost::asio::ssl::context> Current() const;

  void CountHandshake(HandshakeResult result) const {
    handshakes_[static_cast<std::size_t>(result)]->Increment();
  }
  void CountTlsOnPlainPort() const { tls_on_plain_port_->Increment(); }

 private:
  const std::string listener_;
  const ServerTlsSettings settings_;
  mutable std::mutex mutex_;
  std::shared_ptr<boost::asio::ssl::context> current_;  // guarded by mutex_
  std::array<prometheus::Counter*, kHandshakeResultCount> handshakes_{};
  prometheus::Counter* tls_on_plain_port_ = nullptr;
  prometheus::Counter* reloads_ok_ = nullptr;
  prometheus::Counter* reloads_failed_ = nullptr;
  // fencegate_tls_certificate_expiry_timestamp_seconds: the loaded leaf's notAfter; null when
  // the listener is plain.
  prometheus::Gauge* certificate_expiry_ = nullptr;

  // Makes `context` the current one and publishes its certificate's expiry.
  void Install(std::shared_ptr<boost::asio::ssl::context> context);
};

}  // namespace fencegate::gateway::tls
