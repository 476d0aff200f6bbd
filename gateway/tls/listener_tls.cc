#include "gateway/tls/listener_tls.h"

#include <prometheus/family.h>

#include "base/log/event_log.h"
#include "gateway/tls/certificate_expiry.h"
#include "gateway/tls/server_context.h"

namespace fencegate::gateway::tls {

ListenerTls::ListenerTls(std::string listener, ServerTlsSettings settings,
                         prometheus::Registry& registry)
    : listener_(std::move(listener)), settings_(std::move(settings)) {
  // Families are shared by both listeners: Build returns the existing one for the same name.
  auto& handshakes = prometheus::BuildCounter()
                         .Name("fencegate_tls_handshakes_total")
                         .Help("TLS handshakes on a listener by result (ok or why they failed)")
                         .Register(registry);
  for (std::size_t i = 0; i < kHandshakeResultCount; ++i) {
    const auto result = static_cast<HandshakeResult>(i);
    handshakes_[i] = &handshakes.Add(
        {{"listener", listener_}, {"result", std::string(HandshakeResultName(result))}});
  }
  tls_on_plain_port_ = &prometheus::BuildCounter()
                            .Name("fencegate_tls_on_plain_port_total")
                            .Help("Connections that began a TLS handshake on a plain HTTP listener")
                            .Register(registry)
                            .Add({{"listener", listener_}});
  auto& reloads = prometheus::BuildCounter()
                      .Name("fencegate_tls_reloads_total")
                      .Help("Certificate reloads (SIGHUP) by result; a failed one keeps the old")
                      .Register(registry);
  reloads_ok_ = &reloads.Add({{"listener", listener_}, {"result", "ok"}});
  reloads_failed_ = &reloads.Add({{"listener", listener_}, {"result", "error"}});
  if (settings_.enabled) {
    certificate_expiry_ =
        &prometheus::BuildGauge()
             .Name("fencegate_tls_certificate_expiry_timestamp_seconds")
             .Help("When the listener's loaded certificate expires (its notAfter), Unix seconds")
             .Register(registry)
             .Add({{"listener", listener_}});
  }
}

lockstore::Status ListenerTls::Load() {
  if (!settings_.enabled) return lockstore::Status::Ok();
  std::string error;
  auto context = BuildServerContext(settings_, &error);
  if (!context) return lockstore::Status::InvalidArgument("tls." + listener_ + ": " + error);
  Install(std::move(context));
  return lockstore::Status::Ok();
}

bool ListenerTls::Reload() {
  if (!settings_.enabled) return true;
  std::string error;
  auto context = BuildServerContext(settings_, &error);
  if (!context) {
    reloads_failed_->Increment();
    log::Error("tls." + listener_ + ": certificate reload failed, keeping the current one",
               {{"listener", listener_}, {"error", error}});
    return false;
  }
  Install(std::move(context));
  reloads_ok_->Increment();
  log::Info("tls." + listener_ + ": certificate reloaded",
            {{"listener", listener_}, {"cert_file", settings_.cert_file}});
  return true;
}

void ListenerTls::Install(std::shared_ptr<boost::asio::ssl::context> context) {
  if (const std::optional<double> expiry = CertificateExpiry(*context)) {
    certificate_expiry_->Set(*expiry);
  }
  std::lock_guard lock(mutex_);
  current_ = std::move(context);
}

std::shared_ptr<boost::asio::ssl::context> ListenerTls::Current() const {
  std::lock_guard lock(mutex_);
  return current_;
}

}  // namespace fencegate::gateway::tls
