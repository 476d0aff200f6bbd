#pragma once

#include <chrono>
#include <string>

#include "resource_adapters/transport/condition_probe_options.h"
#include "resource_adapters/transport/upstream_options.h"

namespace fencegate::adapters {

// The webdav backend kind's lock sequence. Its connections (LOCK, PROPFIND, PROPPATCH, UNLOCK)
// go to the WebDAV server the passthrough factory forwards to, with the same connection
// settings (UpstreamOptions: response_timeout is the time allowed for each of the adapter's own
// requests to be answered; max_idle_connections and idle_timeout are per network thread, kept
// open between fenced writes).
struct WebdavAdapterOptions : UpstreamOptions {
  // Host header for the adapter's own LOCK/PROPFIND/PROPPATCH/UNLOCK requests; empty:
  // "host:port".
  std::string host_header;
  // The lock lifetime asked for (Timeout: Second-N, rounded up to whole seconds). Short, so a
  // gateway that dies while holding a lock blocks that resource only this long.
  std::chrono::milliseconds lock_timeout{10000};
  // LOCK attempts while another holder (another gateway) has the resource locked (423), and
  // the pause between them; then the write fails with 503.
  unsigned lock_attempts = 100;
  std::chrono::milliseconds lock_retry_delay{10};
  // Whether the server honours what the lock sequence relies on (docs/BACKEND_TRUST.md).
  ConditionProbeOptions conditions;
};

}  // namespace fencegate::adapters
