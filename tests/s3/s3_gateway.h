#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include <yaml-cpp/yaml.h>

#include "tests/s3/s3_requests.h"
#include "tests/support/gateway_instance.h"
#include "tests/support/temp_dir.h"

namespace fencegate::integration {

// A gateway with its own fence store in front of the shared radosgw (or of a relay to it, at
// `backend_port`), with `threads` network threads (two by default). Route "awscli" (bucket
// "awscli") is unfenced, for a client that cannot send Fencing-Token; every other bucket is fenced
// with one fence per object. `backend_options` are extra keys (a map) of the s3 backend;
// `endpoint`, when set, replaces http://127.0.0.1:PORT.
struct S3Gateway {
  TempDir dir;
  std::unique_ptr<GatewayInstance> instance;

  explicit S3Gateway(std::uint16_t backend_port = 0,
                     const YAML::Node& backend_options = YAML::Node(), int threads = 2,
                     std::string endpoint = "");
  std::uint16_t port() const { return instance->traffic_port(); }
};

}  // namespace fencegate::integration
