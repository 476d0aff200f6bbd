#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "resource_adapters/transport/upstream_options.h"

namespace fencegate::adapters {

class RelayBudget;

// The http backend kind: a plain reverse proxy to one HTTP/1.1 server (the connection settings
// are UpstreamOptions').
struct HttpAdapterOptions : UpstreamOptions {
  // Value for the Host header sent upstream; empty = pass the client's Host on unchanged.
  std::string host_header;
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

}  // namespace fencegate::adapters
